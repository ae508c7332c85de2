"""Run public CUDA programs, unmodified, under the simulator and count those that pass their own check.

Usage: ``python benchmarks/real_programs.py MANIFEST --root DIR [--jobs 2] [--limit 70]
[--mode fast] [--only NAME,...] [--json OUT] [--run-option OPTION ...] [--to-the-end]
[--checkout DIR]``

The programs are not part of this repository: fetch them first (for example llm.c, whose
``dev/cuda`` programs ``benchmarks/manifests/llmc_dev_cuda.json`` lists) and give their checkout as
``--root``. A manifest is a JSON object: ``about`` (a note), ``defaults`` (any field below) and
``programs``, a list of
objects with ``name``, ``sources`` (paths under the root), and optionally ``include`` (folders
under the root), ``defines`` (``NAME`` or ``NAME=VALUE``, as a Makefile's ``-D`` flags), ``cwd``
(under the root; default the root), ``args``, ``devices`` and ``passes`` (a regular expression the
program prints when its own check succeeds), or, for a program that reports its check by its exit
status alone, ``exit_status: true`` and optionally ``fails`` (a regular expression it prints,
still exiting 0, when its check fails); ``note`` is a remark for the reader, and ``build`` says how
the program's own build files build it (``benchmarks/build_programs.py`` reads it; an entry with a
``build`` may leave ``sources`` out, and is then not run here). ``modules`` lists the driver API
modules the program's own build files make before it runs (a kernel compiled with ``nvcc -fatbin``
that the program loads with ``cuModuleLoad*``): objects with ``source`` (under the root), ``output``
(under ``cwd``) and ``flags`` (nvcc's options as the build's command line gives them, ``-fatbin``
included); each is built with the simulator's nvcc (``SIMULATOR_MODE`` set to the run's mode)
before the program runs, and a module that fails to build is the program's refused build.

Each program runs as ``python -m simulator run SOURCES -I ... -D ... --mode MODE --timeout LIMIT
--line-buffered``, with the simulator of ``--checkout`` (default: this repository; another
worktree measures before a change). ``--line-buffered``: through a pipe ``printf`` output is
otherwise block-buffered, so a program stopped in its benchmark loop would never show its check
line. It passes when its
``passes`` line appears within ``--limit`` seconds; it is stopped there, so that a benchmark loop
after the check costs nothing. A program judged by its exit status passes when it exits 0 within
the limit without printing a ``fails`` line. Under a checker, ``--to-the-end`` also waits for
the program's end after its check line and passes it only on status 0: racecheck reports what
it found when the program ends, after the check line. The table gives each program's verdict
and the seconds to its check line; ``--jobs`` programs run at a time.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from simulator.modes import MODES  # noqa: E402  (both import the standard library only)
from simulator.supervise import stop_group  # noqa: E402

FIELDS = {
    "name",
    "sources",
    "include",
    "defines",
    "cwd",
    "args",
    "devices",
    "passes",
    "exit_status",
    "fails",
    "note",
    "build",
    "modules",
}
MANIFEST_KEYS = {"about", "defaults", "programs"}


@dataclass
class Program:
    """One manifest entry, its paths resolved under the root."""

    name: str
    sources: list[str]
    include: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    cwd: str = "."
    args: list[str] = field(default_factory=list)
    devices: int = 1
    passes: str = "(?i)pass"
    exit_status: bool = False
    fails: str | None = None
    note: str = ""
    build: dict | None = None
    modules: list[dict] = field(default_factory=list)


@dataclass
class Outcome:
    """What one run gave: ``pass``, or why not, with the seconds to the check line or to the end."""

    name: str
    verdict: str
    seconds: float
    detail: str = ""


def load_manifest(path: Path, root: Path) -> list[Program]:
    """The manifest's programs; ``ValueError`` naming the entry for a malformed one or a missing file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the manifest {path}: {exc}") from exc
    if not isinstance(data, dict) or set(data) - MANIFEST_KEYS:
        raise ValueError(f"{path}: a manifest is an object with {', '.join(sorted(MANIFEST_KEYS))} only")
    defaults = data.get("defaults", {})
    programs = []
    for i, entry in enumerate(data.get("programs", [])):
        merged = {**defaults, **entry}
        unknown = sorted(set(merged) - FIELDS)
        if unknown or "name" not in merged or not (merged.get("sources") or merged.get("build")):
            raise ValueError(
                f"{path}: entry {i} needs 'name' and 'sources' (or 'build') and takes only "
                f"{', '.join(sorted(FIELDS))}" + (f" (unknown: {', '.join(unknown)})" if unknown else "")
            )
        prog = Program(**{"sources": [], **merged})
        where = f"{path}: {prog.name}"
        lists = (prog.sources, prog.include, prog.defines, prog.args)
        lists_ok = all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists)
        if not lists_ok or not isinstance(prog.devices, int) or not isinstance(prog.cwd, str):
            raise ValueError(
                f"{where}: sources, include, defines and args are lists of strings, devices an int, "
                "cwd a string"
            )
        if prog.build is not None and not isinstance(prog.build, dict):
            raise ValueError(f"{where}: build is an object (see benchmarks/build_programs.py)")
        module_keys = {"source", "output", "flags"}
        for module in prog.modules if isinstance(prog.modules, list) else [None]:
            if (
                not isinstance(module, dict)
                or set(module) != module_keys
                or not all(isinstance(module[k], str) for k in ("source", "output"))
                or not (
                    isinstance(module["flags"], list) and all(isinstance(f, str) for f in module["flags"])
                )
            ):
                raise ValueError(
                    f"{where}: modules is a list of objects with source, output (strings) and flags "
                    "(a list of strings)"
                )
            if not (root / module["source"]).is_file():
                raise ValueError(
                    f"{where}: {root / module['source']} does not exist (is --root the checkout?)"
                )
        for rel in [*prog.sources, *prog.include, prog.cwd]:
            if not (root / rel).exists():
                raise ValueError(f"{where}: {root / rel} does not exist (is --root the checkout?)")
        if not isinstance(prog.exit_status, bool) or (prog.fails is not None and not prog.exit_status):
            raise ValueError(f"{where}: exit_status is true or false, and 'fails' goes only with exit_status")
        for key in ("passes", "fails"):
            try:
                if key == "passes" or prog.fails is not None:
                    re.compile(getattr(prog, key))
            except (re.error, TypeError) as exc:
                raise ValueError(f"{where}: {key!r} is not a regular expression: {exc}") from exc
        programs.append(prog)
    if not programs:
        raise ValueError(f"{path}: no programs")
    return programs


