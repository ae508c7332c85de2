"""The shared-memory racecheck leaves a block-loop region unjudged where its only shared-memory
accesses are stores to each thread's own elements (simulator/block_loops_cells.py), for the block
shapes that keep them so; any other shape runs the judged copy. Each case runs as block loops and
again with fibers (SIMULATOR_FIBERS=1, every access judged): the results and findings are the same
(kernels/program_own_cells.cu).
"""

from __future__ import annotations

import re

import pytest

from simulator.source_compile import translate_source

from .conftest import KERNELS, launch_ways, line_of, run_cli, run_findings

PROGRAM = KERNELS / "program_own_cells.cu"
UNJUDGED = "for_each_unjudged_thread(*__sim_blk"


def _run(case: str, fibers: str):
    """(process, how each kernel ran) of the program's ``case`` under racecheck of shared memory."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", str(PROGRAM), "--mode", "racecheck", "--", case, env=env)
    return proc, launch_ways(proc.stderr)


def _pairs(findings: list[str]) -> set[tuple[int, ...]]:
    """Each finding's program lines: the later access's, then the earlier one's."""
    return {tuple(int(n) for n in re.findall(rf"{PROGRAM.name}:(\d+)", f)) for f in findings}


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


def _both_ways(case: str, kernel: str):
    """The block loops' run of ``case``, after checking it against the fibers' run."""
    loops, ways = _run(case, "0")
    fibers, fiber_ways = _run(case, "1")
    assert ways == {kernel: "as block loops"}, loops.stderr[-3000:]
    assert fiber_ways == {kernel: "with fibers"}, fibers.stderr[-3000:]
    assert loops.returncode == fibers.returncode, loops.stderr[-3000:]
    assert loops.stdout == fibers.stdout
    assert _pairs(run_findings(loops.stderr)) == _pairs(run_findings(fibers.stderr))
    return loops


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
    proc = _both_ways("tiles", "tiles")
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
    proc = _both_ways(case, kernel)
    assert proc.returncode == 66, proc.stderr[-3000:]
    assert pair in _pairs(run_findings(proc.stderr)), proc.stderr[-3000:]
