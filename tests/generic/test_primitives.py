"""The backend primitives (map, zip, reduce, matmul, allclose) against numpy, on every layout."""

from __future__ import annotations

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
    shapes,
    uniform,
)

from torchlight.backends.ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS
from torchlight.core.tensor_data import TensorData

# Independent float64 references and input domains, one per table entry.
UNARY_REF = {
    "neg": (lambda x: -x, uniform()),
    "id": (lambda x: x, uniform()),
    "inv": (lambda x: 1.0 / x, away_from_zero()),
    "exp": (np.exp, uniform(-5, 5)),
    "log": (np.log, uniform(0.05, 5)),
    "sigmoid": (lambda x: 0.5 * (1.0 + np.tanh(0.5 * x)), uniform(-30, 30)),
    "relu": (lambda x: np.where(x > 0, x, 0.0), grid((-2.0, -0.5, 0.0, 0.5, 1.5, 2.5))),
    "tanh": (np.tanh, uniform(-4, 4)),
}

TIES = grid()
BINARY_REF = {
    "add": (np.add, uniform(), uniform()),
    "sub": (np.subtract, uniform(), uniform()),
    "mul": (np.multiply, uniform(), uniform()),
    "div": (np.divide, uniform(), away_from_zero()),
    "pow": (np.power, uniform(0.1, 3), uniform(-3, 3)),
    "max": (np.maximum, TIES, TIES),
    "lt": (lambda x, y: (x < y).astype(np.float64), TIES, TIES),
    "eq": (lambda x, y: (x == y).astype(np.float64), TIES, TIES),
    "gt": (lambda x, y: (x > y).astype(np.float64), TIES, TIES),
    "max_hit": (lambda x, m: (x == m).astype(np.float64), TIES, TIES),
    "masked_grad": (lambda g, keep: np.where(keep != 0, g, 0.0), uniform(), TIES),
    "relu_back": (lambda x, g: np.where(x > 0, g, 0.0), TIES, uniform()),
    "log_back": (lambda x, g: g / x, away_from_zero(), uniform()),
    "inv_back": (lambda x, g: -g / (x * x), away_from_zero(), uniform()),
    "sigmoid_back": (lambda y, g: g * y * (1.0 - y), uniform(0, 1), uniform()),
    "tanh_back": (lambda y, g: g * (1.0 - y * y), uniform(-1, 1), uniform()),
}

REDUCE_REF = {
    "add": lambda x, axis: np.sum(x, axis=axis, keepdims=True),
    "mul": lambda x, axis: np.prod(x, axis=axis, keepdims=True),
    "max": lambda x, axis: np.max(x, axis=axis, keepdims=True, initial=-np.inf),
}


@pytest.mark.op("bound_names")
def test_bound_names_follow_the_rule(backend):
    for op in UNARY_OPS:
        assert callable(getattr(backend, f"{op.name}_map"))
    for op in BINARY_OPS:
        assert callable(getattr(backend, op.name))
    for op in REDUCE_OPS:
        assert callable(getattr(backend, f"{op.name}_reduce"))
    for name in ("sigmoid_map", "add", "relu_back", "add_reduce"):
        assert callable(getattr(backend, name))


# --- map ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [op.name for op in UNARY_OPS])
@pytest.mark.op("map")
@given(data=st.data(), shape=shapes(), dtype=dtypes)
def test_map_matches_numpy(backend, name, data, shape, dtype):
    ref, sampler = UNARY_REF[name]
    a, expected = data.draw(laid_out(shape, dtype, sampler))
    out = getattr(backend, f"{name}_map")(a)
    assert out.dtype == dtype
    assert_close(out, ref(expected), dtype, what=f"{name}_map on {a}")


@pytest.mark.op("map")
@given(data=st.data(), shape=shapes(min_dims=2, min_side=1), dtype=dtypes)
def test_map_writes_into_out(backend, data, shape, dtype):
    a, expected = data.draw(laid_out(shape, dtype))
    # ``out`` itself is a permuted view: the result must land through its strides.
    order = data.draw(st.permutations(range(len(shape))))
    inverse = tuple(int(i) for i in np.argsort(order))
    buffer = TensorData.zeros(tuple(shape[d] for d in order), dtype)
    out = buffer.permute(*inverse)
    assert out.shape == tuple(shape)
    returned = backend.exp_map(a, out=out)
    assert returned.shape == tuple(shape)
    assert_close(returned, np.exp(expected), dtype)
    assert_close(buffer.array.transpose(inverse), np.exp(expected), dtype, what="storage of out")


