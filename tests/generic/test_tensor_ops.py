"""Tensor operators and methods against numpy, on contiguous, permuted and expanded inputs."""

from __future__ import annotations

import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tl_testing import (
    LIMITS,
    assert_close,
    away_from_zero,
    broadcast_pair,
    dtypes,
    grid,
    laid_out,
    on,
    ref_attn_softmax,
    ref_layer_norm,
    ref_log_softmax,
    ref_softmax,
    shapes,
    uniform,
)

ARITHMETIC = {
    "add": (operator.add, uniform()),
    "sub": (operator.sub, uniform()),
    "mul": (operator.mul, uniform()),
    "div": (operator.truediv, away_from_zero()),
}
COMPARISONS = {
    "lt": operator.lt,
    "gt": operator.gt,
    "eq": operator.eq,
    "le": operator.le,
    "ge": operator.ge,
    "ne": operator.ne,
}
TIES = grid()


@pytest.mark.parametrize("name", list(ARITHMETIC))
@pytest.mark.op("arithmetic")
@given(data=st.data(), shapes3=broadcast_pair(), dtype=dtypes)
def test_arithmetic_broadcast(backend, name, data, shapes3, dtype):
    fn, sampler = ARITHMETIC[name]
    shape_a, shape_b, result = shapes3
    a, xa = data.draw(laid_out(shape_a, dtype))
    b, xb = data.draw(laid_out(shape_b, dtype, sampler))
    out = fn(on(backend, a), on(backend, b))
    assert out.shape == result and out.dtype == dtype
    assert_close(out, fn(xa, xb), dtype, what=name)


@pytest.mark.parametrize("name", list(ARITHMETIC))
@pytest.mark.op("arithmetic")
@given(data=st.data(), shape=shapes(), dtype=dtypes, scalar=st.sampled_from([-2.5, -1, 0.5, 3]))
def test_arithmetic_with_python_scalar(backend, name, data, shape, dtype, scalar):
    fn, sampler = ARITHMETIC[name]
    a, xa = data.draw(laid_out(shape, dtype, sampler))
    t = on(backend, a)
    right = fn(t, scalar)
    left = fn(scalar, t)
    assert right.dtype == dtype and left.dtype == dtype, "a Python scalar keeps the tensor's dtype"
    assert_close(right, fn(xa, float(scalar)), dtype, what=f"tensor {name} scalar")
    assert_close(left, fn(float(scalar), xa), dtype, what=f"scalar {name} tensor")


@pytest.mark.op("neg")
@given(data=st.data(), shape=shapes(), dtype=dtypes)
def test_neg(backend, data, shape, dtype):
    a, xa = data.draw(laid_out(shape, dtype))
    out = -on(backend, a)
    assert out.dtype == dtype
    assert_close(out, -xa, dtype)


@pytest.mark.op("pow")
@given(data=st.data(), shape=shapes(), dtype=dtypes, exponent=st.sampled_from([0, 1, 2, 3, -1, -2]))
def test_pow_integer_exponent_any_sign(backend, data, shape, dtype, exponent):
    a, xa = data.draw(laid_out(shape, dtype, away_from_zero(0.5, 2)))
    out = on(backend, a) ** exponent
    assert out.dtype == dtype
    assert_close(out, xa**exponent, dtype)


@pytest.mark.op("pow")
@given(data=st.data(), shape=shapes(), dtype=dtypes, exponent=st.sampled_from([0.5, -0.5, 1.5, 2.25]))
def test_pow_fractional_exponent(backend, data, shape, dtype, exponent):
    a, xa = data.draw(laid_out(shape, dtype, uniform(0.1, 4)))
    assert_close(on(backend, a) ** exponent, xa**exponent, dtype)


