"""cublasDotEx (HeCBench's dp): float and double dot products of strided vectors against numpy's,
summed in order as cuBLAS's Sdot stand-in sums; a call mixing half and float operands refused with
its types named."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import KERNELS, run_cli
from .test_run import _values

PROGRAM = KERNELS / "cublas_dot_ex.cu"
N = 37


def _vectors(dtype) -> tuple[np.ndarray, np.ndarray]:
    i = np.arange(2 * N)
    x = ((i * 7 % 13) - 6).astype(dtype) / dtype(3)
    y = ((i * 5 % 11) - 5).astype(dtype) / dtype(7)
    return x[::2], y[::2]


def _in_order(x: np.ndarray, y: np.ndarray):
    acc = x.dtype.type(0)
    for a, b in zip(x, y, strict=True):
        acc = x.dtype.type(acc + a * b)
    return acc


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_cublas_dot_ex_matches_numpy_and_refuses_mixed_types(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stderr
    v = _values(proc.stdout)
    for key, dtype in (("dot32", np.float32), ("dot64", np.float64)):
        status, value = v[key].split()
        x, y = _vectors(dtype)
        assert status == "0"  # CUBLAS_STATUS_SUCCESS
        assert dtype(float(value)) == _in_order(x, y)
        assert float(value) == pytest.approx(
            float(np.dot(x.astype(np.float64), y.astype(np.float64))), rel=1e-5
        )
    assert v["dot16"] == "15"  # CUBLAS_STATUS_NOT_SUPPORTED
    assert "cublasDotEx: x CUDA_R_16F, y CUDA_R_32F" in proc.stderr
    assert v["dot_null"] == "7"  # CUBLAS_STATUS_INVALID_VALUE
