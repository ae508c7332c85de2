"""compiler_probe.py: a compiler's answers are kept in the cache, asked again when it changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from simulator import compiler_probe
from simulator.compiler_run import invoke


@pytest.fixture
def asked(monkeypatch, tmp_path) -> list[list[str]]:
    """The compiler runs probe starts (each still runs), in a cache of the test's own (whose first
    compiler run builds the supervisor, which asks g++ its --version through probe too)."""
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    runs: list[list[str]] = []

    def counting(args, what):
        runs.append(list(args))
        return invoke(args, what)

    monkeypatch.setattr(compiler_probe, "invoke", counting)
    return runs


def _fake_compiler(path: Path, answer: str, status: int = 0) -> str:
    path.write_text(f"#!/bin/sh\necho '{answer}'\nexit {status}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to ask")
def test_a_second_question_is_answered_from_the_cache_as_the_compiler_answered(asked):
    direct = invoke(["g++", "-print-file-name=libc.so.6"], "a search")
    first = compiler_probe.probe(["g++", "-print-file-name=libc.so.6"], "a search")
    second = compiler_probe.probe(["g++", "-print-file-name=libc.so.6"], "a search")
    assert first == second == direct
    assert asked.count(["g++", "-print-file-name=libc.so.6"]) == 1


def test_a_changed_compiler_is_asked_again(asked, tmp_path):
    cxx = _fake_compiler(tmp_path / "cxx", "version one")
    assert compiler_probe.probe([cxx, "--version"], "--version").stdout == "version one\n"
    _fake_compiler(tmp_path / "cxx", "version two, longer")
    os.utime(cxx, ns=(1, 1))
    assert compiler_probe.probe([cxx, "--version"], "--version").stdout == "version two, longer\n"
    assert [a[0] for a in asked].count(cxx) == 2


def test_a_failed_answer_is_returned_and_not_kept(asked, tmp_path):
    cxx = _fake_compiler(tmp_path / "cxx", "broken", status=3)
    for _ in range(2):
        run = compiler_probe.probe([cxx, "--version"], "--version")
        assert (run.returncode, run.stdout) == (3, "broken\n")
    assert [a[0] for a in asked].count(cxx) == 2
    assert not list((tmp_path / "cache").glob("probe-*.json"))


def test_a_cpu_bound_answer_is_kept_per_cpu(asked, tmp_path, monkeypatch):
    cxx = _fake_compiler(tmp_path / "cxx", "macros")
    for cpu in ("flags: avx2", "flags: avx2", "flags: avx512f"):
        monkeypatch.setattr(compiler_probe, "_cpu_identity", lambda cpu=cpu: cpu)
        assert compiler_probe.probe([cxx, "-march=native"], "a probe", cpu_bound=True).stdout == "macros\n"
    assert [a[0] for a in asked].count(cxx) == 2


def test_a_variable_that_steers_the_search_keys_the_answer(asked, tmp_path, monkeypatch):
    cxx = _fake_compiler(tmp_path / "cxx", "/lib/libc.so.6")
    compiler_probe.probe([cxx, "-print-file-name=libc.so.6"], "a search")
    monkeypatch.setenv("LIBRARY_PATH", str(tmp_path))
    compiler_probe.probe([cxx, "-print-file-name=libc.so.6"], "a search")
    assert [a[0] for a in asked].count(cxx) == 2
