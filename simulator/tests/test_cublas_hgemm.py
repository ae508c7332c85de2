"""cuBLAS's half-precision GEMMs (kernels/cublas_hgemm.cu): cublasHgemm, HgemmStridedBatched and
HgemmBatched are cublasGemmEx with CUDA_R_16F matrices and scalars and CUBLAS_COMPUTE_16F, as
cuBLAS defines them. numpy repeats the simulator's documented roundings for that compute type
(docs/libraries.md: the products summed one after another in order of k in float, alpha and beta
applied in double, the result rounded to half), so every output must match to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import KERNELS, case_lines, col_major, hashed_values, nvcc_compile, run_cli

PROGRAM = KERNELS / "cublas_hgemm.cu"
M, N, K, BATCH = 13, 7, 301, 3
ALPHA, BETA = 1.5, -0.5


def _values(which: int, count: int) -> np.ndarray:
    """The program's ``value(which, i)`` for i < count, as float32 (each exact in half)."""
    return hashed_values(which, count, 255, 256.0)


def _hgemm(op_a: np.ndarray, op_b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """alpha * op_a @ op_b + beta * c, column-major flat, rounded as the compute type does."""
    acc = np.zeros((op_a.shape[0], op_b.shape[1]), dtype=np.float32)
    for l in range(op_a.shape[1]):  # half products are exact in float: one rounding per addition
        acc = acc + np.outer(op_a[:, l], op_b[l, :])
    out = ALPHA * acc.astype(np.float64) + BETA * c.astype(np.float64)
    return out.astype(np.float32).astype(np.float16).astype(np.float64).T.ravel()


def _op(values: np.ndarray, rows: int, cols: int, trans: str) -> np.ndarray:
    """op(X) of the rows x cols operand stored column-major (transposed storage for 'T')."""
    return col_major(values, rows, cols) if trans == "N" else col_major(values, cols, rows).T


@pytest.fixture(scope="module")
def got() -> dict:
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "bad_lda 7" in proc.stdout  # CUBLAS_STATUS_INVALID_VALUE
    return case_lines(proc.stdout)


def _inputs(i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sa, sb, sc = M * K, K * N, M * N
    a, b, c = _values(0, sa * BATCH), _values(1, sb * BATCH), _values(2, sc * BATCH)
    return a[i * sa : (i + 1) * sa], b[i * sb : (i + 1) * sb], col_major(c[i * sc : (i + 1) * sc], M, N)


@pytest.mark.parametrize("ta", "NT")
@pytest.mark.parametrize("tb", "NT")
def test_hgemm_every_transpose_pair(got, ta, tb):
    a, b, c = _inputs(0)
    status, values = got[f"hgemm_{ta}{tb}"]
    assert status == 0
    np.testing.assert_array_equal(values, _hgemm(_op(a, M, K, ta), _op(b, K, N, tb), c))


@pytest.mark.parametrize(
    ("name", "ta", "tb"), [("hgemm_strided_TN", "T", "N"), ("hgemm_batched_NT", "N", "T")]
)
def test_batched_hgemms_compute_each_matrix_of_the_batch(got, name, ta, tb):
    status, values = got[name]
    assert status == 0
    want = [_hgemm(_op(a, M, K, ta), _op(b, K, N, tb), c) for a, b, c in map(_inputs, range(BATCH))]
    np.testing.assert_array_equal(values, np.concatenate(want))


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path, needs_header="cublas_v2.h")
    assert proc.returncode == 0, proc.stderr
