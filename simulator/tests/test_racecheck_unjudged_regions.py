"""The shared-memory racecheck leaves a block-loop region unjudged where no hazard can involve it
(simulator/block_loops_epochs.py): alone between two barriers and writing no shared memory, touching
no shared memory, or storing only to its threads' own elements (test_racecheck_own_cells.py). Each
case runs as block loops and again with fibers (SIMULATOR_FIBERS=1, every access judged): the
findings and results are the same, races through pointers, callees and dynamic shared memory
included (kernels/program_unjudged_regions.cu).
"""

from __future__ import annotations

import pytest

from simulator.source_compile import translate_source

from .conftest import KERNELS, finding_lines, line_of, racecheck_both_ways, racecheck_run, run_findings

PROGRAM = KERNELS / "program_unjudged_regions.cu"
N = 16


def _line(marker: str) -> int:
    return line_of(PROGRAM, f"PLANT: {marker}")


@pytest.fixture(scope="module")
def translated() -> dict[str, str]:
    """The program as the racecheck-shared, full racecheck and fast builds compile it."""
    return {mode: translate_source(PROGRAM, mode) for mode in ("racecheck-shared", "racecheck", "fast")}


def _kernel(text: str, name: str) -> str:
    start = text.index(f"void {name}(")
    return text[start : text.index("\n}", start)]


def test_only_the_shared_race_build_leaves_regions_unjudged(translated):
    assert "for_each_unjudged_thread(*__sim_blk" in _kernel(translated["racecheck-shared"], "tiled")
    for mode in ("racecheck", "fast"):
        assert "for_each_unjudged_thread(*__sim_blk" not in translated[mode], mode
        assert "no_sanitize_thread)) {" not in translated[mode], mode


@pytest.mark.parametrize(
    ("kernel", "unjudged"),
    [
        # the declarations (no shared access), the tile loads (each thread's own elements, while
        # the block is at most TILE x TILE: block_loops_cells.py) and the inner product
        ("tiled", 3),
        # the declarations; the inner product shares its epoch with the next loads, and the loads
        # with the inner product
        ("tiled_one_barrier", 1),
        ("through_pointer", 1),  # the first stores (own elements); the pointer's region is judged
        ("through_callee", 1),  # likewise
        ("dynamic_shared", 0),  # extern __shared__: no extents to keep a thread to its own
        ("shared_atomic", 1),  # the read after the atomic's barrier; the atomic itself is a call
        ("blocks_and_global", 1),  # the reads; the first region stores to global memory too
    ],
)
def test_a_region_is_unjudged_only_where_no_hazard_can_involve_it(translated, kernel, unjudged):
    body = _kernel(translated["racecheck-shared"], kernel)
    assert body.count("for_each_unjudged_thread(*__sim_blk") == unjudged, body


def _product() -> list[int]:
    a = [i % 7 - 3 for i in range(N * N)]
    b = [i % 5 - 2 for i in range(N * N)]
    return [sum(a[r * N + k] * b[k * N + c] for k in range(N)) for r in range(N) for c in range(N)]


def test_the_tiled_product_is_right_and_clean():
    proc, _ = racecheck_both_ways(PROGRAM, "tiled", "tiled")
    c = _product()
    total = sum(v * (i % 11 + 1) for i, v in enumerate(c))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["tiled", "cudaSuccess", str(c[0]), str(c[1]), str(c[65]), str(total)]
    assert run_findings(proc.stderr) == []


@pytest.mark.parametrize(
    ("case", "pair", "way"),
    [
        # the next tile's write after this tile's read by another thread, in one epoch (the
        # checkers keep fibers for it: its loops would reorder the accesses of that epoch)
        ("tiled_one_barrier", (_line("early write"), _line("late read")), "with fibers"),
        ("through_pointer", (_line("pointer write"), _line("read beside a pointer write")), "as block loops"),
        ("through_callee", (_line("callee write"), _line("read beside a callee write")), "as block loops"),
        (
            "dynamic_shared",
            (_line("dynamic write"), _line("read of dynamic shared memory")),
            "as block loops",
        ),
    ],
)
def test_a_region_that_writes_shared_memory_somehow_is_judged(case, pair, way):
    proc, _ = racecheck_both_ways(PROGRAM, case, case, way)
    assert proc.returncode == 66, proc.stderr[-3000:]
    assert pair in finding_lines(PROGRAM, run_findings(proc.stderr)), proc.stderr[-3000:]


def test_an_atomic_on_shared_memory_and_reads_after_it_are_clean():
    proc, _ = racecheck_both_ways(PROGRAM, "shared_atomic", "shared_atomic")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split()[:5] == [
        "shared_atomic",
        "cudaSuccess",
        str(sum(range(64))),
        str(sum(range(64))),
        "0",
    ]
    assert run_findings(proc.stderr) == []


def test_blocks_own_their_shared_memory_and_global_memory_is_judged_only_by_the_full_check():
    proc, _ = racecheck_both_ways(PROGRAM, "blocks_and_global", "blocks_and_global")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # each block sums t * (block + 1) over its 64 threads
    assert proc.stdout.split()[2:5] == [str(sum(range(64)))] * 2 + [str(2 * sum(range(64)))]
    assert run_findings(proc.stderr) == []
    full, _ = racecheck_run(PROGRAM, "blocks_and_global", "0", memory="all")
    assert full.returncode == 66, full.stderr[-3000:]
    assert f"{PROGRAM.name}:{_line('global write')}" in "\n".join(run_findings(full.stderr))
