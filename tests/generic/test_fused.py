"""The fused backend ops (attn_softmax_fw/bw, layernorm_fw/bw) against float64 numpy references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tl_testing import LIMITS, assert_close, dtypes, grid, laid_out, ref_attn_softmax, shapes, uniform

from torchlight.core.tensor_data import TensorData


@st.composite
def attn_shapes(draw):
    side = st.integers(1, LIMITS.attn_side)
    return tuple(draw(side) for _ in range(4))


@pytest.mark.op("attn_softmax_fw")
@given(data=st.data(), shape=attn_shapes(), dtype=dtypes, causal=st.booleans(), masked=st.booleans())
def test_attn_softmax_fw(backend, data, shape, dtype, causal, masked):
    x, xx = data.draw(laid_out(shape, dtype, uniform(-6, 6)))
    mask = xm = None
    if masked:
        mask, xm = data.draw(laid_out((shape[0], shape[3]), dtype, grid((0.0, -2.0, 1.0, -np.inf))))
    y = backend.attn_softmax_fw(x, mask, causal)
    assert y.shape == shape and y.dtype == dtype
    assert_close(y, ref_attn_softmax(xx, xm, causal), dtype, scale=shape[3])


@pytest.mark.op("attn_softmax_bw")
@given(data=st.data(), shape=attn_shapes(), dtype=dtypes)
def test_attn_softmax_bw(backend, data, shape, dtype):
    # y is a genuine softmax output (rows sum to 1), possibly with fully masked zero rows.
    logits = data.draw(laid_out(shape, np.float64, uniform(-3, 3)))[1]
    mask = data.draw(laid_out((shape[0], shape[3]), np.float64, grid((0.0, -np.inf))))[1]
    y_ref = ref_attn_softmax(logits, mask, causal=data.draw(st.booleans()))
    y = TensorData.from_array(y_ref.astype(dtype))
    dy, xdy = data.draw(laid_out(shape, dtype))
    dx = backend.attn_softmax_bw(y, dy)
    yv = y.array.astype(np.float64)
    expected = yv * (xdy - (xdy * yv).sum(axis=-1, keepdims=True))
    assert dx.shape == shape and dx.dtype == dtype
    assert_close(dx, expected, dtype, scale=shape[3] * 3)


@st.composite
def layernorm_inputs(draw, dtype):
    lead = draw(shapes(0, 2))
    hidden = draw(st.integers(1, LIMITS.max_hidden))
    x = draw(laid_out((*lead, hidden), dtype, uniform(-3, 3)))
    gamma = draw(laid_out((hidden,), dtype, uniform(0.5, 2)))
    beta = draw(laid_out((hidden,), dtype))
    return x, gamma, beta


def _forward_error_scale(xx: np.ndarray, xg: np.ndarray, eps: float) -> float:
    # Rounding in the mean grows with the row length and is multiplied by rstd and gamma.
    hidden = xx.shape[-1]
    rstd = 1.0 / np.sqrt(xx.var(axis=-1) + eps) if xx.size else np.ones(1)
    return hidden * max(np.abs(xx).max(initial=1.0), 1.0) * max(rstd.max(initial=1.0), 1.0) * np.abs(xg).max()


@pytest.mark.op("layernorm_fw")
@given(data=st.data(), dtype=dtypes, eps=st.sampled_from([1e-5, 1e-2]))
def test_layernorm_fw(backend, data, dtype, eps):
    (x, xx), (g, xg), (b, xb) = data.draw(layernorm_inputs(dtype))
    y, mean, rstd = backend.layernorm_fw(x, g, b, eps)
    rows = x.shape[:-1]
    assert y.shape == x.shape and mean.shape == rows and rstd.shape == rows
    assert y.dtype == mean.dtype == rstd.dtype == dtype
    ref_mean = xx.mean(axis=-1)
    ref_rstd = 1.0 / np.sqrt(((xx - ref_mean[..., None]) ** 2).mean(axis=-1) + eps)
    hidden = x.shape[-1]
    assert_close(mean, ref_mean, dtype, scale=hidden * 3, what="mean")
    assert_close(rstd, ref_rstd, dtype, scale=hidden * 3 / np.sqrt(eps), what="rstd")
    expected = (xx - ref_mean[..., None]) * ref_rstd[..., None] * xg + xb
    assert_close(y, expected, dtype, scale=_forward_error_scale(xx, xg, eps), what="y")


@pytest.mark.op("layernorm_bw")
@given(data=st.data(), dtype=dtypes)
def test_layernorm_bw(backend, data, dtype):
    (x, xx), (g, xg), (_, _) = data.draw(layernorm_inputs(dtype))
    eps = 1e-5
    hidden = x.shape[-1]
    mean_ref = xx.mean(axis=-1)
    rstd_ref = 1.0 / np.sqrt(((xx - mean_ref[..., None]) ** 2).mean(axis=-1) + eps)
    mean = TensorData.from_array(mean_ref.astype(dtype))
    rstd = TensorData.from_array(rstd_ref.astype(dtype))
    dy, xdy = data.draw(laid_out(x.shape, dtype))
    dx, dgamma, dbeta = backend.layernorm_bw(dy, x, g, mean, rstd)
    assert dx.shape == x.shape and dgamma.shape == dbeta.shape == (hidden,)
    assert dx.dtype == dgamma.dtype == dbeta.dtype == dtype
    # Reference: d/dx of sum(dy * y) for y = xhat * gamma + beta, written per row.
    m, r = np.asarray(mean.array, np.float64)[..., None], np.asarray(rstd.array, np.float64)[..., None]
    xhat = (xx - m) * r
    gy = xdy * xg
    ref_dx = (r / hidden) * (
        hidden * gy - gy.sum(-1, keepdims=True) - xhat * (gy * xhat).sum(-1, keepdims=True)
    )
    rows = int(np.prod(x.shape[:-1]))
    ref_dgamma = (xdy * xhat).reshape(rows, hidden).sum(axis=0)
    ref_dbeta = xdy.reshape(rows, hidden).sum(axis=0)
    big = max(float(np.abs(xhat).max(initial=1.0)), 1.0) * float(r.max(initial=1.0))
    assert_close(dx, ref_dx, dtype, scale=hidden * 10 * big, what="dx")
    assert_close(dgamma, ref_dgamma, dtype, scale=max(rows, 1) * 3 * big, what="dgamma")
    assert_close(dbeta, ref_dbeta, dtype, scale=max(rows, 1) * 3, what="dbeta")