@pytest.mark.parametrize("name", list(COMPARISONS))
@pytest.mark.op("compare")
@given(data=st.data(), shapes3=broadcast_pair(), dtype=dtypes, scalar=st.sampled_from([-0.5, 0.0, 1.0]))
def test_comparisons(backend, name, data, shapes3, dtype, scalar):
    fn = COMPARISONS[name]
    shape_a, shape_b, result = shapes3
    a, xa = data.draw(laid_out(shape_a, dtype, TIES))
    b, xb = data.draw(laid_out(shape_b, dtype, TIES))
    ta, tb = on(backend, a, requires_grad=True), on(backend, b)
    out = fn(ta, tb)
    assert out.shape == result and out.dtype == dtype
    assert not out.requires_grad, "comparisons carry no gradient"
    assert_close(out, fn(xa, xb).astype(np.float64), dtype)
    assert_close(fn(ta, scalar), fn(xa, scalar).astype(np.float64), dtype, what="tensor op scalar")
    # Python reflects the operator for a scalar on the left: 0.5 < t is t > 0.5.
    assert_close(fn(scalar, ta), fn(scalar, xa).astype(np.float64), dtype, what="scalar op tensor")


@pytest.mark.parametrize("name", ["exp", "log", "sigmoid", "relu", "tanh"])
@pytest.mark.op("unary")
@given(data=st.data(), shape=shapes(), dtype=dtypes)
def test_unary_methods(backend, name, data, shape, dtype):
    refs = {
        "exp": (np.exp, uniform(-5, 5)),
        "log": (np.log, uniform(0.05, 5)),
        "sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), uniform(-20, 20)),
        "relu": (lambda x: np.maximum(x, 0.0), TIES),
        "tanh": (np.tanh, uniform(-4, 4)),
    }
    ref, sampler = refs[name]
    a, xa = data.draw(laid_out(shape, dtype, sampler))
    out = getattr(on(backend, a), name)()
    assert out.dtype == dtype
    assert_close(out, ref(xa), dtype, what=name)


# --- reductions ------------------------------------------------------------------------------------


@st.composite
def reduce_args(draw):
    shape = draw(shapes())
    dim = draw(st.none() | st.integers(-len(shape), len(shape) - 1)) if shape else None
    return shape, dim, draw(st.booleans())


@pytest.mark.parametrize("name", ["sum", "mean", "max"])
@pytest.mark.op("reduce_tensor")
@given(data=st.data(), args=reduce_args(), dtype=dtypes)
def test_reductions(backend, name, data, args, dtype):
    shape, dim, keepdim = args
    a, xa = data.draw(laid_out(shape, dtype))
    t = on(backend, a)
    axis = None if dim is None else dim % len(shape)
    empty = xa.size == 0 if axis is None else shape[axis] == 0
    if name == "max" and empty:
        with pytest.raises(ValueError, match=r"empty"):
            t.max(dim, keepdim)
        return
    if name == "mean" and empty:
        expected = np.full(np.sum(xa, axis=axis, keepdims=keepdim).shape, np.nan)  # 0 / 0
    else:
        expected = getattr(np, name)(xa, axis=axis, keepdims=keepdim)
    out = getattr(t, name)(dim, keepdim)
    assert out.dtype == dtype
    count = xa.size if axis is None else shape[axis]
    assert_close(out, expected, dtype, scale=count * 3, what=f"{name}(dim={dim}, keepdim={keepdim})")


# --- matmul -------------------------------------------------------------------------------------------


@st.composite
def matmul_operands(draw):
    batch_a, batch_b, _ = draw(broadcast_pair(max_dims=LIMITS.max_batch_dims, min_side=1))
    n, k, m = (draw(st.integers(1, LIMITS.max_matmul)) for _ in range(3))
    kind = draw(st.sampled_from(["matrix", "vec@mat", "mat@vec", "vec@vec"]))
    left = (k,) if kind in ("vec@mat", "vec@vec") else (*batch_a, n, k)
    right = (k,) if kind in ("mat@vec", "vec@vec") else (*batch_b, k, m)
    return left, right


@pytest.mark.op("matmul")
@given(data=st.data(), operands=matmul_operands(), dtype=dtypes, use_operator=st.booleans())
def test_matmul_tensor(backend, data, operands, dtype, use_operator):
    left, right = operands
    a, xa = data.draw(laid_out(left, dtype))
    b, xb = data.draw(laid_out(right, dtype))
    ta, tb = on(backend, a), on(backend, b)
    out = ta @ tb if use_operator else ta.matmul(tb)
    expected = np.matmul(xa, xb)
    assert out.shape == expected.shape
    assert_close(out, expected, dtype, scale=9 * left[-1], what=f"{left} @ {right}")


# --- views ----------------------------------------------------------------------------------------------


