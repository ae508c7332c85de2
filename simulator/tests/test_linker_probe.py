"""linker_probe.py: links use gold where it links and runs a threaded program, else the default
linker, and a link that fails with gold is done again with the default one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from simulator import linker_probe
from simulator.errors import SimBuildError

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to link")
needs_gold = pytest.mark.skipif(
    shutil.which("g++") is None or shutil.which("ld.gold") is None, reason="needs g++ and ld.gold (binutils)"
)


@pytest.fixture(autouse=True)
def own_cache(monkeypatch, tmp_path):
    """A build cache of the test's own, and the per-process answers forgotten before and after."""
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    answers = linker_probe.fast_linker_flags  # the cached function itself, whatever a test replaces
    answers.cache_clear()
    yield
    answers.cache_clear()


def _source(folder: Path, text: str) -> str:
    path = folder / "main.cpp"
    path.write_text(text)
    return str(path)


@needs_gold
def test_gold_is_chosen_where_it_links_and_the_answer_is_kept(tmp_path):
    assert linker_probe.fast_linker_flags("g++") == (linker_probe.GOLD,)
    records = list((tmp_path / "cache").glob("linker-*.txt"))
    assert [r.read_text() for r in records] == [linker_probe.GOLD]


@needs_gxx
def test_a_compiler_that_cannot_link_with_gold_links_with_its_default(tmp_path):
    cxx = tmp_path / "cxx"
    cxx.write_text('#!/bin/sh\nfor a; do [ "$a" = -fuse-ld=gold ] && exit 1; done\nexec g++ "$@"\n')
    cxx.chmod(0o755)
    assert linker_probe.fast_linker_flags(str(cxx)) == ()


@needs_gxx
def test_a_link_that_fails_with_the_fast_linker_is_done_again_with_the_default(monkeypatch, tmp_path):
    monkeypatch.setattr(linker_probe, "fast_linker_flags", lambda _cxx: ("-fuse-ld=no-such-linker",))
    tried: list[list[str]] = []
    real = linker_probe.compiles

    def recording(args, what):
        tried.append(list(args))
        return real(args, what)

    monkeypatch.setattr(linker_probe, "compiles", recording)
    program = tmp_path / "prog"
    source = _source(tmp_path, "int main() { return 7; }\n")
    linker_probe.link_step(["g++", source, "-o", str(program)], "a test program")
    assert [a[1] for a in tried] == ["-fuse-ld=no-such-linker"]
    assert subprocess.run([str(program)], check=False).returncode == 7


@needs_gold
def test_a_failed_link_says_why_in_the_default_linkers_words(tmp_path):
    source = _source(tmp_path, "int missing_function();\nint main() { return missing_function(); }\n")
    with pytest.raises(SimBuildError) as caught:
        linker_probe.link_step(["g++", source, "-o", str(tmp_path / "prog")], "a test program")
    message = str(caught.value)
    assert "a test program" in message and "missing_function" in message
    assert "ld.gold" not in message
