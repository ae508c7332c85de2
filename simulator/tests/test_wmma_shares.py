"""wmma fragments hold one share per lane: num_elements is the per-lane count the CUDA PTX ISA gives
for these shapes, a chain of mma_sync calls with nothing between them multiplies correctly
(the lanes' operand buffers are not overwritten while a slower lane still reads them), the
lanes' shares of D cover every element once, and a warp without 32 lanes is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, line_of, mode_args, nvcc_compile, run_cli

PROGRAM = KERNELS / "wmma_shares.cu"
STEPS, TILES = 4, 12  # the program's kSteps and kBlocks * kWarps

# Elements per lane of each fragment (PTX ISA, "Matrix fragments for WMMA": registers x elements per
# register): f32 accumulator 8, tf32 a/b 4 x 1, f64 a 1 and accumulator 2, s8 a 2 x 4, bf16 b 4 x 2.
PER_LANE = {
    "f32_accumulator_m16n16k16": 8,
    "tf32_a_m16n16k8": 4,
    "tf32_b_m16n16k8": 4,
    "f64_a_m8n8k4": 1,
    "f64_accumulator_m8n8k4": 2,
    "s8_a_m16n16k16": 8,
    "bf16_b_m16n16k16": 8,
}


def _operands(step: int) -> tuple[np.ndarray, np.ndarray]:
    i, k = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    a = ((i * 5 + k * 3 + step * 7) % 9 - 4) * 0.125
    kk, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    b = ((kk * 7 + j * 2 + step * 5) % 11 - 5) * 0.125
    return a, b


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_lane_shares_and_a_chain_of_multiplies(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    lines = proc.stdout.splitlines()
    counts = {ln.split()[1]: int(ln.split()[2]) for ln in lines if ln.startswith("count ")}
    assert counts == PER_LANE
    chains = [ln.split() for ln in lines if ln.startswith("chain ")]
    assert len(chains) == TILES, proc.stdout[-2000:] + proc.stderr
    product = sum(a @ b for a, b in (_operands(s) for s in range(STEPS)))
    for tile, (_, status, *values) in enumerate(chains):
        assert status == "cudaSuccess"
        want = np.sort((product + tile).ravel())  # sums of multiples of 1/64: exact in float
        got = np.sort(np.array(values, dtype=np.float64))
        np.testing.assert_array_equal(got, want, err_msg=f"tile {tile}")
    # The 16-thread block: a launch failure, and one report naming the user's mma_sync line.
    assert "partial cudaErrorLaunchFailure" in lines
    assert f"wmma_shares.cu:{line_of(PROGRAM, 'PARTIAL_MMA')} in kernel 'partial'" in proc.stderr
    assert "warp 0 has 16 threads; a warp matrix operation needs all 32 lanes" in proc.stderr
    assert "ThreadSanitizer" not in proc.stderr and "data race" not in proc.stderr


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
