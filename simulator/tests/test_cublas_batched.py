"""cuBLAS's pointer-array batched calls (cuda-samples' batchCUBLAS and simpleCUBLAS_LU):
cublasDgemmBatched against numpy's products, and cublasS/DgetrfBatched against LAPACK's getf2
(partial pivoting, row swaps across the whole matrix, 1-based pivots, the first zero pivot in
info) written in numpy, and against P @ A == L @ U."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import KERNELS, case_lines, col_major, run_cli
from .test_run import _values

PROGRAM = KERNELS / "cublas_batched.cu"
M, N, K, BATCH = 5, 4, 3, 2
LU_N, LDA = 6, 7


def _formula(which: int, count: int) -> np.ndarray:
    i = np.arange(count)
    return ((i * (7 + 2 * which) + which * 5) % 17 - 8) * 0.25


def _getf2(a: np.ndarray, pivoting: bool = True) -> tuple[np.ndarray, list[int], int]:
    """LAPACK's unblocked LU of square ``a`` in its own precision: (LU in place, pivots, info)."""
    a = a.copy()
    n = a.shape[0]
    pivots, info = [], 0
    for j in range(n):
        p = j + int(np.argmax(np.abs(a[j:, j]))) if pivoting else j
        pivots.append(p + 1)
        if a[p, j] == 0:
            info = info or j + 1
        else:
            a[[j, p], :] = a[[p, j], :]
            a[j + 1 :, j] = a[j + 1 :, j] / a[j, j]
        a[j + 1 :, j + 1 :] -= np.outer(a[j + 1 :, j], a[j, j + 1 :])
    return a, pivots, info


def _unit_lower_upper(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.tril(lu, -1) + np.eye(lu.shape[0], dtype=lu.dtype), np.triu(lu)


def _permuted(a: np.ndarray, pivots: list[int]) -> np.ndarray:
    a = a.copy()
    for j, p in enumerate(pivots):
        a[[j, p - 1], :] = a[[p - 1, j], :]
    return a


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_batched_gemm_and_lu_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    got = case_lines(proc.stdout)
    for ta in "NT":
        for tb in "NT":
            for i in range(BATCH):
                a, b, c = _formula(i, M * K), _formula(2 + i, K * N), _formula(4 + i, M * N)
                op_a = col_major(a, M, K) if ta == "N" else col_major(a, K, M).T
                op_b = col_major(b, K, N) if tb == "N" else col_major(b, N, K).T
                want = 1.5 * (op_a @ op_b) - 0.5 * col_major(c, M, N)
                status, values = got[f"dgemm_batched_{ta}{tb}_{i}"]
                assert status == 0
                np.testing.assert_allclose(values, want.T.ravel(), rtol=1e-14, atol=1e-14)

    pivots_all = got["dgetrf_pivots"][1].astype(int)
    infos = got["dgetrf_info"][1].astype(int)
    for i in range(3):
        full = col_major(_formula(1 + i, LDA * LU_N), LDA, LU_N)
        if i == 2:
            full[:, 2] = 0.0  # the program zeroes column 2 of the third matrix
        a = full[:LU_N]
        lu, pivots, info = _getf2(a)
        status, values = got[f"dgetrf_{i}"]
        assert status == 0
        out = col_major(values, LDA, LU_N)
        np.testing.assert_array_equal(out[LU_N:], full[LU_N:])  # the rows past n stay as they were
        np.testing.assert_allclose(out[:LU_N], lu, rtol=1e-12, atol=1e-12)
        assert list(pivots_all[i * LU_N : (i + 1) * LU_N]) == pivots
        assert infos[i] == info
        if info == 0:
            low, up = _unit_lower_upper(out[:LU_N])
            np.testing.assert_allclose(_permuted(a, pivots), low @ up, rtol=1e-12, atol=1e-12)
    assert infos[2] == 3  # the zeroed column: U(3,3) is exactly zero

    a32 = col_major(_formula(1, LDA * LU_N), LDA, LU_N)[:LU_N].astype(np.float32)
    lu32, pivots32, info32 = _getf2(a32)
    status, values = got["sgetrf_0"]
    assert status == 0
    np.testing.assert_allclose(col_major(values, LDA, LU_N)[:LU_N], lu32, rtol=1e-5, atol=1e-6)
    assert list(got["sgetrf_pivots"][1].astype(int)) == pivots32
    assert int(got["sgetrf_info"][1][0]) == info32

    a = col_major(_formula(1, LDA * LU_N), LDA, LU_N)[:LU_N] + 10.0 * np.eye(LU_N)
    lu, _, info = _getf2(a, pivoting=False)
    status, values = got["dgetrf_nopiv"]
    assert status == 0 and info == 0 and int(got["dgetrf_nopiv_info"][1][0]) == 0
    out = col_major(values, LDA, LU_N)[:LU_N]
    np.testing.assert_allclose(out, lu, rtol=1e-12, atol=1e-12)
    low, up = _unit_lower_upper(out)
    np.testing.assert_allclose(a, low @ up, rtol=1e-12, atol=1e-12)

    v = _values(proc.stdout)
    assert v["bad_lda"] == "7" and v["bad_batch"] == "7"  # CUBLAS_STATUS_INVALID_VALUE
    assert v["bad_handle"] == "1"  # CUBLAS_STATUS_NOT_INITIALIZED
    assert v["bad_gemm_batch"] == "7"
    assert "parameter lda has an illegal value" in proc.stderr
    assert "finding" not in proc.stderr
