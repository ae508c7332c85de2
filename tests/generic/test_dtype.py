"""Dtypes: float32 by default, float64 everywhere, numpy-style promotion, clear refusals."""

from __future__ import annotations

import numpy as np
import pytest

import torchlight as tl

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


# Every Tensor op, run on float64 inputs: the result (and any gradient) must stay float64.
FLOAT64_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "neg": lambda a, b: -a,
    "pow": lambda a, b: a**2,
    "lt": lambda a, b: a < b,
    "exp": lambda a, b: a.exp(),
    "log": lambda a, b: a.log(),
    "sigmoid": lambda a, b: a.sigmoid(),
    "relu": lambda a, b: a.relu(),
    "tanh": lambda a, b: a.tanh(),
    "sum": lambda a, b: a.sum(0),
    "mean": lambda a, b: a.mean(),
    "max": lambda a, b: a.max(1),
    "matmul": lambda a, b: a @ b.T,
    "permute": lambda a, b: a.permute(1, 0),
    "view": lambda a, b: a.view(-1),
    "softmax": lambda a, b: a.softmax(-1),
    "log_softmax": lambda a, b: a.log_softmax(0),
    "layer_norm": lambda a, b: a.layer_norm(b.sum(0), b.max(0)),
    "attn_softmax": lambda a, b: a.view(1, 1, 2, 3).attn_softmax(causal=True),
}


@pytest.mark.parametrize("name", list(FLOAT64_OPS))
@pytest.mark.op("dtype")
def test_float64_everywhere(backend, name):
    a = tl.tensor([[0.5, 1.5, 2.0], [1.0, 0.25, 3.0]], dtype="float64", device=backend, requires_grad=True)
    b = tl.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3]], dtype="float64", device=backend)
    out = FLOAT64_OPS[name](a, b)
    assert out.dtype == F64, f"{name} turned float64 into {out.dtype}"
    if out.requires_grad:
        out.sum().backward()
        assert a.grad.dtype == F64


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "matmul", "gt"])
@pytest.mark.op("dtype")
def test_float32_with_float64_promotes(backend, op):
    a = tl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float32", device=backend, requires_grad=True)
    b = tl.tensor([[0.5, 0.25], [2.0, 1.0]], dtype="float64", device=backend, requires_grad=True)
    fn = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
        "matmul": lambda x, y: x @ y,
        "gt": lambda x, y: x > y,
    }[op]
    expected = fn(a.numpy().astype(np.float64), b.numpy())
    out = fn(a, b)
    assert out.dtype == F64 and fn(b, a).dtype == F64
    np.testing.assert_allclose(out.numpy(), np.asarray(expected, dtype=np.float64), rtol=1e-12)
    if out.requires_grad:
        out.sum().backward()
        assert a.grad.dtype == F32, "each input's gradient keeps that input's dtype"
        assert b.grad.dtype == F64


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.op("dtype")
def test_python_scalar_keeps_tensor_dtype(backend, dtype):
    t = tl.tensor([1.0, 2.0], dtype=dtype, device=backend)
    for out in (t + 1, 1 + t, t * 0.1, 0.1 * t, t - 1e-3, 2 / t, t / 2, t**2, t > 1, 1.5 < t, t == 2.0):
        assert out.dtype == np.dtype(dtype)
    assert (t + np.float64(1.0)).dtype == np.dtype(dtype), "numpy scalars count as Python scalars"


@pytest.mark.op("dtype")
def test_to_converts_dtype_and_back(backend):
    x = tl.tensor([1.5, -2.0], dtype="float64", device=backend, requires_grad=True)
    y = x.to("float32")
    assert y.dtype == F32 and x.float().dtype == F32 and y.double().dtype == F64
    assert x.to("float64") is x
    (y * 2.0).sum().backward()
    assert x.grad.dtype == F64
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