# --- zip ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", [op.name for op in BINARY_OPS])
@pytest.mark.op("zip")
@given(data=st.data(), shapes3=broadcast_pair(), dtype_a=dtypes, dtype_b=dtypes)
def test_zip_matches_numpy(backend, name, data, shapes3, dtype_a, dtype_b):
    ref, sample_a, sample_b = BINARY_REF[name]
    shape_a, shape_b, result = shapes3
    a, xa = data.draw(laid_out(shape_a, dtype_a, sample_a))
    b, xb = data.draw(laid_out(shape_b, dtype_b, sample_b))
    out = getattr(backend, name)(a, b)
    dtype = np.result_type(dtype_a, dtype_b)
    assert out.dtype == dtype, f"{name}: {dtype_a} with {dtype_b} gave {out.dtype}"
    assert_close(out, ref(xa, xb), dtype, what=f"{name}({a}, {b})")
    assert out.shape == result


@pytest.mark.parametrize("shape_a, shape_b", [((0,), (0,)), ((3, 0), (1, 0)), ((1,), (2, 0, 1)), ((), ())])
@pytest.mark.op("zip")
def test_zip_empty_and_scalar_shapes(backend, shape_a, shape_b):
    a = TensorData.from_array(np.full(shape_a, 2.0, np.float32))
    b = TensorData.from_array(np.full(shape_b, 3.0, np.float32))
    out = backend.mul(a, b)
    assert_close(out, np.full(np.broadcast_shapes(shape_a, shape_b), 6.0), np.float32)


# --- reduce ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", range(LIMITS.max_ndim))
@pytest.mark.parametrize("name", [op.name for op in REDUCE_OPS])
@pytest.mark.op("reduce")
@given(data=st.data(), dtype=dtypes, negative=st.booleans())
def test_reduce_every_dim(backend, name, axis, data, dtype, negative):
    shape = data.draw(shapes(min_dims=axis + 1))
    sampler = grid((-1.5, -1.0, 0.5, 1.0, 1.25)) if name == "mul" else uniform()
    a, expected = data.draw(laid_out(shape, dtype, sampler))
    dim = axis - len(shape) if negative else axis
    out = getattr(backend, f"{name}_reduce")(a, dim)
    assert out.dtype == dtype
    assert out.shape == shape[:axis] + (1,) + shape[axis + 1 :], "the reduced dim is kept with size 1"
    assert_close(out, REDUCE_REF[name](expected, axis), dtype, scale=shape[axis], what=f"{name} dim {dim}")


@pytest.mark.parametrize("name", [op.name for op in REDUCE_OPS])
@pytest.mark.op("reduce")
def test_reduce_empty_dim_gives_start(backend, name):
    start = {op.name: op.start for op in REDUCE_OPS}[name]
    a = TensorData.zeros((2, 0, 3), np.float64)
    out = getattr(backend, f"{name}_reduce")(a, 1)
    assert out.shape == (2, 1, 3)
    np.testing.assert_array_equal(out.array, np.full((2, 1, 3), start))


# --- matmul ------------------------------------------------------------------------------------------


@st.composite
def matmul_shapes(draw):
    batch_a, batch_b, _ = draw(broadcast_pair(max_dims=LIMITS.max_batch_dims, min_side=1))
    n, k, m = (draw(st.integers(0, LIMITS.max_matmul)) for _ in range(3))
    return (*batch_a, n, k), (*batch_b, k, m)


@pytest.mark.op("matmul")
@given(data=st.data(), pair=matmul_shapes(), dtype=dtypes)
def test_matmul_batched_broadcast(backend, data, pair, dtype):
    shape_a, shape_b = pair
    a, xa = data.draw(laid_out(shape_a, dtype))
    b, xb = data.draw(laid_out(shape_b, dtype))
    out = backend.matmul(a, b)
    expected = np.matmul(xa, xb)
    assert out.dtype == dtype
    # Rounding grows with the length of each dot product and the size of its terms (<= 3 * 3).
    assert_close(out, expected, dtype, scale=9 * shape_a[-1], what=f"{shape_a} @ {shape_b}")


