"""Build public CUDA programs with their own build files and a given nvcc, run them, and count those
that pass their own check.

Usage: ``python benchmarks/build_programs.py MANIFEST --root DIR --nvcc PATH [--toolkit DIR]
[--jobs 2] [--limit 90] [--build-limit 900] [--only NAME,...] [--json OUT] [--keep DIR]``

The manifest is ``real_programs.py``'s (``benchmarks/manifests/build_sample.json`` is one); each
program's ``build`` says how its own files build it:

- ``{"system": "make", "dir": D, "program": P, "vars": {...}, "target": T}``: ``make -C D
  NAME=VALUE... [T]`` (HeCBench: ``CC={nvcc} ARCH=sm_80``; Rodinia: ``CUDA_DIR={toolkit}``), then
  ``D/P`` runs;
- ``{"system": "cmake", "dir": D, "program": P, "run_in": "build"}``: ``cmake -S D -B BUILD
  -DCMAKE_CUDA_COMPILER={nvcc}`` and ``cmake --build BUILD --target P``, then ``BUILD/P`` runs.

``{nvcc}`` and ``{toolkit}`` in a value stand for ``--nvcc`` and ``--toolkit`` (a folder laid out
like a CUDA installation; its ``bin`` goes first on ``PATH``). Each build happens in a copy of
``D`` placed where ``D`` is, beside links to everything else under the root, so that a Makefile's
``../include`` or ``../../common/make.config`` resolves as in the checkout, which is never written
to. The built program runs in the copy of its ``cwd`` (in the folder it was built in with
``"run_in": "build"``, for a program that loads a file its own build makes there, such as a
``-fatbin`` module, as a CMake project's programs are run) with its ``args`` and is judged as
``real_programs.py`` judges a program (``real_programs.judge``): its check line, or its exit status,
within ``--limit`` seconds, its stdout line-buffered (``SIMULATOR_LINE_BUFFERED``, unless the caller
sets it) as ``real_programs.py``'s runs are, so that a check line before a long benchmark counts
when it is printed, with the entry's ``devices`` (``SIMULATOR_DEVICES``); a single kernel launch
may run as long (``SIMULATOR_TIMEOUT``, unless
the caller sets it: the simulator's default of 60 s would stop a long launch that the program's own
limit allows, and the program would then check a result its kernel never finished). A build that
fails is listed as ``build failed`` with its first error
line (or ``build over the limit`` after ``--build-limit`` seconds, its commands' whole process
group stopped); every other verdict is that of a program that built and ran.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from real_programs import Outcome, Program, judge, load_manifest, report, select

from simulator.supervise import stop_group  # importable: real_programs puts the repository on the path

SYSTEMS = {
    "make": {"dir", "program", "vars", "target", "run_in"},
    "cmake": {"dir", "program", "target", "run_in"},
}
RUN_IN = ("cwd", "build")
# What a failed build's first error looks like, most telling first: a compiler's or CMake's
# diagnostic, then a missing file, library or rule, then make's own "*** ... Error N". A word
# such as "error" alone would also match the echoed command lines (-Werror, error_check.h).
ERROR_LINES = [
    re.compile(r"(?i)\berror\b\s*:|\bfatal\b|CMake Error"),
    re.compile(r"undefined reference|cannot find|No such file|not found|No rule|Permission denied"),
    re.compile(r"\*\*\*.*\bError\b"),
]


def check_build(prog: Program) -> str | None:
    """What is wrong with ``prog``'s ``build`` object, in words, or None."""
    build = prog.build
    if not isinstance(build, dict) or build.get("system") not in SYSTEMS:
        return f"{prog.name}: build needs a 'system' of {' or '.join(SYSTEMS)}"
    unknown = set(build) - SYSTEMS[build["system"]] - {"system"}
    if unknown or not isinstance(build.get("dir"), str) or not isinstance(build.get("program"), str):
        return (
            f"{prog.name}: a {build['system']} build has a 'dir' and a 'program' (unknown: {sorted(unknown)})"
        )
    if build.get("run_in", "cwd") not in RUN_IN:
        return f"{prog.name}: build 'run_in' is one of {', '.join(RUN_IN)}, not {build['run_in']!r}"
    variables = build.get("vars", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        return f"{prog.name}: build 'vars' maps names to strings"
    return None


def shadow(root: Path, folder: str, into: Path) -> Path:
    """A copy of ``root/folder`` at ``into/folder``, with every other entry on the way there a link
    to the checkout's; returns the copy."""
    parts = Path(folder).parts
    for depth in range(len(parts)):
        here = root.joinpath(*parts[:depth])
        there = into.joinpath(*parts[:depth])
        there.mkdir(parents=True, exist_ok=True)
        for entry in here.iterdir():
            if entry.name != parts[depth] and not (there / entry.name).exists():
                (there / entry.name).symlink_to(entry)
    copy = into / folder
    shutil.copytree(root / folder, copy, symlinks=True)
    return copy


def first_error(output: str) -> str:
    """The first line of a failed build's output that says what went wrong (by the kinds of
    ``ERROR_LINES``, in their order), else its last line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for kind in ERROR_LINES:
        at = next((i for i, ln in enumerate(lines) if kind.search(ln)), None)
        if at is not None:
            # CMake names the place ("CMake Error at FILE:LINE (message):") and says why below it
            said_below = lines[at].endswith(":") and at + 1 < len(lines)
            return f"{lines[at]} {lines[at + 1]}" if said_below else lines[at]
    return lines[-1] if lines else ""


def run_step(command: list[str], cwd: Path, env: dict[str, str], limit: float) -> tuple[int | None, str]:
    """Run one build command in its own process group; its status (None past ``limit`` seconds,
    when the whole group, make's compilers included, is stopped) and its output."""
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=max(limit, 1))
    except subprocess.TimeoutExpired:
        stop_group(proc, signal.SIGTERM)
        return None, ""
    return proc.returncode, output


def build_commands(
    prog: Program, copy: Path, nvcc: Path, toolkit: Path | None
) -> tuple[list[list[str]], Path]:
    """The commands that build ``prog`` in its copy, and where the built program will be."""
    build = prog.build

    def fill(value: str) -> str:
        return value.replace("{nvcc}", str(nvcc)).replace("{toolkit}", str(toolkit))

    if build["system"] == "make":
        make = ["make", "-C", str(copy), *(f"{k}={fill(v)}" for k, v in build.get("vars", {}).items())]
        return [make + ([build["target"]] if build.get("target") else [])], copy / build["program"]
    out = copy / "build-programs"
    configure = ["cmake", "-S", str(copy), "-B", str(out), f"-DCMAKE_CUDA_COMPILER={nvcc}"]
    if toolkit:
        configure.append(f"-DCUDAToolkit_ROOT={toolkit}")
    target = build.get("target", Path(build["program"]).name)
    return [configure, ["cmake", "--build", str(out), "--target", target]], out / build["program"]


def build_and_run(
    prog: Program, root: Path, nvcc: Path, toolkit: Path | None, work: Path, limit: float, build_limit: float
) -> Outcome:
    """Build ``prog`` in a copy of its folder under ``work``, run what it built, and judge it."""
    uses_toolkit = any("{toolkit}" in v for v in prog.build.get("vars", {}).values())
    if uses_toolkit and toolkit is None:
        return Outcome(prog.name, "build failed", 0.0, "its build needs --toolkit")
    began = time.monotonic()
    copy = shadow(root, prog.build["dir"], work)
    env = dict(os.environ)
    if toolkit:
        env["PATH"] = f"{toolkit / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["CUDA_HOME"] = env["CUDA_PATH"] = str(toolkit)
    env["SIMULATOR_TIMEOUT"] = env.get("SIMULATOR_TIMEOUT") or f"{limit:g}"
    # The program writes to a pipe, where its stdout is fully buffered: a check line printed before
    # a long benchmark would arrive only at the end. Line by line, as real_programs.py's runs.
    env["SIMULATOR_LINE_BUFFERED"] = env.get("SIMULATOR_LINE_BUFFERED") or "1"
    # The entry's GPU count, as real_programs.py's ``run --devices``: a two-device program built
    # by its own files would otherwise see one and waive itself.
    env["SIMULATOR_DEVICES"] = str(prog.devices)
    commands, program = build_commands(prog, copy, nvcc, toolkit)
    for command in commands:
        status, output = run_step(command, copy, env, build_limit - (time.monotonic() - began))
        if status is None:
            return Outcome(prog.name, "build over the limit", time.monotonic() - began, " ".join(command[:3]))
        if status != 0:
            return Outcome(prog.name, "build failed", time.monotonic() - began, first_error(output))
    if not program.is_file():
        return Outcome(
            prog.name, "build failed", time.monotonic() - began, f"the build made no {program.name}"
        )
    cwd = program.parent if prog.build.get("run_in") == "build" else work / prog.cwd
    return judge(prog, [str(program), *prog.args], cwd, env, limit, simulated=False)


def main(argv: list[str] | None = None) -> int:
    """Build and run the manifest's programs and print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("manifest", type=Path)
    p.add_argument("--root", type=Path, required=True, help="the folder the manifest's paths are under")
    p.add_argument("--nvcc", type=Path, required=True, help="the nvcc that builds the programs")
    p.add_argument(
        "--toolkit", type=Path, help="a folder laid out like a CUDA installation (CUDA_DIR, CUDA_HOME)"
    )
    p.add_argument("--jobs", type=int, default=2, help="programs at a time (default 2)")
    p.add_argument(
        "--limit", type=float, default=90.0, help="seconds each built program may run (default 90)"
    )
    p.add_argument(
        "--build-limit", type=float, default=900.0, help="seconds each build may take (default 900)"
    )
    p.add_argument("--only", default="", help="comma-separated names to build (default: all)")
    p.add_argument("--json", type=Path, help="also write the outcomes here")
    p.add_argument("--keep", type=Path, help="build in this folder and leave it (default: a temporary one)")
    a = p.parse_args(argv)
    if a.jobs < 1 or a.limit <= 0 or a.build_limit <= 0:
        p.error(
            f"--jobs must be at least 1 and the limits positive, not {a.jobs}, {a.limit:g}, {a.build_limit:g}"
        )
    nvcc = Path(shutil.which(str(a.nvcc)) or a.nvcc).resolve()
    if not nvcc.is_file() or not os.access(nvcc, os.X_OK):
        p.error(f"--nvcc {a.nvcc} is not an executable file")
    toolkit = a.toolkit.resolve() if a.toolkit else None
    if toolkit and not toolkit.is_dir():
        p.error(f"--toolkit {a.toolkit} is not a folder")
    root = a.root.resolve()
    try:
        programs = load_manifest(a.manifest, root)
        programs = select([prog for prog in programs if prog.build is not None], a.only)
    except ValueError as exc:
        p.error(str(exc))
    problems = [why for why in map(check_build, programs) if why]
    if problems or not programs:
        p.error("; ".join(problems) or f"{a.manifest}: no program has a 'build'")
    work = a.keep.resolve() if a.keep else Path(tempfile.mkdtemp(prefix="build-programs-"))
    try:

        def one(prog: Program) -> Outcome:
            place = work / prog.name.replace("/", "__")
            if place.exists():
                shutil.rmtree(place)
            return build_and_run(prog, root, nvcc, toolkit, place, a.limit, a.build_limit)

        with ThreadPoolExecutor(max_workers=a.jobs) as pool:
            outcomes = list(pool.map(one, programs))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    report(outcomes, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
