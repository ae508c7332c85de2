"""Non-finite scores and masks in the CUDA C attention softmax, on rows longer than a block.

The device-generic suite (tests/generic/test_nonfinite.py) checks the rule on small shapes on every backend;
these rows span several warps and blocks of the CUDA C kernel, so a NaN or +inf must survive the
warp-shuffle and shared-memory merges wherever it sits. Expected values come from the rule
itself: a row with a NaN or +inf among its non-excluded keys (after the mask) is all NaN, a row
whose every key is excluded is all zeros, any other row is the float64 softmax of its live keys.
"""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import ref_attn_softmax

from torchlight.core.tensor_data import TensorData

F32 = np.float32
SOFTMAX_TOL = {"rtol": 2e-5, "atol": 1e-6}  # as in test_cuda_c_library.py


def assert_rows(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    np.testing.assert_allclose(got[finite], want[finite], **SOFTMAX_TOL)


@pytest.mark.parametrize("k_len", [300, 1000])
@pytest.mark.parametrize("causal", [False, True])
def test_a_nan_or_inf_anywhere_in_a_long_row_makes_it_nan(runnable, k_len, causal):
    rng = np.random.default_rng(k_len)
    q_len = 6
    x = rng.standard_normal((2, 2, q_len, k_len)).astype(F32)
    # One special value per row, at positions in different warps (and, for 1000, past one block).
    for i, (pos, value) in enumerate(
        [(0, np.nan), (37, np.inf), (k_len - 1, np.nan), (255, np.inf), (3, -np.inf), (k_len // 2, np.nan)]
    ):
        x[0, 0, i, pos] = value
        x[1, 1, q_len - 1 - i, (pos * 7) % k_len] = value
    x[1, 0, 2, 100:] = 3e38  # near overflow: finite, a row of equal maxima
    got = runnable.attn_softmax_fw(TensorData.from_array(x), None, causal).array
    assert_rows(got, ref_attn_softmax(x, None, causal))


@pytest.mark.parametrize("causal", [False, True])
def test_a_nan_or_inf_mask_value_makes_every_row_that_reads_it_nan(runnable, causal):
    rng = np.random.default_rng(5)
    k_len = 300
    x = rng.standard_normal((3, 2, 4, k_len)).astype(F32)
    mask = np.zeros((3, k_len), F32)
    mask[0, 2] = np.nan  # causal rows q < 2 never read key 2
    mask[1, 290] = np.inf
    mask[2, :] = -np.inf  # every key excluded: rows of zeros
    mask[2, 299] = np.nan  # ... unless a NaN sits on a key (NaN + anything is NaN)
    got = runnable.attn_softmax_fw(TensorData.from_array(x), TensorData.from_array(mask), causal).array
    want = ref_attn_softmax(x, mask, causal)
    assert_rows(got, want)
    dy = TensorData.from_array(rng.standard_normal(x.shape).astype(F32))
    dx = runnable.attn_softmax_bw(TensorData.from_array(got), dy).array
    want_dx = got.astype(np.float64) * (dy.array - (got.astype(np.float64) * dy.array).sum(-1, keepdims=True))
    assert_rows(dx, want_dx)
    assert causal or np.isnan(want[:2]).all()


def test_fully_excluded_rows_stay_zero_next_to_nan_rows(runnable):
    x = np.zeros((2, 1, 3, 70), F32)
    x[0, 0, 1, 5] = np.nan
    mask = np.zeros((2, 70), F32)
    mask[1] = -np.inf
    got = runnable.attn_softmax_fw(TensorData.from_array(x), TensorData.from_array(mask), False).array
    assert_rows(got, ref_attn_softmax(x, mask, False))
    np.testing.assert_array_equal(got[1], 0.0)
