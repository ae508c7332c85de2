"""The shared-memory racecheck judges a block-loop region alone in its epoch once per block from the
ranges of its accesses (simulator/block_loops_bulk.py): unjudged where no two threads meet at a
byte one of them writes, access by access otherwise. Each case runs as block loops and again with
fibers (SIMULATOR_FIBERS=1, every access judged): the output, the status and the findings (their
whole text: kind, thread, line) are the same; the launch log's count says which way the regions
ran (kernels/program_bulk_races.cu).
"""

from __future__ import annotations

import re

import pytest

from simulator.source_compile import translate_source

from .conftest import KERNELS, line_of, racecheck_both_ways, run_findings

PROGRAM = KERNELS / "program_bulk_races.cu"
_COUNT = re.compile(r"regions judged in bulk ran (\d+) time\(s\) unjudged, (\d+) judged")


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


def _both_ways(case: str, kernel: str) -> tuple:
    """The block loops' run of ``case`` and its (unjudged, judged) counts of regions judged in bulk,
    after checking its output, status and findings against the fibers' run."""
    loops, fibers = racecheck_both_ways(PROGRAM, case, kernel, whole_text=True)
    (counts,) = _COUNT.findall(loops.stderr)
    assert _COUNT.findall(fibers.stderr) == []  # fibers run no block-loop region: no count
    return loops, (int(counts[0]), int(counts[1]))


def _kernel(text: str, name: str) -> str:
    start = text.index(f"void {name}(")
    return text[start : text.index("::__sim::on_device()", start)]


def test_only_the_race_checks_build_judges_in_bulk():
    body = _kernel(translate_source(PROGRAM, "racecheck-shared"), "tree")
    # The reduction's level, with its bound: the prefix region's fast form where it is clean.
    assert body.count("::__sim::bulk_clean(*__sim_blk, ::__sim::kPrefixBelow ? (int)(") == 1, body
    assert body.count("::__sim::for_each_bulk_thread<true>(*__sim_blk, ::__sim::kPrefixBelow") == 1, body
    # The last region (a read of sm[0] after the loop's barrier) is alone in its epoch too.
    assert body.count("::__sim::for_each_bulk_thread<false>(*__sim_blk, 2147483647") == 1, body
    for mode in ("fast", "memcheck"):
        assert "bulk_clean" not in translate_source(PROGRAM, mode)


def test_the_tree_sum_runs_unjudged_and_clean():
    proc, counts = _both_ways("tree", "tree")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run_findings(proc.stderr) == []
    a = [i % 13 - 6 + i // 64 for i in range(128)]
    assert proc.stdout.split()[2:4] == [str(sum(a[:64])), str(sum(a[64:]))], proc.stdout
    # Two blocks, each its six levels and its last region unjudged.
    assert counts == (14, 0)


@pytest.mark.parametrize(
    ("case", "kernel", "counts"),
    [
        ("strided", "strided", (21, 0)),  # strides 1, 2 and -1: three launches of six levels and the last
        ("halves", "halves", (8, 0)),  # two threads' 2-byte elements in one 4-byte word: no race
    ],
)
def test_clean_levels_of_other_strides_and_sizes_run_unjudged(case, kernel, counts):
    proc, found = _both_ways(case, kernel)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert run_findings(proc.stderr) == []
    assert found == counts


@pytest.mark.parametrize(
    ("case", "kernel", "marker", "kind", "thread"),
    [
        # t <= s: thread s stores sm[s], which thread 0 reads (no prefix bound: each level judged).
        ("bound_off", "bound_off", "bound off by one", "write", "(32,0,0)"),
        # sm[t + s - 1]: thread 0 reads what thread s - 1 stores (the one-thread level runs unjudged).
        ("read_low", "read_low", "read one too low", "write", "(31,0,0)"),
        # stride 0: every thread of the level stores to one element.
        ("strided_zero", "strided", "strided level", "read", "(1,0,0)"),
        # 2-byte elements, each thread reading its neighbour's half of a word.
        ("halves_shifted", "halves", "half level", "write", "(1,0,0)"),
        # (unsigned)t + 0xffffffff wraps to t - 1: exact in 64 bits it would lie apart.
        ("wraps", "wraps", "wrapped read", "read", "(2,0,0)"),
        # A block of two rows: threads (x, 0) and (x, 1) store to one element.
        ("tree_rows", "tree", "tree level", "read", "(31,0,0)"),
    ],
)
def test_planted_races_are_judged_and_found_as_with_fibers(case, kernel, marker, kind, thread):
    proc, (_unjudged, judged) = _both_ways(case, kernel)
    first = f"{kind} by kernel {kernel} block (0,0,0) thread {thread}"
    assert proc.returncode == 66, proc.stderr[-3000:]
    findings = run_findings(proc.stderr)
    assert any(first in f and f"program_bulk_races.cu:{_line(marker)};" in f for f in findings), findings
    assert judged > 0


@pytest.mark.parametrize(("case", "status"), [("same_value_warp", 0), ("same_value_warps", 66)])
def test_one_element_stored_by_many_threads_is_judged(case, status):
    # One warp's same value is a warning only, two warps' a race: both as with fibers.
    proc, counts = _both_ways(case, "same_value")
    assert proc.returncode == status, proc.stderr[-3000:]
    assert "warning (not a hazard)" in proc.stderr
    assert counts == (1, 1)  # the store judged, the last region (reads only) not
