"""Host API that real programs use beyond the core: stream-ordered memory and memory pools,
stream attributes, the device attributes programs test first, names gone from current CUDA,
and the C headers NVIDIA's <cuda_runtime.h> brings in. Expected values come from the programs'
own arithmetic and from the modelled sm_80 device described in simulator/README.md."""

from __future__ import annotations

import subprocess

import pytest

from .conftest import KERNELS, run_cli
from .test_run import _nvcc, _values

STREAM_MEMORY = KERNELS / "program_stream_memory.cu"
LEGACY = KERNELS / "program_legacy.cu"
N = 1000  # the programs' element count


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_stream_ordered_memory_pools_and_stream_attributes(mode):
    proc = run_cli("run", str(STREAM_MEMORY), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert "failed" not in v, v
    # An A100 (sm_80): pools supported, a 30 MiB persisting-L2 limit, 128 MiB - 4 KiB windows.
    assert v["pools_supported"] == "1"
    assert int(v["persisting_max"]) == 30 * 1024 * 1024
    assert int(v["window_max"]) == 128 * 1024 * 1024 - 4096
    assert v["prop_matches"] == "1"
    # The default pool holds the one cudaMallocAsync buffer of N floats.
    assert int(v["default_used"]) == N * 4
    assert int(v["threshold"]) == 1 << 20
    # A pool of 6000 bytes takes one buffer of 4000 and refuses a second.
    assert v["over_limit"] == "cudaErrorMemoryAllocation"
    assert int(v["own_used"]) == N * 4
    assert int(v["own_used_after_free"]) == 0
    assert int(v["own_high"]) == N * 4
    assert int(v["window_bytes"]) == N * 4
    assert float(v["window_hit_ratio"]) == pytest.approx(0.6)
    assert v["window_too_big"] == "cudaErrorInvalidValue"
    assert float(v["last"]) == 2.0 * (N - 1)  # iota_scaled with scale 2, through the copies
    assert "finding" not in proc.stderr


def test_legacy_names_run_as_their_current_equivalents_with_one_note_each():
    proc = run_cli("run", str(LEGACY), "--mode", "memcheck")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert v["last"] == str(63 + 3)  # three launches of add_one on iota
    assert v["stack"] == "1024"  # cudaLimitStackSize's default on sm_80
    assert v["clock_ok"] == "1"  # time() without <time.h>, memcpy() without <string.h>
    assert v["missing_configuration"] == "52 __global__ function call is not configured"
    notes = [ln for ln in proc.stderr.splitlines() if "gone from current CUDA" in ln]
    # Three launches call cudaThreadSynchronize three times: one note for it, one for each other name.
    assert notes == [
        "note (simulator): cudaThreadSynchronize is gone from current CUDA; it runs as cudaDeviceSynchronize",
        "note (simulator): cudaThreadGetLimit is gone from current CUDA; it runs as cudaDeviceGetLimit",
        "note (simulator): cudaThreadExit is gone from current CUDA; it runs as cudaDeviceReset",
    ]


def test_the_stream_memory_program_builds_with_nvcc(tmp_path):
    proc = subprocess.run(
        [_nvcc(), "-c", str(STREAM_MEMORY), "-o", str(tmp_path / "p.o")],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
