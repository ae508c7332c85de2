"""cuBLAS GEMMs as the simulator computes them: each output sums its k products one after another in
order of k, in the compute type, with alpha and beta applied in double afterwards (as
``simulator/runtime/blas_core.h`` documents). The shapes (70 x 53 x 2903, not multiples of any
panel size) are large enough for the product to be shared out between threads; numpy repeats
the same sequence of roundings, one k at a time, so every output must match to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import KERNELS, case_lines, col_major, hashed_values, nvcc_compile, run_cli

PROGRAM = KERNELS / "cublas_order.cu"
M, N, K, BATCH = 70, 53, 2903, 2


def _values(which: int, count: int) -> np.ndarray:
    """The program's ``value(which, i)`` for i < count, as float32."""
    return hashed_values(which, count, 1000, 1024.0)


def _in_order(op_a: np.ndarray, op_b: np.ndarray) -> np.ndarray:
    """sum over l of op_a[:, l] * op_b[l, :], added one l at a time in the inputs' precision."""
    acc = np.zeros((op_a.shape[0], op_b.shape[1]), dtype=op_a.dtype)
    for l in range(op_a.shape[1]):
        acc = acc + np.outer(op_a[:, l], op_b[l, :])
    return acc


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_each_output_sums_its_products_in_order_of_k(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    got = case_lines(proc.stdout)
    a, b, c = _values(0, M * K * BATCH), _values(1, K * N * BATCH), _values(2, M * N * BATCH)
    c0 = col_major(c[: M * N], M, N).astype(np.float64)
    for ta in "NT":
        for tb in "NT":
            op_a = col_major(a[: M * K], M, K) if ta == "N" else col_major(a[: M * K], K, M).T
            op_b = col_major(b[: K * N], K, N) if tb == "N" else col_major(b[: K * N], N, K).T
            want = (_in_order(op_a, op_b).astype(np.float64) - 0.5 * c0).astype(np.float32)
            status, values = got[f"sgemm_{ta}{tb}"]
            assert status == 0
            np.testing.assert_array_equal(values, want.T.ravel(), err_msg=f"sgemm_{ta}{tb}")
    strided = []
    for i in range(BATCH):
        op_a = col_major(a[i * M * K : (i + 1) * M * K], K, M).T
        op_b = col_major(b[i * K * N : (i + 1) * K * N], K, N)
        strided.append(_in_order(op_a, op_b).T.ravel())
    assert got["sgemm_strided_TN"][0] == 0
    np.testing.assert_array_equal(got["sgemm_strided_TN"][1], np.concatenate(strided))
    op_a = col_major(a[: M * K].astype(np.float64), M, K)
    op_b = col_major(b[: K * N].astype(np.float64), K, N)
    assert got["dgemm_NN"][0] == 0
    np.testing.assert_array_equal(got["dgemm_NN"][1], _in_order(op_a, op_b).T.ravel())
    # int8 -> int32: integer sums, exact in any order (the C cast truncates toward zero).
    a8 = np.trunc(a[: M * K].astype(np.float32) * np.float32(127.0)).astype(np.int64)
    b8 = np.trunc(b[: K * N].astype(np.float32) * np.float32(127.0)).astype(np.int64)
    assert got["gemmex_int8_TN"][0] == 0
    want8 = col_major(a8, K, M).T @ col_major(b8, K, N)
    np.testing.assert_array_equal(got["gemmex_int8_TN"][1], want8.T.ravel())


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path, needs_header="cublas_v2.h")
    assert proc.returncode == 0, proc.stderr
