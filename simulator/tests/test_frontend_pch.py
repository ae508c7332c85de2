"""libclang's precompiled prelude (syntax_pch.py): the same translation, offsets and refusals as the
parse of the whole text, and the whole parse wherever the precompiled header cannot be used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from simulator import modes, source_compile, syntax, syntax_pch, toolchain
from simulator.build import DEFAULT_ARCH, compiler, translate_source
from simulator.errors import SimBuildError

TESTS = Path(__file__).resolve().parent
FRONTEND = TESTS / "frontend"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SIMULATOR_CACHE", str(folder))
    return folder


def _preprocessed(src: Path, mode: str = "fast") -> tuple[str, str | None]:
    cxx = compiler()
    flags = toolchain.common_flags(cxx) + modes.BUILD_NAMED[mode].kernel_flags
    flags += ["-I", str(src.parent), *toolchain.toolkit_flags()]
    return source_compile.preprocess(cxx, str(src), flags, DEFAULT_ARCH, str(src))


def _unit(text: str, enabled: bool, monkeypatch) -> syntax.TranslationUnit:
    monkeypatch.setattr(syntax_pch, "ENABLED", enabled)
    return syntax.TranslationUnit(text, lambda _path: True)


def _translation(src: Path, mode: str, enabled: bool, monkeypatch) -> str:
    monkeypatch.setattr(syntax_pch, "ENABLED", enabled)
    try:
        return translate_source(src, mode)
    except SimBuildError as exc:
        return f"refused: {exc}"


@pytest.mark.parametrize(
    ("name", "mode"), [("arch.cu", "fast"), ("nvcc_rules.cu", "memcheck"), ("launches.cu", "racecheck")]
)
def test_translation_is_the_whole_parse_s(cache, monkeypatch, name, mode):
    """Host and device passes (arch.cu and nvcc_rules.cu test __CUDA_ARCH__) translate alike."""
    src = FRONTEND / name
    whole = _translation(src, mode, False, monkeypatch)
    assert not list(cache.glob("frontend-prelude-*.pch"))
    assert _translation(src, mode, True, monkeypatch) == whole
    assert list(cache.glob("frontend-prelude-*.pch")), "no precompiled prelude was written"
    assert _translation(src, mode, True, monkeypatch) == whole  # now loaded from the cache


def test_offsets_and_diagnostics_map_back(cache, monkeypatch, tmp_path):
    """Every declaration (the prelude's, from the header, and the program's) and every error has the
    offset in the preprocessed text that the whole parse gives it."""
    src = tmp_path / "prog.cu"
    src.write_text(
        "#include <cstdio>\n"
        "__global__ void k(float* a) { a[threadIdx.x] = sqrtf(a[0]); }\n"
        'int main() { k<<<1, 1>>>(nullptr); undeclared_name(); printf("%d\\n", 1); }\n'
    )
    host, _ = _preprocessed(src)
    whole = _unit(host, False, monkeypatch)
    loaded = _unit(host, True, monkeypatch)
    assert whole.src.header_end == -1 and loaded.src.header_end > 0

    def declarations(unit):
        return [(c.kind.name, c.spelling, *unit.rng(c)) for c in unit.tu.cursor.get_children()]

    def errors(unit):
        found = [(d.spelling, unit.src.pre(d.location.offset)) for d in unit.tu.diagnostics]
        return [e for e, d in zip(found, unit.tu.diagnostics) if d.severity >= 3 and unit.src.is_user(e[1])]

    got, want = declarations(loaded), declarations(whole)
    assert len(want) > 1000 and got == want
    assert any(e[0].startswith("use of undeclared identifier 'undeclared_name'") for e in errors(whole))
    assert errors(loaded) == errors(whole)
    assert loaded.render() == whole.render()


def test_a_changed_header_text_is_parsed_whole(cache, monkeypatch):
    """libclang refuses a precompiled header whose text changed since: the whole text is parsed,
    and the next parse builds the header again."""
    host, _ = _preprocessed(FRONTEND / "launches.cu")
    first = _unit(host, True, monkeypatch)
    assert first.src.header_end > 0
    (header,) = cache.glob("frontend-prelude-*.cuh")
    text = header.read_bytes()
    header.chmod(0o600)
    header.write_bytes(text.replace(b"struct dim3;", b"struct dim4;", 1))
    os.utime(header, (1, 1))
    again = _unit(host, True, monkeypatch)
    assert again.src.header_end == -1
    assert again.render() == first.render()
    third = _unit(host, True, monkeypatch)  # the refused header was built again
    assert third.src.header_end > 0 and third.render() == first.render()


def test_without_a_cache_the_whole_text_is_parsed(tmp_path, monkeypatch):
    """A cache the build could not use (a file) leaves the parse to read the whole text."""
    host, _ = _preprocessed(FRONTEND / "launches.cu")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("SIMULATOR_CACHE", str(blocker))
    unit = _unit(host, True, monkeypatch)
    assert unit.src.header_end == -1 and unit.launches


def test_no_prelude_no_cut():
    """A text without the runtime header (a test's own) is parsed whole."""
    text = '# 0 "/nowhere/prog.cu"\nint main() { return 0; }\n'
    unit = syntax.TranslationUnit(text, lambda _path: True)
    assert unit.src.header_end == -1
    assert syntax_pch.layout(unit.src.parse_text, text, unit.src.inserted) is None
