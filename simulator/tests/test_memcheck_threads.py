"""memcheck with several faulting threads, as compute-sanitizer reports them: one report per
faulting thread, printed up to the print limit (``run --print-limit``), and every one counted
in the ERROR SUMMARY. A fault stops its block as a GPU's lockstep warp would: the rest of the
faulting thread's warp still runs up to its next barrier (its lanes make the same access
together), no thread after that warp runs and no later round begins. Fibers, plain loops and
block loops find the same.

The program (kernels/program_memcheck_threads.cu) takes one case per run; the expected threads
and counts are worked out here from its kernels (its N and THREADS, warps of 32).
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, line_of, run_cli, run_findings

PROGRAM = KERNELS / "program_memcheck_threads.cu"
WARP = 32
_LOG = re.compile(r"launch log \((\w+)\): kernel '(\w+)' \(launched at [^)]*\) runs ([^:]+)(?:: .+)?$")
_BY = re.compile(r"^=========     by thread \((\d+),0,0\) in block \(0,0,0\) of kernel '(\w+)'")


def _constant(name: str) -> int:
    m = re.search(rf"constexpr int {name} = (\d+);", PROGRAM.read_text())
    assert m, name
    return int(m.group(1))


N, THREADS = _constant("N"), _constant("THREADS")


def _run(case: str, fibers: str, *options: str):
    """(process, how each kernel ran) of the program under memcheck with ``case``."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", "--mode", "memcheck", *options, str(PROGRAM), "--", case, env=env)
    ways = {m.group(2): m.group(3) for ln in proc.stderr.splitlines() if (m := _LOG.match(ln))}
    return proc, ways


def _reported_threads(stderr: str) -> list[int]:
    """The threads the printed fault reports name, in order."""
    return [int(m.group(1)) for ln in stderr.splitlines() if (m := _BY.match(ln))]


def _summary(stderr: str) -> tuple[int, int]:
    """(errors, errors not printed) of the ERROR SUMMARY lines."""
    total = re.search(r"^========= ERROR SUMMARY: (\d+) errors?$", stderr, re.M)
    unprinted = re.search(r"^========= ERROR SUMMARY: (\d+) errors? (?:was|were) not printed", stderr, re.M)
    assert total, stderr[-3000:]
    return int(total.group(1)), int(unprinted.group(1)) if unprinted else 0


def _faulting_warp(faults: list[int]) -> list[int]:
    """The faulting threads that run: those of the first faulting thread's warp."""
    warp = faults[0] // WARP
    return [t for t in faults if t // WARP == warp]


@pytest.mark.parametrize(("fibers", "way"), [("0", "as a plain loop"), ("1", "with fibers")])
def test_each_faulting_thread_of_the_warp_is_reported_and_counted(fibers, way):
    expected = _faulting_warp([t for t in range(THREADS) if t >= N])
    assert len(expected) > 1  # the case is one of several threads
    proc, ways = _run("tail", fibers)
    assert ways == {"read_tail": way}, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stdout == "tail: cudaErrorLaunchFailure\n"
    assert _reported_threads(proc.stderr) == expected, proc.stderr[-3000:]
    found = run_findings(proc.stderr)
    assert len(found) == len(expected), found
    assert all(f"{PROGRAM}:{line_of(PROGRAM, 'PLANT-TAIL')}" in f for f in found), found
    assert _summary(proc.stderr) == (len(expected), 0)


@pytest.mark.parametrize("fibers", ["0", "1"])
def test_the_print_limit_caps_the_reports_and_the_summary_counts_all(fibers):
    expected = _faulting_warp([t for t in range(THREADS) if t >= N])
    limit = len(expected) // 2
    proc, _ = _run("tail", fibers, "--print-limit", str(limit))
    assert _reported_threads(proc.stderr) == expected[:limit], proc.stderr[-3000:]
    assert len(run_findings(proc.stderr)) == limit
    assert _summary(proc.stderr) == (len(expected), len(expected) - limit)
    assert "--print-limit" in proc.stderr.splitlines()[-1]


def test_print_limit_zero_prints_every_report():
    expected = _faulting_warp([t for t in range(THREADS) if t >= N])
    proc, _ = _run("tail", "0", "--print-limit", "0")
    assert _reported_threads(proc.stderr) == expected
    assert _summary(proc.stderr) == (len(expected), 0)


def test_print_limit_is_a_memcheck_option():
    proc = run_cli("run", "--mode", "synccheck", "--print-limit", "3", str(PROGRAM))
    assert proc.returncode == 2
    assert "--print-limit" in proc.stderr and "--mode memcheck" in proc.stderr


@pytest.mark.parametrize(("fibers", "way"), [("0", "as block loops"), ("1", "with fibers")])
def test_a_fault_in_round_one_stops_the_threads_after_its_warp(fibers, way):
    faults = _faulting_warp([t for t in range(THREADS) if t % 8 == 5])
    warp = faults[0] // WARP
    ran = [t for t in range(THREADS) if t // WARP <= warp]  # round 1 in thread order, up to that warp
    assert len(ran) < THREADS  # some threads must not run
    proc, ways = _run("rounds", fibers)
    assert ways == {"two_rounds": way}, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [f"round 1: thread {t}" for t in ran] + [
        "rounds: cudaErrorLaunchFailure"
    ], proc.stdout
    assert _reported_threads(proc.stderr) == faults, proc.stderr[-3000:]
    assert _summary(proc.stderr) == (len(faults), 0)
