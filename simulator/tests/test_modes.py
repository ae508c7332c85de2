"""The modes' table (simulator/modes.py) is what the build, run, check, the command line and the
child's environment read: every row is offered and built as it says, and no other module keeps
a list of mode names of its own."""

from __future__ import annotations

import argparse
import ast
import re
import shutil
from pathlib import Path

import pytest

from simulator import __main__ as cli
from simulator import build, modes, sanitizer_env
from simulator.run import RACECHECK_MEMORY, build_mode_for

PACKAGE = Path(modes.__file__).resolve().parent
RUNTIME = PACKAGE / "runtime"
NAMES = set(modes.MODES) | set(modes.BUILD_MODES)


def _mode_choices(command: str) -> tuple[str, ...]:
    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    mode = next(a for a in sub.choices[command]._actions if a.dest == "mode")
    return tuple(mode.choices)


def test_the_command_line_offers_every_mode_of_the_table():
    assert _mode_choices("run") == modes.MODES
    assert _mode_choices("build") == modes.MODES
    assert _mode_choices("check") == (*modes.CHECK_MODES, "all")
    assert modes.CHECK_MODES == tuple(m.name for m in modes.TABLE if m.check_build is not None)


def test_every_build_a_mode_names_is_in_the_table_and_every_build_is_used():
    named = set()
    for row in modes.TABLE:
        named |= {row.run_build, *row.run_variants.values()}
        if row.check_build is not None:
            named.add(row.check_build)
    assert named == set(modes.BUILD_MODES)
    for row in modes.TABLE:
        assert build_mode_for(row.name) == row.run_build
        for variant, built in row.run_variants.items():
            assert build_mode_for(row.name, variant) == built
    assert RACECHECK_MEMORY == tuple(modes.mode_named("racecheck").run_variants)


def test_an_unknown_mode_is_named_with_the_choices():
    with pytest.raises(ValueError, match=r"unknown mode 'initchek': choose one of fast, memcheck"):
        modes.mode_named("initchek")


def _mode_macros(text: str) -> set[str]:
    """The ``SIM_*`` macros that ``text``'s preprocessor conditions test."""
    pairs = re.findall(r"defined\((SIM_[A-Z_]+)\)|#\s*ifn?def\s+(SIM_[A-Z_]+)", text)
    return {name for pair in pairs for name in pair if name and not name.endswith("_H")}  # not a guard


def test_the_runtime_tests_the_macros_of_the_table_and_no_other_mode_macro():
    macros = {b.macro for b in modes.BUILDS if b.macro}
    hooks = _mode_macros((RUNTIME / "mode_hooks.h").read_text())
    assert hooks, "mode_hooks.h tests no mode macro: the pattern no longer reads it"
    assert hooks <= macros, f"mode_hooks.h tests mode macros the table lacks: {sorted(hooks - macros)}"
    runtime_text = "".join(p.read_text() for p in sorted(RUNTIME.rglob("*.[ch]*")))
    for macro in macros:
        assert re.search(rf"\b{macro}\b", runtime_text), f"no runtime source tests {macro}"


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to name the build's flags")
@pytest.mark.parametrize("name", modes.BUILD_MODES)
def test_each_build_compiles_the_runtime_with_the_tables_flags_and_macro(name):
    row = modes.BUILD_NAMED[name]
    flags = build.runtime_flags(build.compiler(), name)
    at = flags.index(row.runtime_flags[0])
    assert flags[at : at + len(row.runtime_flags)] == row.runtime_flags
    assert (f"-D{row.macro}" in flags) == (row.macro is not None)
    assert build.link_flags(name) == list(row.link_flags)


def test_the_childs_environment_is_the_tables():
    for row in modes.TABLE:
        # run's own options (memcheck's) add to the table's values, never drop them.
        env = sanitizer_env.run_child_env(row.name, 5.0)
        for key, value in row.run_env.items():
            assert env[key].startswith(value), (row.name, key, env[key])
        if row.check_build is not None:
            assert sanitizer_env.check_child_env(row.name, 5.0).items() >= dict(row.check_env).items()
        # Each status by which a checker stops a program is one its sanitizer is told to use.
        told = " ".join(row.run_env.values())
        for status in row.stop_statuses:
            assert f"exitcode={status}" in told, (row.name, status)


def _listed_mode_names(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """Literal tuples, lists, sets and dicts that hold two or more mode names, by line."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        names = [i.value for i in items if isinstance(i, ast.Constant) and i.value in NAMES]
        if len(names) >= 2:
            found.append((node.lineno, names))
    return found


def test_the_scan_sees_a_planted_list_of_modes():
    planted = ast.parse(
        'MODES = ("fast", "memcheck")\nENV = {"racecheck": {}, "synccheck": {}}\nx = ("fast",)'
    )
    assert [names for _, names in _listed_mode_names(planted)] == [
        ["fast", "memcheck"],
        ["racecheck", "synccheck"],
    ]


def test_no_module_but_the_table_lists_mode_names():
    lists = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "modes.py" or "tests" in path.relative_to(PACKAGE).parts:
            continue
        found = _listed_mode_names(ast.parse(path.read_text()))
        if found:
            lists[str(path.relative_to(PACKAGE))] = found
    assert not lists, f"read these from simulator/modes.py instead: {lists}"
