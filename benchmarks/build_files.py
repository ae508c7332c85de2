"""What a program's own build files say: a Makefile's sources, flags and ``run`` command, a CMake
project's executables.

A Makefile is not parsed here: GNU make prints what it would run (``make --dry-run
--always-make``), and the compiler lines and the ``run`` target's command are read from that.
``add_executable`` calls are read from a ``CMakeLists.txt`` as written (a call whose sources are
all plain file names; one built from variables is passed over).
"""

from __future__ import annotations

import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
COMMAND_SEPARATORS = {"&&", "||", ";", "|"}
REDIRECTIONS = {">", ">>", "<", "2>", "&>"}
ADD_EXECUTABLE = re.compile(r"add_executable\s*\(\s*([^\s)]+)([^)]*)\)", re.I)
ADD_LIBRARY = re.compile(r"add_library\s*\(\s*([^\s)]+)([^)]*)\)", re.I)
CMAKE_KEYWORDS = {"WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL", "STATIC", "SHARED", "OBJECT", "MODULE"}


@dataclass
class MakeFacts:
    """A Make project's program: its sources, ``-I`` folders and ``-D`` macros (folder-relative, as
    the compiler lines give them), its libraries (``-l``) and the ``run`` target's commands."""

    sources: list[str] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)
    runs: list[list[str]] = field(default_factory=list)


def dry_run(
    folder: Path, variables: dict[str, str], target: str | None = None, timeout: float = 60
) -> list[str]:
    """The commands ``make`` would run in ``folder`` for ``target`` (default: its first), one per
    line with continuations joined; ``ValueError`` with make's message when it cannot say."""
    cmd = ["make", "--dry-run", "--always-make", "--no-print-directory", "-C", str(folder)]
    cmd += [f"{k}={v}" for k, v in variables.items()]
    if target:
        cmd.append(target)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise ValueError(f"{folder}: make --dry-run took over {timeout:g} s") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ValueError(f"{folder}: make --dry-run {target or ''} failed: {last}")
    return [line.strip() for line in done.stdout.replace("\\\n", " ").splitlines() if line.strip()]


def commands(line: str) -> list[list[str]]:
    """A shell line's simple commands as argument lists, without redirections."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: not a command this reads
        return []
    found: list[list[str]] = [[]]
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
        elif token in COMMAND_SEPARATORS:
            found.append([])
        elif token in REDIRECTIONS:
            skip_next = True
        else:
            found[-1].append(token)
    return [c for c in found if c]


def _flag_values(argv: list[str], short: str, long: str) -> list[str]:
    values, take = [], False
    for arg in argv:
        if take:
            values.append(arg)
            take = False
        elif arg in (short, long):
            take = True
        elif arg.startswith(short) and len(arg) > len(short):
            values.append(arg[len(short) :])
        elif arg.startswith(long + "="):
            values.append(arg[len(long) + 1 :])
    return values


def _add_new(into: list[str], values: list[str]) -> None:
    into.extend(v for v in values if v not in into)


def make_facts(folder: Path, variables: dict[str, str], run_target: str | None = "run") -> MakeFacts:
    """Read ``folder``'s program from ``make``'s dry runs of the default target and of
    ``run_target`` (None: none; ``variables``: ``NAME=VALUE`` on make's command line)."""
    build_lines = dry_run(folder, variables)
    facts = MakeFacts()
    for line in build_lines:
        for argv in commands(line):
            after_output = [argv[i - 1] == "-o" for i in range(1, len(argv))]
            sources = [
                a
                for a, is_output in zip(argv[1:], after_output)
                if a.endswith(SOURCE_SUFFIXES) and not is_output and (folder / a).is_file()
            ]
            if not sources:
                continue
            _add_new(facts.sources, [str(Path(s)) for s in sources])
            _add_new(facts.includes, _flag_values(argv, "-I", "--include-path"))
            _add_new(facts.defines, _flag_values(argv, "-D", "--define-macro"))
        for argv in commands(line):
            _add_new(facts.libraries, _flag_values(argv, "-l", "--library"))
    built = set(build_lines)
    for line in dry_run(folder, variables, run_target) if run_target else []:
        if line not in built:
            facts.runs.extend(commands(line))
    return facts


def cmake_targets(cmakelists: Path, kind: str = "executable") -> dict[str, list[str]]:
    """``add_executable(NAME SOURCES...)`` (or, with ``kind="library"``, ``add_library``) calls of one
    ``CMakeLists.txt``: NAME -> the sources, relative to its folder, for each call whose sources
    are all files there."""
    text = re.sub(r"#[^\n]*", "", cmakelists.read_text(errors="replace"))
    found = {}
    for name, rest in (ADD_EXECUTABLE if kind == "executable" else ADD_LIBRARY).findall(text):
        words = [w for w in rest.split() if w not in CMAKE_KEYWORDS]
        if words and all((cmakelists.parent / w).is_file() for w in words):
            found[name] = words
    return found
