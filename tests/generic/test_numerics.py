"""Hard numerics: huge logits, fully masked attention rows, constant layer-norm rows.

Defined results (the CPU reference documents them): softmax of +-1e4 logits is finite and
exact to rounding; an attention row whose every key is excluded is all zeros and so is its
gradient; layer norm of a constant row returns beta (the centred row is zero).
"""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import DTYPES, LIMITS, assert_close, ref_attn_softmax, ref_log_softmax, ref_softmax

import torchlight as tl

S = LIMITS.attn_side


def _huge_logits(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    # +-1e4 plus small offsets: exp() of any unshifted value would overflow float32 and float64.
    return rng.choice([-1e4, 1e4], shape) + rng.uniform(-3, 3, shape)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.op("softmax")
def test_softmax_of_huge_logits(backend, name, dtype):
    rng = np.random.default_rng(1)
    x = _huge_logits(rng, (3, LIMITS.max_side + 1)).astype(dtype)
    x[0] = 1e4  # a row of equal huge logits: uniform probabilities
    t = tl.tensor(x, device=backend, requires_grad=True)
    out = getattr(t, name)(-1)
    ref = (ref_softmax if name == "softmax" else ref_log_softmax)(x.astype(np.float64), -1)
    values = out.numpy()
    assert np.isfinite(values).all(), f"{name} of +-1e4 logits produced {values}"
    assert_close(out, ref, dtype, scale=x.shape[-1])
    out.backward(tl.tensor(rng.uniform(-1, 1, x.shape), dtype=dtype, device=backend))
    assert np.isfinite(t.grad.numpy()).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.op("attn_softmax")
def test_attn_softmax_of_huge_logits(backend, dtype, causal):
    rng = np.random.default_rng(2)
    shape = (2, 2, S, S + 1)
    x = _huge_logits(rng, shape).astype(dtype)
    mask = np.where(rng.random((2, S + 1)) < 0.3, -1e4, 0.0).astype(dtype)
    t = tl.tensor(x, device=backend, requires_grad=True)
    out = t.attn_softmax(tl.tensor(mask, device=backend), causal=causal)
    assert np.isfinite(out.numpy()).all()
    assert_close(out, ref_attn_softmax(x, mask, causal), dtype, scale=S + 1)
    out.backward(tl.tensor(rng.uniform(-1, 1, shape), dtype=dtype, device=backend))
    assert np.isfinite(t.grad.numpy()).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.op("attn_softmax")
def test_fully_masked_rows_are_zero_with_zero_gradient(backend, dtype):
    rng = np.random.default_rng(3)
    shape = (2, 2, S, S + 1)
    x = rng.uniform(-3, 3, shape).astype(dtype)
    mask = np.zeros((2, S + 1), dtype)
    mask[0] = -np.inf  # batch 0: every key excluded
    t = tl.tensor(x, device=backend, requires_grad=True)
    out = t.attn_softmax(tl.tensor(mask, device=backend))
    y = out.numpy()
    assert not np.isnan(y).any()
    np.testing.assert_array_equal(y[0], np.zeros_like(y[0]))
    assert_close(y[1], ref_attn_softmax(x, mask, False)[1], dtype, scale=S + 1)
    out.backward(tl.tensor(rng.uniform(-1, 1, shape), dtype=dtype, device=backend))
    grad = t.grad.numpy()
    assert not np.isnan(grad).any()
    np.testing.assert_array_equal(grad[0], np.zeros_like(grad[0]))
    assert np.abs(grad[1]).max() > 0


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.op("attn_softmax")
def test_causal_row_with_its_only_key_masked_is_zero(backend, dtype):
    # Causal query 0 sees only key 0; masking key 0 leaves that row with no live key.
    shape = (1, 1, S, S)
    x = np.random.default_rng(4).uniform(-3, 3, shape).astype(dtype)
    mask = np.zeros((1, S), dtype)
    mask[0, 0] = -np.inf
    t = tl.tensor(x, device=backend, requires_grad=True)
    out = t.attn_softmax(tl.tensor(mask, device=backend), causal=True)
    y = out.numpy()
    np.testing.assert_array_equal(y[0, 0, 0], np.zeros(S))
    assert_close(out, ref_attn_softmax(x, mask, True), dtype, scale=S)
    out.sum().backward()
    grad = t.grad.numpy()
    assert not np.isnan(grad).any()
    np.testing.assert_array_equal(grad[0, 0, 0], np.zeros(S))


@pytest.mark.op("attn_softmax_fw")
def test_attn_softmax_fw_fully_masked_primitive(backend):
    x = tl.tensor(np.ones((1, 1, 2, 3)), dtype="float64").data
    mask = tl.tensor(np.full((1, 3), -np.inf), dtype="float64").data
    y = backend.attn_softmax_fw(x, mask, False)
    np.testing.assert_array_equal(y.array, np.zeros((1, 1, 2, 3)))
    dx = backend.attn_softmax_bw(y, tl.tensor(np.ones((1, 1, 2, 3)), dtype="float64").data)
    np.testing.assert_array_equal(dx.array, np.zeros((1, 1, 2, 3)))


# Constants whose row sums are exact in float32 too, so the centred row is exactly zero.
CONSTANTS = [0.0, -3.0, 0.5, 1e4]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("value", CONSTANTS)
@pytest.mark.op("layer_norm")
def test_layer_norm_of_constant_row_is_beta(backend, dtype, value):
    hidden = LIMITS.max_hidden
    rng = np.random.default_rng(5)
    x = np.full((2, hidden), value, dtype)
    x[1] = rng.uniform(-2, 2, hidden)  # one ordinary row next to the constant one
    gamma = rng.uniform(0.5, 2, hidden).astype(dtype)
    beta = rng.uniform(-1, 1, hidden).astype(dtype)
    t = tl.tensor(x, device=backend, requires_grad=True)
    g = tl.tensor(gamma, device=backend, requires_grad=True)
    b = tl.tensor(beta, device=backend, requires_grad=True)
    out = t.layer_norm(g, b, 1e-5)
    y = out.numpy()
    assert_close(y[0], beta, dtype, what="constant row")
    out.backward(tl.tensor(rng.uniform(-1, 1, x.shape), dtype=dtype, device=backend))
    for grad in (t.grad, g.grad, b.grad):
        assert np.isfinite(grad.numpy()).all()


@pytest.mark.op("layer_norm")
def test_layer_norm_of_constant_row_float64_any_value(backend):
    rng = np.random.default_rng(6)
    hidden = LIMITS.max_hidden
    for value in rng.uniform(-1e3, 1e3, 5):
        x = np.full((1, hidden), value)
        beta = rng.uniform(-1, 1, hidden)
        out = tl.tensor(x, dtype="float64", device=backend).layer_norm(
            tl.tensor(rng.uniform(0.5, 2, hidden), dtype="float64", device=backend),
            tl.tensor(beta, dtype="float64", device=backend),
        )
        # Mean rounding (~hidden * 1e-16 * |value|) is amplified by rstd = 1/sqrt(eps) ~ 316.
        np.testing.assert_allclose(out.numpy()[0], beta, rtol=0, atol=hidden * 1e-16 * abs(value) * 316 * 4)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.op("max_reduce")
def test_max_propagates_nan_like_numpy(backend, dtype):
    # NaN first, last and in the middle of a row, and on either side of the binary max.
    x = np.array([[np.nan, 1.0, 2.0], [1.0, 2.0, np.nan], [3.0, np.nan, 1.0], [1.0, 5.0, 2.0]], dtype=dtype)
    data = tl.tensor(x, device=backend).data
    got = backend.max_reduce(data, 1).array
    np.testing.assert_array_equal(got, np.maximum.reduce(x, axis=1, keepdims=True))
    pair = backend.max(data, tl.tensor(x[::-1].copy(), device=backend).data).array
    np.testing.assert_array_equal(pair, np.maximum(x, x[::-1]))
