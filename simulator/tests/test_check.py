"""``python -m simulator check``: every planted bug is caught by its mode, with the kind,
kernel, block, thread and source line in the report; the fixed twins and the shipped
kernels run clean."""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, run_cli, shipped_sources

# (source, entry suffix, mode, the kind the report must name, the planted line's marker). A mode's
# plants share one source (planted_memcheck.cu, planted_synccheck.cu), which it compiles once.
PLANTS = [
    ("planted_memcheck.cu", "offbyone", "memcheck", "heap-buffer-overflow", "PLANT: off by one"),
    (
        "planted_memcheck.cu",
        "shared_oob",
        "memcheck",
        "index 64 out of bounds",
        "PLANT: static shared read",
    ),
    (
        "planted_memcheck.cu",
        "dynamic_shared_oob",
        "memcheck",
        "heap-buffer-overflow",
        "PLANT: dynamic shared",
    ),
    ("planted_memcheck.cu", "use_after_free", "memcheck", "heap-use-after-free", "PLANT: use after free"),
    ("planted_missing_sync.cu", "missing_sync", "racecheck", "data race", "PLANT: write"),
    (
        "planted_synccheck.cu",
        "divergent_barrier",
        "synccheck",
        "divergent __syncthreads",
        "PLANT: barrier in the branch",
    ),
    (
        "planted_synccheck.cu",
        "divergent_shuffle",
        "synccheck",
        "lanes that have exited",
        "PLANT: half-warp shuffle",
    ),
    # One source line, different barriers: told apart by how many each thread reaches.
    (
        "planted_synccheck.cu",
        "same_line_barrier",
        "synccheck",
        "divergent __syncthreads",
        "PLANT: same line",
    ),
    (
        "planted_synccheck.cu",
        "helper_barrier",
        "synccheck",
        "divergent __syncthreads",
        "PLANT: helper barrier",
    ),
    (
        "planted_synccheck.cu",
        "helper_barrier_exit",
        "synccheck",
        "divergent __syncthreads",
        "PLANT: helper barrier",
    ),
    (
        "planted_synccheck.cu",
        "helper_shuffle",
        "synccheck",
        "lanes that have exited",
        "PLANT: helper shuffle",
    ),
]


def _line_of(source: str, marker: str) -> int:
    for i, line in enumerate((KERNELS / source).read_text().splitlines(), start=1):
        if marker in line:
            return i
    raise AssertionError(f"marker {marker!r} not in {source}")


@pytest.mark.parametrize("source,name,mode,kind,marker", PLANTS, ids=[p[1] for p in PLANTS])
def test_planted_bug_is_caught(source, name, mode, kind, marker):
    proc = run_cli("check", str(KERNELS / source), "--entry", f"planted_{name}", "--mode", mode)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    summary = [ln for ln in proc.stdout.splitlines() if ln.startswith("  ") and not ln.startswith("  |")]
    text = "\n".join(summary)
    assert f"{mode}: FAILED" in proc.stdout
    assert kind in text
    assert f"{KERNELS / source}:{_line_of(source, marker)}" in text
    assert re.search(r"kernel '?\w+'? block \(\d+,\d+,\d+\)", text), text
    assert re.search(r"thread \(\d+,\d+,\d+\)", text), text


@pytest.mark.parametrize("source,name,mode", [(p[0], p[1], p[2]) for p in PLANTS], ids=[p[1] for p in PLANTS])
def test_fixed_twin_is_clean(source, name, mode):
    proc = run_cli("check", str(KERNELS / source), "--entry", f"fixed_{name}", "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{mode}: clean" in proc.stdout


def test_an_early_return_before_any_barrier_is_not_a_divergence():
    # Threads that leave before the block's first barrier are not waited for (as on a GPU);
    # only threads that took part in barriers must all reach the same ones.
    src = str(KERNELS / "planted_synccheck.cu")
    proc = run_cli("check", src, "--entry", "early_return_then_barriers", "--mode", "synccheck")
    assert proc.returncode == 0, proc.stdout
    assert "synccheck: clean" in proc.stdout


def test_missing_sync_is_not_a_memcheck_or_synccheck_finding():
    # The race is only racecheck's to find: the other modes must not flag correct memory use.
    src = str(KERNELS / "planted_missing_sync.cu")
    for mode in ("memcheck", "synccheck"):
        proc = run_cli("check", src, "--entry", "planted_missing_sync", "--mode", mode)
        assert proc.returncode == 0, proc.stdout


def test_nonzero_entry_result_fails_the_check(tmp_path):
    src = tmp_path / "rc.cu"
    src.write_text('extern "C" int returns_seven(void) { return 7; }\n')
    proc = run_cli("check", str(src), "--entry", "returns_seven", "--mode", "synccheck")
    assert proc.returncode == 1
    assert "entry 'returns_seven' returned 7" in proc.stdout


def test_device_memory_leak_is_reported(tmp_path):
    src = tmp_path / "leak.cu"
    src.write_text(
        '#include <cuda_runtime.h>\nextern "C" int leaks(void) { void* p; return (int)cudaMalloc(&p, 64); }\n'
    )
    proc = run_cli("check", str(src), "--entry", "leaks", "--mode", "memcheck")
    assert proc.returncode == 1
    assert "device memory leak" in proc.stdout


@pytest.mark.parametrize("mode", ["memcheck", "racecheck", "synccheck"])
def test_shipped_kernels_are_clean(mode):
    sources = [str(p) for p in shipped_sources()]
    proc = run_cli(
        "check", str(KERNELS / "shipped_entry.cu"), *sources, "--entry", "shipped_all", "--mode", mode
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{mode}: clean (shipped_all returned 0)" in proc.stdout


def test_shipped_kernels_are_race_free_when_blocks_take_second_items():
    # shipped_small_grid.cu caps the grid at 2 blocks, so every block runs a second row, and a
    # second (tile, chunk) item of the layer-norm parameter gradients over the shared tile of the first.
    shipped_sources()
    proc = run_cli(
        "check", str(KERNELS / "shipped_small_grid.cu"), "--entry", "shipped_all", "--mode", "racecheck"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "racecheck: clean (shipped_all returned 0)" in proc.stdout


def test_syncwarp_orders_a_warp_exchange_and_its_absence_is_a_race():
    src = str(KERNELS / "warp_sync.cu")
    clean = run_cli("check", src, "--entry", "with_syncwarp", "--mode", "all")
    assert clean.returncode == 0, clean.stdout
    racy = run_cli("check", src, "--entry", "without_syncwarp", "--mode", "racecheck")
    assert racy.returncode == 1
    assert "data race" in racy.stdout
    assert f"{src}:{_line_of('warp_sync.cu', 'PLANT: write')}" in racy.stdout