@pytest.mark.op("permute")
@given(data=st.data(), shape=shapes(min_dims=1), dtype=dtypes)
def test_permute_and_transpose(backend, data, shape, dtype):
    a, xa = data.draw(laid_out(shape, dtype))
    order = data.draw(st.permutations(range(len(shape))))
    t = on(backend, a)
    assert_close(t.permute(*order), xa.transpose(order), dtype)
    d0, d1 = (data.draw(st.integers(-len(shape), len(shape) - 1)) for _ in range(2))
    assert_close(t.transpose(d0, d1), np.swapaxes(xa, d0, d1), dtype)
    # A view must still compute correctly when fed to an op.
    assert_close(t.permute(*order) * 2.0, 2.0 * xa.transpose(order), dtype)


@pytest.mark.op("view")
@given(data=st.data(), shape=shapes(min_dims=1), dtype=dtypes)
def test_view(backend, data, shape, dtype):
    a, xa = data.draw(laid_out(shape, dtype))
    t = on(backend, a)
    size = xa.size
    flat = t.view(-1)
    assert_close(flat, xa.reshape(-1), dtype)
    target = data.draw(st.sampled_from([(size,), (1, size), (size, 1)]))
    assert_close(t.view(*target), xa.reshape(target), dtype)
    assert_close(t.view(*target).view(*shape), xa, dtype, what="round trip")


# --- softmax family -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.op("softmax")
@given(data=st.data(), shape=shapes(min_dims=1), dtype=dtypes)
def test_softmax_any_dim(backend, name, data, shape, dtype):
    a, xa = data.draw(laid_out(shape, dtype, uniform(-8, 8)))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    ref = ref_softmax if name == "softmax" else ref_log_softmax
    out = getattr(on(backend, a), name)(dim)
    assert out.dtype == dtype
    assert_close(out, ref(xa, dim), dtype, scale=shape[dim], what=f"{name}(dim={dim})")


@pytest.mark.op("layer_norm")
@given(
    data=st.data(),
    lead=shapes(0, 2, max_side=LIMITS.max_side),
    hidden=st.integers(1, LIMITS.max_hidden),
    dtype=dtypes,
    eps=st.sampled_from([1e-5, 1e-3, 0.1]),
)
def test_layer_norm(backend, data, lead, hidden, dtype, eps):
    x, xx = data.draw(laid_out((*lead, hidden), dtype, uniform(-4, 4)))
    g, xg = data.draw(laid_out((hidden,), dtype, uniform(0.5, 2)))
    b, xb = data.draw(laid_out((hidden,), dtype))
    out = on(backend, x).layer_norm(on(backend, g), on(backend, b), eps)
    assert out.dtype == dtype
    # Rounding in the mean is multiplied by rstd (up to 1/sqrt(eps) for a near-constant row,
    # which the expanded layouts produce) and by gamma: scale atol by that forward-error bound.
    rstd = 1.0 / np.sqrt(xx.var(axis=-1) + eps) if xx.size else np.zeros(1)
    bound = (
        hidden * max(np.abs(xx).max(initial=1.0), 1.0) * max(rstd.max(initial=1.0), 1.0) * np.abs(xg).max()
    )
    assert_close(out, ref_layer_norm(xx, xg, xb, eps), dtype, scale=bound)


@st.composite
def attn_shapes(draw):
    side = st.integers(1, LIMITS.attn_side)
    return tuple(draw(side) for _ in range(4))


@pytest.mark.op("attn_softmax")
@given(data=st.data(), shape=attn_shapes(), dtype=dtypes, causal=st.booleans(), masked=st.booleans())
def test_attn_softmax(backend, data, shape, dtype, causal, masked):
    x, xx = data.draw(laid_out(shape, dtype, uniform(-6, 6)))
    mask = xm = None
    if masked:
        # Additive mask: finite offsets and -inf exclusions, rows may end up fully excluded.
        m, xm = data.draw(laid_out((shape[0], shape[3]), dtype, grid((0.0, -1.0, 2.0, -np.inf))))
        mask = on(backend, m)
    out = on(backend, x).attn_softmax(mask, causal=causal)
    assert out.dtype == dtype
    assert_close(out, ref_attn_softmax(xx, xm, causal), dtype, scale=shape[3])