@pytest.mark.op("matmul")
@pytest.mark.parametrize("shape_a, shape_b", [((3, 2, 4), (1, 4, 5)), ((1, 2, 4), (3, 4, 5))])
def test_matmul_broadcasts_a_size_one_batch_dim_of_either_side(backend, shape_a, shape_b):
    # The size-1 batch dim is contiguous, so its stride is not 0: a kernel must skip it by its
    # size, not rely on the stride, or batch 1 and 2 read past that side's one matrix.
    rng = np.random.default_rng(23)
    xa = rng.standard_normal(shape_a)
    xb = rng.standard_normal(shape_b)
    out = backend.matmul(TensorData.from_array(xa), TensorData.from_array(xb))
    assert_close(out, np.matmul(xa, xb), np.float64, scale=9 * shape_a[-1])


@pytest.mark.op("matmul")
def test_matmul_promotes_mixed_dtypes(backend):
    a = TensorData.from_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = TensorData.from_array(np.arange(3, dtype=np.float64).reshape(3, 1) / 3)
    out = backend.matmul(a, b)
    assert out.dtype == np.float64
    assert_close(out, a.array.astype(np.float64) @ b.array, np.float64)


# --- allclose ----------------------------------------------------------------------------------------


@pytest.mark.op("allclose")
@given(data=st.data(), shape=shapes(min_dims=1, min_side=1), dtype=dtypes)
def test_allclose(backend, data, shape, dtype):
    a, expected = data.draw(laid_out(shape, dtype))
    same = TensorData.from_array(expected.astype(dtype))
    assert backend.allclose(a, same)
    bumped = expected.copy()
    index = tuple(data.draw(st.integers(0, s - 1)) for s in shape)
    bumped[index] += 1.0
    assert not backend.allclose(a, TensorData.from_array(bumped.astype(dtype)))
    # Explicit tolerances: a 1.0 gap passes with atol=2 and fails with the defaults above.
    assert backend.allclose(a, TensorData.from_array(bumped.astype(dtype)), rtol=0.0, atol=2.0)
    wider = TensorData.from_array(np.zeros((*shape, 2), dtype))
    assert not backend.allclose(a, wider), "different shapes are never close"


EDGE_SHAPES = [(), (0,), (1,), (2, 0, 3), (1, 1, 1), (3, 1)]


@pytest.mark.parametrize("shape", EDGE_SHAPES, ids=str)
@pytest.mark.op("map")
def test_map_edge_shapes(backend, shape):
    x = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    for name in ("neg", "exp", "tanh"):
        out = getattr(backend, f"{name}_map")(TensorData.from_array(x))
        assert_close(out, UNARY_REF[name][0](x), np.float64, what=f"{name}_map on shape {shape}")


@pytest.mark.parametrize("shape", [s for s in EDGE_SHAPES if s], ids=str)
@pytest.mark.op("reduce")
def test_reduce_edge_shapes(backend, shape):
    x = np.linspace(-1, 1, int(np.prod(shape))).reshape(shape)
    for dim in range(len(shape)):
        for name, ref in REDUCE_REF.items():
            out = getattr(backend, f"{name}_reduce")(TensorData.from_array(x), dim)
            assert_close(out, ref(x, dim), np.float64, what=f"{name}_reduce dim {dim} of {shape}")


@pytest.mark.parametrize("n, k, m", [(2, 0, 3), (0, 3, 2), (1, 1, 1), (3, 2, 0)])
@pytest.mark.op("matmul")
def test_matmul_edge_shapes(backend, n, k, m):
    a = np.arange(n * k, dtype=np.float64).reshape(n, k)
    b = np.arange(k * m, dtype=np.float64).reshape(k, m) - 1.5
    out = backend.matmul(TensorData.from_array(a), TensorData.from_array(b))
    assert_close(out, a @ b, np.float64, what=f"({n}, {k}) @ ({k}, {m})")