def _command(prog: Program, root: Path, mode: str, limit: float, extra: tuple[str, ...] = ()) -> list[str]:
    cmd = [sys.executable, "-m", "simulator", "run", *(str(root / s) for s in prog.sources)]
    for inc in prog.include:
        cmd += ["-I", str(root / inc)]
    for define in prog.defines:
        cmd += ["-D", define]
    cmd += [
        "--mode",
        mode,
        "--timeout",
        f"{limit:g}",
        "--devices",
        str(prog.devices),
        "--line-buffered",
        *extra,
    ]
    if prog.args:
        cmd += ["--", *prog.args]
    return cmd


def _pump(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line)
    lines.put(None)  # the end of the output


def run_one(
    prog: Program,
    root: Path,
    mode: str,
    limit: float,
    extra: tuple[str, ...] = (),
    to_the_end: bool = False,
    checkout: Path = REPO,
) -> Outcome:
    """Run ``prog`` under ``checkout``'s simulator until its check line, its end or ``limit``
    seconds (``extra``: more ``run`` options); see ``judge`` for ``to_the_end``."""
    env = {**os.environ, "PYTHONPATH": str(checkout) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    began = time.monotonic()
    # The modules go where the program's own build puts them (its folder, in the source tree); the
    # ones made here are removed after the run, so that no later run, in another mode or by the
    # program's own build files (build_programs.py copies the folder), loads a stale one.
    outputs = [root / prog.cwd / module["output"] for module in prog.modules]
    made = [path for path in outputs if not path.exists()]
    try:
        refused = build_modules(prog, root, mode, limit, env)
        if refused is not None:
            return Outcome(prog.name, "build refused", time.monotonic() - began, refused)
        command = _command(prog, root, mode, limit, extra)
        return judge(prog, command, root / prog.cwd, env, limit, mode, to_the_end)
    finally:
        for path in made:
            path.unlink(missing_ok=True)


def build_modules(prog: Program, root: Path, mode: str, limit: float, env: dict[str, str]) -> str | None:
    """Build ``prog``'s ``modules`` with the simulator's nvcc in its ``cwd``; None, or the first
    line of the error of the first that fails."""
    cwd = root / prog.cwd
    for module in prog.modules:
        command = [
            sys.executable,
            "-m",
            "simulator",
            "nvcc",
            *module["flags"],
            "-o",
            str(cwd / module["output"]),
            str(root / module["source"]),
        ]
        try:
            proc = subprocess.run(
                command,
                cwd=cwd,
                env={**env, "SIMULATOR_MODE": mode},
                capture_output=True,
                text=True,
                errors="replace",
                timeout=limit,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return f"module {module['output']}: nvcc ran over {limit:g} s"
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines() or ["nvcc failed"]
            return f"module {module['output']}: {lines[0].strip()}"
    return None


def judge(
    prog: Program,
    command: list[str],
    cwd: Path,
    env: dict[str, str],
    limit: float,
    mode: str = "fast",
    to_the_end: bool = False,
    simulated: bool = True,
) -> Outcome:
    """Start ``command`` in ``cwd`` and judge its output by ``prog``'s check: ``pass`` at its check
    line (the program is stopped there) or, for an exit-status check, at exit 0 without its failure
    line; else why not. It is stopped after ``limit`` seconds. ``simulated``: ``command`` is
    ``simulator run``, whose status 2 with a refusal line is a refused build.

    ``to_the_end``: after the check line, wait for the program's end too, and pass only on status
    0 (a checker that reports when the program ends, as racecheck does, then counts)."""
    began = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
    check = None if prog.exit_status else re.compile(prog.passes)
    failed = re.compile(prog.fails) if prog.fails else None
    failure = ""
    checked = False
    head: list[str] = []  # a build's first error comes early in a long listing
    tail: collections.deque[str] = collections.deque(maxlen=20)
    while True:
        left = limit - (time.monotonic() - began)
        try:
            line = lines.get(timeout=max(left, 0.0))
        except queue.Empty:
            stop_group(proc, signal.SIGTERM)
            return Outcome(prog.name, "over the limit", limit, tail[-1].strip() if tail else "")
        if line is None:
            break
        tail.append(line)
        if len(head) < 40:
            head.append(line)
        if failed and not failure and failed.search(line):
            failure = line.strip()
        if check and check.search(line):
            if to_the_end:
                check = None
                checked = True
                continue
            seconds = time.monotonic() - began
            stop_group(proc, signal.SIGTERM)
            return Outcome(prog.name, "pass", seconds)
    rc = proc.wait()
    seconds = time.monotonic() - began
    # A build that failed exits 2; the simulator's own refusal names the construct ("unsupported
    # ..."), else the compiler's first error, else the line that says the build failed.
    seen = [*head, *tail] if simulated and rc == 2 else []
    refused = next(
        (ln.strip() for words in ("unsupported", "error:", "build failed") for ln in seen if words in ln), ""
    )
    if refused:
        return Outcome(prog.name, "build refused", seconds, refused)
    if checked:
        if rc == 0:
            return Outcome(prog.name, "pass", seconds)
        finding = next((ln.strip() for ln in tail if f"{mode}:" in ln and "finding" not in ln), "")
        return Outcome(prog.name, f"exit {rc} after the check line", seconds, finding or tail[-1].strip())
    if prog.exit_status and rc == 0:
        verdict = "check failed" if failure else "pass"
        return Outcome(prog.name, verdict, seconds, failure)
    verdict = f"exit {rc}" if prog.exit_status else f"exit {rc}, no check line"
    return Outcome(prog.name, verdict, seconds, tail[-1].strip() if tail else "")


def table(outcomes: list[Outcome]) -> str:
    """The outcomes as a Markdown table, then the count of passes."""
    rows = ["| program | verdict | seconds | last line |", "|---|---|---|---|"]
    for o in outcomes:
        detail = o.detail.replace("|", "\\|")[:100]
        rows.append(f"| {o.name} | {o.verdict} | {o.seconds:.1f} | {detail} |")
    passed = sum(o.verdict == "pass" for o in outcomes)
    rows.append(f"\n{passed}/{len(outcomes)} pass")
    return "\n".join(rows)


def select(programs: list[Program], only: str) -> list[Program]:
    """The programs that ``only`` names (comma-separated; empty: all of them); ``ValueError``
    naming those it names that are not among them."""
    if not only:
        return programs
    wanted = set(only.split(","))
    missing = sorted(wanted - {prog.name for prog in programs})
    if missing:
        raise ValueError(f"--only names programs the manifest does not list: {', '.join(missing)}")
    return [prog for prog in programs if prog.name in wanted]


def report(outcomes: list[Outcome], json_path: Path | None) -> None:
    """Print the outcomes' table and, given ``json_path``, write them there too."""
    print(table(outcomes))
    if json_path:
        json_path.write_text(json.dumps([asdict(o) for o in outcomes], indent=1))


def main(argv: list[str] | None = None) -> int:
    """Run the manifest's programs and print the table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("manifest", type=Path)
    p.add_argument("--root", type=Path, required=True, help="the checkout the manifest's paths are under")
    p.add_argument("--jobs", type=int, default=2, help="programs at a time (default 2)")
    p.add_argument("--limit", type=float, default=70.0, help="seconds per program (default 70)")
    p.add_argument("--mode", default="fast", choices=MODES)
    p.add_argument("--only", default="", help="comma-separated names to run (default: all)")
    p.add_argument("--json", type=Path, help="also write the outcomes here")
    p.add_argument(
        "--checkout",
        type=Path,
        default=REPO,
        help="the repository checkout whose simulator runs the programs (default: this one)",
    )
    p.add_argument(
        "--run-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="pass OPTION on to every `simulator run` (e.g. --run-option=--racecheck-memory=all)",
    )
    p.add_argument(
        "--to-the-end",
        action="store_true",
        help="after the check line, also wait for the end and pass only on status 0 (for a checker: "
        "racecheck reports when the program ends)",
    )
    a = p.parse_args(argv)
    if a.jobs < 1 or a.limit <= 0:
        p.error(f"--jobs must be at least 1 and --limit positive, not {a.jobs} and {a.limit:g}")
    root = a.root.resolve()
    try:
        programs = load_manifest(a.manifest, root)
    except ValueError as exc:
        p.error(str(exc))
    try:
        programs = select(programs, a.only)
    except ValueError as exc:
        p.error(str(exc))
    if not (a.checkout / "simulator" / "__main__.py").is_file():
        p.error(f"--checkout {a.checkout} holds no simulator/ (give a checkout of this repository)")
    built_only = [prog.name for prog in programs if not prog.sources]
    if built_only:
        print(
            f"not run here ({len(built_only)}, no sources listed: see build_programs.py): "
            + ", ".join(built_only)
        )
        programs = [prog for prog in programs if prog.sources]
    checkout = a.checkout.resolve()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        outcomes = list(
            pool.map(
                lambda prog: run_one(
                    prog, root, a.mode, a.limit, tuple(a.run_option), a.to_the_end, checkout
                ),
                programs,
            )
        )
    report(outcomes, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
