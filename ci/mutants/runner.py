"""Run mutants in parallel: one workspace per worker, each mutant's stages until one fails.

A workspace is a copy of the checkout (its tracked and untracked-but-not-ignored files, and the
numba twin's on-disk cache) in a folder of its own, so workers never see each other's mutants.
A worker applies a mutant to its workspace, runs the file's stages (``stages.py``) there, and
restores the file. Before any mutant, every stage runs once on the unmutated code: a stage that
fails there would kill every mutant, so the session stops instead. That baseline runs the selective
stages under coverage, so that a mutant's run of them is only the tests that ran its lines (``reach``).
"""

from __future__ import annotations

import importlib.util
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from . import reach
from .model import Mutant
from .stages import BUILD, PYTEST, TEST_TIMEOUT, Stage, stages_for

# What a parent shell may have set that would change which tests a stage runs.
CLEARED_ENV = ("NUMBA_ENABLE_CUDASIM", "PYTHONPATH")
CLEARED_PREFIX = "TORCHLIGHT_"
FAILED_LINE = re.compile(r"^(FAILED|ERROR) (\S+)(?: - (.*))?$", re.M)


@dataclass
class StageResult:
    """How one stage ended for one mutant."""

    stage: str
    passed: bool
    seconds: float
    test: str | None = None  # the failing test's node id
    detail: str = ""  # its message, or why the stage stopped
    timed_out: bool = False


@dataclass
class Outcome:
    """A mutant's result: ``killed``, ``survived``, ``not built`` or ``not run``."""

    id: str
    mutant: Mutant
    status: str
    seconds: float
    stage: str | None = None
    test: str | None = None
    detail: str = ""


class BaselineError(RuntimeError):
    """A stage fails on the unmutated code, so it cannot judge mutants."""


