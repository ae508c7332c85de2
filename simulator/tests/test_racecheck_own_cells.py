"""The shared-memory racecheck leaves a block-loop region unjudged where its only shared-memory
accesses are stores to each thread's own elements (simulator/block_loops_cells.py), for the block
shapes that keep them so; any other shape runs the judged copy. Each case runs as block loops and
again with fibers (SIMULATOR_FIBERS=1, every access judged): the results and findings are the same
(kernels/program_own_cells.cu).
"""

from __future__ import annotations

import pytest

from simulator.source_compile import translate_source

from .conftest import KERNELS, finding_lines, line_of, racecheck_both_ways, run_findings

PROGRAM = KERNELS / "program_own_cells.cu"
UNJUDGED = "for_each_unjudged_thread(*__sim_blk"


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


@pytest.fixture(scope="module")
def translated() -> str:
    """The program as the racecheck-shared build compiles it."""
    return translate_source(PROGRAM, "racecheck-shared")


def _kernel(text: str, name: str) -> str:
    start = text.index(f"void {name}(")
    return text[start : text.index("\n}", start)]


@pytest.mark.parametrize(
    ("kernel", "guard"),
    [
        ("tiles", "__sim_blk->dim.x <= 8u && __sim_blk->dim.y <= 8u && __sim_blk->dim.z == 1u"),
        ("rows_share", "__sim_blk->dim.x <= 64u && __sim_blk->dim.y == 1u && __sim_blk->dim.z == 1u"),
        ("neighbour_store", None),
        ("store_and_read", None),
    ],
)
def test_own_element_stores_are_unjudged_only_under_their_shape(translated, kernel, guard):
    body = _kernel(translated, kernel)
    if guard is None:
        assert "if (__sim_blk->dim" not in body, body
    else:
        assert f" if ({guard}) ::__sim::{UNJUDGED}" in body, body


def test_tiles_of_their_own_shape_are_right_and_clean():
    proc, _ = racecheck_both_ways(PROGRAM, "tiles", "tiles")
    a = [i % 7 - 3 for i in range(64)]
    want = [
        sum((a[r * 8 + k] + r * 8 + k) * 2 * a[k * 8 + c] for k in range(8))
        for r in range(8)
        for c in range(8)
    ]
    total = sum(v * (i % 11 + 1) for i, v in enumerate(want))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["tiles", "cudaSuccess", str(want[0]), str(want[9]), str(total)]
    assert run_findings(proc.stderr) == []


@pytest.mark.parametrize(
    ("case", "kernel", "pair"),
    [
        # 16x4 threads on 8x8 tiles: (8, 0) stores where (0, 1) does
        ("tiles_wide", "tiles", (_line("tile store"), _line("tile store"))),
        ("rows_share", "rows_share", (_line("row store"), _line("row store"))),
        ("neighbour_store", "neighbour_store", (_line("neighbour store"), _line("own store"))),
        (
            "store_and_read",
            "store_and_read",
            (_line("store beside a read"), _line("read of the neighbour's")),
        ),
    ],
)
def test_stores_that_other_threads_meet_are_judged(case, kernel, pair):
    proc, _ = racecheck_both_ways(PROGRAM, case, kernel)
    assert proc.returncode == 66, proc.stderr[-3000:]
    assert pair in finding_lines(PROGRAM, run_findings(proc.stderr)), proc.stderr[-3000:]
