"""The shared-memory race check runs a prefix region (one ``if (t < s)`` between barriers,
simulator/block_loops_simd.py) for the threads below its bound only, in the fibers' order: a thread
past the bound makes no access there, and every thread below it is judged as before. Each case runs
as block loops and again with fibers (SIMULATOR_FIBERS=1): the results and the findings, their
threads and kinds included, are the same (kernels/program_prefix_races.cu).
"""

from __future__ import annotations

import re

import pytest

from simulator.source_compile import translate_source

from .conftest import KERNELS, line_of, racecheck_both_ways, run_findings

PROGRAM = KERNELS / "program_prefix_races.cu"


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


def _both_ways(case: str, kernel: str):
    """The block loops' run of ``case``, after checking its output, status and findings (their
    whole text) against the fibers' run."""
    return racecheck_both_ways(PROGRAM, case, kernel, whole_text=True)[0]


@pytest.mark.parametrize("kernel", ["fold_rows", "neighbours", "copy_from"])
def test_the_race_check_gives_a_prefix_region_its_bound(kernel):
    text = translate_source(PROGRAM, "racecheck-shared")
    start = text.index(f"void {kernel}(")
    body = re.sub(r"\n# \d+ \"[^\"]*\"[ \d]*\n", "", text[start : text.index("::__sim::on_device()", start)])
    # A bound that is a name: kPrefixBelow, which the race check's build takes as a fast build does.
    assert "::__sim::kPrefixBelow ? (int)(s) : 2147483647, [&]" in body, body


def test_folds_with_bounds_above_at_within_and_below_the_width_are_clean():
    proc = _both_ways("fold", "fold_rows")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run_findings(proc.stderr) == []
    # Each row's sum is left in its first element: rows of the 32-wide block start at 0, 32, ...
    a = [i % 13 - 6 + i // 64 for i in range(256)]
    lines = proc.stdout.splitlines()
    assert lines[0].split()[5] == str(sum(a[0:32])), lines
    assert lines[1].split()[5] == str(sum(a[0:32])), lines
    assert lines[2].split()[5] == str(sum(a[0:20])), lines
    assert lines[4].split()[5] == str(a[0]), lines  # no level: each element stays


def test_a_race_between_threads_below_the_bound_is_found():
    proc = _both_ways("neighbours", "neighbours")
    assert proc.returncode == 66, proc.stderr[-3000:]
    (finding,) = run_findings(proc.stderr)
    assert "write by kernel neighbours block (0,0,0) thread (1,0,0)" in finding, finding
    assert f"program_prefix_races.cu:{_line('own sum')}; read by several threads" in finding, finding


def test_one_thread_below_the_bound_races_with_none():
    proc = _both_ways("neighbours_one", "neighbours")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run_findings(proc.stderr) == []


@pytest.mark.parametrize("case", ["copy_past", "copy_past_late"])
def test_the_thread_at_the_bound_is_not_judged(case):
    # Thread 20 would store the element the others read; with s = 20 it does nothing.
    proc = _both_ways(case, "copy_from")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run_findings(proc.stderr) == []


def test_the_last_thread_below_the_bound_is_judged():
    proc = _both_ways("copy_within", "copy_from")
    assert proc.returncode == 66, proc.stderr[-3000:]
    (finding,) = run_findings(proc.stderr)
    assert "write by kernel copy_from block (0,0,0) thread (19,0,0)" in finding, finding
    assert f"cu:{_line('copy store')}; read by several threads" in finding, finding
    assert finding.endswith(f"cu:{_line('copy read')}"), finding


def test_a_region_that_starts_below_the_bound_wraps_as_fibers_do():
    # After 55 barriers the region starts at thread 9: threads 9..18 read, 19 stores, 0..8 read.
    proc = _both_ways("copy_within_late", "copy_from")
    assert proc.returncode == 66, proc.stderr[-3000:]
    first, second = run_findings(proc.stderr)
    assert "write by kernel copy_from block (0,0,0) thread (19,0,0)" in first, first
    assert "read by kernel copy_from block (0,0,0) thread (0,0,0)" in second, second