def workspace_files(root: Path) -> list[str]:
    """The checkout's files a workspace copies: tracked, and untracked but not ignored."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return sorted({p for p in out.decode().split("\0") if p and (root / p).is_file()})


def make_workspace(root: Path, dest: Path, files: list[str]) -> Path:
    """Copy ``files`` of ``root`` (and the numba twin's cache) into ``dest``, keeping modification times.

    numba's on-disk cache is valid while its source's time and size stand, so the copied cache
    spares each workspace the twin's first compile; a kernel whose shared body a mutant changed
    recompiles (the kernels' cache key hashes the bodies' source).
    """
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    for cache in (root / "torchlight").rglob("__pycache__"):
        shutil.copytree(cache, dest / cache.relative_to(root), dirs_exist_ok=True)
    return dest


def stage_env(workspace: Path, stage: Stage, threads: int, cache: Path) -> dict[str, str]:
    """The environment of ``stage`` in ``workspace``: the tier's variables, imports from the workspace."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV and not k.startswith(CLEARED_PREFIX)}
    env.update(stage.env)
    env["PYTHONPATH"] = str(workspace)
    env["SIMULATOR_CACHE"] = str(cache)
    env["SIMULATOR_THREADS"] = str(threads)
    env["NUMBA_NUM_THREADS"] = str(threads)
    return env


def _tail(text: str, lines: int = 3) -> str:
    return " | ".join(ln.strip() for ln in text.strip().splitlines()[-lines:])


def run_stage(
    workspace: Path,
    stage: Stage,
    threads: int,
    cache: Path,
    tests: list[str] | None = None,
    extra: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> StageResult:
    """Run ``stage`` in ``workspace`` (only ``tests``, node ids, when given; ``extra`` pytest
    arguments and ``env`` variables added); the first failing test's id and message when it fails."""
    start = time.monotonic()
    args = [*PYTEST, *tests] if tests is not None else list(stage.args)
    if args[:2] == ["-m", "pytest"] and importlib.util.find_spec("pytest_timeout") is not None:
        args += TEST_TIMEOUT
    proc = subprocess.Popen(
        [sys.executable, *args, *extra],
        cwd=workspace,
        env={**stage_env(workspace, stage, threads, cache), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so a hang is stopped with all it started
    )
    try:
        stdout, stderr = proc.communicate(timeout=stage.timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        seconds = time.monotonic() - start
        detail = f"stopped after {stage.timeout_s:.0f} s (a hang)"
        return StageResult(stage.name, False, seconds, detail=detail, timed_out=True)
    seconds = time.monotonic() - start
    if proc.returncode == 0:
        return StageResult(stage.name, True, seconds)
    found = FAILED_LINE.search(stdout)
    if found:
        return StageResult(stage.name, False, seconds, test=found[2], detail=(found[3] or "").strip())
    return StageResult(stage.name, False, seconds, detail=f"exit {proc.returncode}: {_tail(stdout + stderr)}")


class Workspaces:
    """A pool of workspaces, one per worker, handed out and returned.

    Each starts with the unmutated kernel libraries built (unless ``build`` is False: the tier
    that builds them cannot run here); a CUDA C mutant's run ends by building them again.
    ``reach`` holds which tests ran which lines, per selective stage, once the baseline recorded it.
    """

    def __init__(self, root: Path, base: Path, count: int, threads: int, cache: Path, build: bool) -> None:
        self.root, self.threads, self.cache = root, threads, cache
        self.reach: reach.Reach = {}
        files = workspace_files(root)
        self._free: queue.Queue[Path] = queue.Queue()
        for i in range(count):
            ws = make_workspace(root, base / f"ws{i}", files)
            if build:
                result = run_stage(ws, BUILD, threads, cache)
                if not result.passed:
                    raise BaselineError(f"the unmutated kernels do not build: {result.detail}")
            self._free.put(ws)

    def take(self) -> Path:
        return self._free.get()

    def give(self, ws: Path) -> None:
        self._free.put(ws)


def run_mutant(ws: Path, mid: str, mutant: Mutant, pool: Workspaces, blocked: dict[str, str]) -> Outcome:
    """Apply ``mutant`` in ``ws``, run its stages until one fails, restore the file."""
    target = ws / mutant.path
    original = target.read_bytes()
    start = time.monotonic()
    stages = stages_for(mutant.path)
    try:
        target.write_bytes(mutant.apply(original))
        where, lines = reach.key_lines(mutant, original, ws)
        ran = False
        unreached = []
        for stage in stages:
            if stage.tier in blocked:
                continue
            ran = True
            tests = None
            if stage.selective and stage.name in pool.reach:
                tests = reach.tests_for(pool.reach[stage.name], where, lines)
                if not tests:
                    unreached.append(stage.name)
                    continue
            result = run_stage(ws, stage, pool.threads, pool.cache, tests)
            if result.passed:
                continue
            status = "not built" if stage.builds else "killed"
            seconds = time.monotonic() - start
            return Outcome(mid, mutant, status, seconds, stage.name, result.test, result.detail)
        seconds = time.monotonic() - start
        if not ran:
            why = "; ".join(f"{t}: {blocked[t]}" for t in sorted({s.tier for s in stages} & set(blocked)))
            return Outcome(mid, mutant, "not run", seconds, detail=why)
        detail = f"no test of {', '.join(unreached)} runs the changed lines" if unreached else ""
        return Outcome(mid, mutant, "survived", seconds, detail=detail)
    finally:
        target.write_bytes(original)
        if any(s is BUILD for s in stages) and BUILD.tier not in blocked:
            run_stage(ws, BUILD, pool.threads, pool.cache)  # the unmutated libraries again


def stages_slug(stage: Stage) -> str:
    """A file-name-safe form of a stage's name."""
    return re.sub(r"[^a-z0-9]+", "-", stage.name.lower()).strip("-")


def baseline(
    pool: Workspaces, stages: list[Stage], jobs: int, progress: Callable[[str], None]
) -> list[StageResult]:
    """Every stage on the unmutated code, in parallel; BaselineError naming any that fails."""
    record = reach.available()

    def one(stage: Stage) -> StageResult:
        ws = pool.take()
        try:
            if not (stage.selective and record):
                return run_stage(ws, stage, pool.threads, pool.cache)
            data = ws / f".coverage-{stages_slug(stage)}"
            env = {"COVERAGE_FILE": str(data)}
            result = run_stage(ws, stage, pool.threads, pool.cache, extra=reach.coverage_args(), env=env)
            if result.passed:
                pool.reach[stage.name] = reach.read(data, ws)
            return result
        finally:
            pool.give(ws)

    with ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(one, stages))
    for r in results:
        progress(f"baseline: {r.stage}: {'passed' if r.passed else 'FAILED'} ({r.seconds:.0f} s)")
    failed = [r for r in results if not r.passed]
    if failed:
        lines = "; ".join(f"{r.stage}: {r.test or ''} {r.detail}".strip() for r in failed)
        raise BaselineError(f"stages that fail on the unmutated code cannot judge mutants: {lines}")
    return results


def run_all(
    pool: Workspaces,
    numbered: list[tuple[str, Mutant]],
    jobs: int,
    blocked: dict[str, str],
    progress: Callable[[str], None],
    finished: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Every mutant, ``jobs`` at a time; outcomes in the order given, each passed to ``finished``
    as it comes (the session's journal)."""
    lock = threading.Lock()
    done = [0]

    def one(item: tuple[str, Mutant]) -> Outcome:
        mid, mutant = item
        ws = pool.take()
        try:
            outcome = run_mutant(ws, mid, mutant, pool, blocked)
        finally:
            pool.give(ws)
        with lock:
            if finished is not None:
                finished(outcome)
            done[0] += 1
            where = (
                f" by {outcome.stage}: {outcome.test or outcome.detail}" if outcome.status == "killed" else ""
            )
            progress(
                f"[{done[0]}/{len(numbered)}] {mid} {mutant.operator} {mutant.path}:{mutant.line} "
                f"{outcome.status}{where} ({outcome.seconds:.0f} s)"
            )
        return outcome

    with ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(one, numbered))
