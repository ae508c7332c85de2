"""The runtime's mode-free part (runtime_build.py, runtime/mode_free.h): which sources are compiled
once for several modes, that such a unit refuses a source whose text depends on the mode, and that
the builds whose runtime flags differ only in the mode's macro share one object."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from simulator import build, build_cache, modes, runtime_build
from simulator.compiler_run import compiler_command

RUNTIME = build.RUNTIME_DIR
MODE_MACROS = {b.macro for b in modes.BUILDS if b.macro}
needs_cxx = pytest.mark.skipif(
    shutil.which("g++") is None and shutil.which("c++") is None, reason="needs a C++ compiler"
)


def _poisoned() -> set[str]:
    text = (RUNTIME / "mode_free.h").read_text()
    return {name for line in re.findall(r"#pragma GCC poison (.*)", text) for name in line.split()}


def _derived_macros() -> set[str]:
    """The macros a runtime header defines under a condition that tests a mode macro (or one of these)."""
    derived: set[str] = set()
    for header in sorted(RUNTIME.glob("*.h")):
        stack: list[bool] = []
        for line in header.read_text().splitlines():
            word = line.lstrip()
            if re.match(r"#\s*if", word):
                stack.append(any(re.search(rf"\b{m}\b", word) for m in MODE_MACROS | derived))
            elif re.match(r"#\s*endif", word) and stack:
                stack.pop()
            elif (m := re.match(r"#\s*define\s+(\w+)", word)) and any(stack):
                derived.add(m.group(1))
    return derived


def _sources() -> list[Path]:
    return sorted(RUNTIME.glob("*.cpp")) + sorted(RUNTIME.glob("libs/*.cpp"))


def test_mode_free_units_poison_every_mode_macro_and_those_defined_from_one():
    derived = _derived_macros()
    assert {"SIM_LOOP_FAULTS", "SIM_LOOPS_AS_FIBERS"} <= derived, "the scan no longer reads block_loops.h"
    missing = (MODE_MACROS | derived) - _poisoned()
    assert not missing, f"mode_free.h must poison {sorted(missing)}"


def test_a_source_that_tests_the_mode_is_marked_per_mode():
    """The compile refuses an unmarked one too; this names it without a compiler."""
    names = MODE_MACROS | _derived_macros()
    for src in _sources():
        text = src.read_text()
        tests = any(re.search(rf"\b{n}\b", text) for n in names) or '#include "mode_hooks.h"' in text
        if tests:
            assert runtime_build.per_mode(src), (
                f"{src.name} tests the mode: mark it {runtime_build.PER_MODE_MARK!r}"
            )
    marked = [src.name for src in _sources() if runtime_build.per_mode(src)]
    assert "scheduler.cpp" in marked and "errors.cpp" not in marked


@needs_cxx
@pytest.mark.parametrize(
    "body,error",
    [
        ("#if defined(SIM_MEMCHECK)\nint x;\n#endif\n", 'poisoned "SIM_MEMCHECK"'),
        ('#include "mode_hooks.h"\n', "poisoned"),
        ("namespace __sim { bool f() { return kSyncCheck; } }\n", "kSyncCheck"),
    ],
    ids=["a mode macro", "the mode's hooks", "a constant of the mode"],
)
def test_a_mode_free_unit_refuses_a_source_that_depends_on_the_mode(tmp_path, body, error):
    src = tmp_path / "probe.cpp"
    src.write_text('#include "sim_internal.h"\n' + body)
    unit = tmp_path / "unit.cpp"
    unit.write_text(runtime_build.unit_text([src], mode_free=True))
    cxx = build.compiler()
    proc = subprocess.run(
        [*compiler_command(cxx), *runtime_build.mode_free_flags(cxx, "fast"), "-fsyntax-only", str(unit)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0 and error in proc.stderr, proc.stderr[-3000:]


@needs_cxx
def test_builds_differing_only_in_the_macro_share_the_mode_free_flags():
    cxx = build.compiler()
    free = {name: runtime_build.mode_free_flags(cxx, name) for name in modes.BUILD_MODES}
    assert free["fast"] == free["synccheck"] == free["racecheck-shared"]
    assert free["memcheck"] == free["racecheck"] != free["fast"]
    for name, flags in free.items():
        mode_flags = runtime_build.runtime_flags(cxx, name)
        macro = modes.BUILD_NAMED[name].macro
        assert [f for f in mode_flags if f != f"-D{macro}"] == flags
        assert not any(f"-D{m}" in flags for m in MODE_MACROS)


@needs_cxx
def test_each_mode_links_its_own_part_with_the_one_shared_by_its_flags(tmp_path, monkeypatch):
    """Five runtimes from an empty cache compile the mode-free sources twice (once per set of
    flags) but for the cold ones (once for all), and the per-mode sources five times; each mode's
    object links the shared part, which links the cold one after its own units."""
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    compiled: list[tuple[str, bool]] = []
    links: list[list[str]] = []

    def fake(args: list[str], what: str) -> None:
        out = Path(args[args.index("-o") + 1])
        if "-r" in args:
            links.append(args)
        else:
            unit = Path(args[args.index("-c") + 1]).read_text()
            compiled.append((what, runtime_build._MODE_FREE_HEADER in unit))
        out.write_bytes(b"")

    monkeypatch.setattr(runtime_build, "compile_step", fake)
    objects = {name: runtime_build.runtime_object(name) for name in modes.BUILD_MODES}
    free_units = [what for what, free in compiled if free]
    own_units = [what for what, free in compiled if not free]
    jobs = runtime_build._build_jobs()
    per_mode = [src for src in RUNTIME.glob("*.cpp") if runtime_build.per_mode(src)]
    cold = [src for src in RUNTIME.glob("*.cpp") if runtime_build.cold(src)]
    mode_free = [src for src in RUNTIME.glob("*.cpp") if not runtime_build.per_mode(src) and src not in cold]
    assert cold and mode_free
    assert len(own_units) == 5 * min(jobs, len(per_mode))
    assert len(free_units) == 2 * min(jobs, len(mode_free)) + min(jobs, len(cold))
    assert len(set(objects.values())) == 5
    shared = {name: runtime_build.mode_free_object(name) for name in modes.BUILD_MODES}
    assert shared["fast"] == shared["synccheck"] == shared["racecheck-shared"] != shared["memcheck"]
    assert shared["memcheck"] == shared["racecheck"]
    for name in modes.BUILD_MODES:
        (link,) = [a for a in links if a[a.index("-o") + 1].startswith(str(objects[name]))]
        assert str(shared[name]) in link, (name, link)
    cold_object = str(runtime_build.cold_object())
    for part in set(shared.values()):
        (link,) = [a for a in links if a[a.index("-o") + 1].startswith(str(part))]
        inputs = link[link.index("-nostdlib") + 1 : link.index("-o")]
        assert inputs[-1] == cold_object and len(inputs) > 1, link
    assert build_cache.cache_dir() == tmp_path / "cache"


@needs_cxx
def test_the_cold_part_takes_the_checkers_flags_for_every_build():
    """Compiled once for every build with the flags the checkers' mode-free part has, so that
    their runtimes' code is what it was; a cold source is one that does not test the mode."""
    cxx = build.compiler()
    checkers = runtime_build.mode_free_flags(cxx, "memcheck")
    assert runtime_build.mode_free_flags(cxx, "racecheck") == checkers
    assert runtime_build._cold_flags(cxx) == checkers
    marked = [src.name for src in _sources() if runtime_build.cold(src)]
    assert "launch_filter.cpp" in marked and "scheduler.cpp" not in marked and "launch.cpp" not in marked
    both = [
        src.name
        for src in _sources()
        if runtime_build.per_mode(src) and runtime_build.COLD_MARK in src.read_text()
    ]
    assert not both, f"{both}: a source compiled per mode cannot be cold"
