"""Device memory is laid out as on a GPU (runtime/device_heap.cpp): small allocations side by side
at 512-byte steps in pages of their own, freed space handed out again zero-filled, large ones in
whole 2 MiB pages. So a kernel that writes a little past a buffer lands in the next buffer and
the program runs on, as on a GPU, instead of corrupting the simulator's heap; memcheck names
the write (kernels/program_device_heap.cu)."""

from __future__ import annotations

import pytest

from .conftest import EVERY_MODE, KERNELS, int_values, line_of, mode_args, nvcc_compile, run_cli

PROGRAM = KERNELS / "program_device_heap.cu"
BIG = 3 << 20  # the program's large allocation, in floats


def _run(mode: str, *args: str):
    return run_cli("run", str(PROGRAM), *mode_args(mode), "--", *args)


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_fresh_and_reused_device_memory_reads_as_zeros_in_every_mode(mode):
    proc = _run(mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = int_values(proc.stdout)
    assert (v["b0"], v["b31"], v["b32"]) == (1000, 1031, 1032)  # fill(b, 100, 1000): 1000 + i
    assert v["reused_nonzero"] == 0
    assert v["big_nonzero"] == BIG and v["big_fresh_nonzero"] == 0
    assert "done" in proc.stdout


@pytest.mark.parametrize("mode", ["fast", "synccheck", "racecheck"])
def test_an_overrun_lands_in_the_next_buffer_as_on_a_gpu(mode):
    proc = _run(mode, "overrun")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = int_values(proc.stdout)
    # a is 100 floats, rounded to 512 bytes (128 floats); b starts right after it.
    assert v["step"] == 512 and v["aligned"] == 1
    assert v["big_page_aligned"] == 1  # a large allocation starts a 2 MiB page, as on a GPU
    # fill(a, 160, 0) stores i at a[i]: a[128..159] are b[0..31]; b[32] keeps 1000 + 32.
    assert (v["b0"], v["b31"], v["b32"]) == (128, 159, 1032)
    assert v["reused"] == 1 and v["reused_nonzero"] == 0
    assert "done" in proc.stdout


def test_memcheck_names_the_overrunning_write():
    proc = _run("memcheck", "overrun")
    # The launch fails as under compute-sanitizer; the program's own check sees it and exits 1.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error cudaErrorLaunchFailure" in proc.stdout
    line = line_of(PROGRAM, "PLANT-OVERRUN")
    summary = [ln.strip() for ln in proc.stderr.splitlines()]
    findings = [ln for ln in summary if ln.startswith("memcheck: heap-buffer-overflow")]
    assert findings and f"program_device_heap.cu:{line}" in findings[0], proc.stderr


def test_the_program_builds_with_nvcc_unchanged(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
