"""Double-precision wmma (m8n8k4, as dmmaTensorCoreGemm uses it): D = A * B + C with the
accumulator loaded row- or column-major from shared memory and stored in both layouts. The
inputs are small multiples of 1/32, so every double sum is exact and D must equal numpy's."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, run_cli

# The double-precision case of the wmma_shares.cu program ("double"): one build per mode for both.
PROGRAM = KERNELS / "wmma_shares.cu"
M, N, K = 16, 24, 12  # the program's matrix sizes


def _formula(rows: int, cols: int, a: int, b: int, mod: int, shift: int, scale: float) -> np.ndarray:
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    return ((i * a + j * b) % mod - shift).astype(np.float64) * scale


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_double_fragments_accumulate_onto_a_loaded_c(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), "--", "double")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    a = _formula(M, K, 7, 3, 9, 4, 0.25)
    b = _formula(K, N, 5, 11, 7, 3, 0.5)
    c = _formula(M, N, 3, 13, 11, 5, 0.125)
    want = a @ b + c
    lines = proc.stdout.splitlines()
    cases = [i for i, ln in enumerate(lines) if ln.startswith("case ")]
    assert [lines[i] for i in cases] == [f"case c_col_major={k} cudaSuccess" for k in (0, 1)]
    for i in cases:
        row = np.array(lines[i + 1].split()[1:], dtype=np.float64)
        col = np.array(lines[i + 2].split()[1:], dtype=np.float64)
        np.testing.assert_array_equal(row, want.ravel())
        np.testing.assert_array_equal(col, want.T.ravel())


# nvcc builds the program in test_wmma_shares.py (one program holds this module's case).
