"""The CPU backend's fused ops that write over their own temporaries give the bits of the plain
numpy expressions they stand for (each with fresh temporaries), whatever the dtypes and layout."""

from __future__ import annotations

import numpy as np
import pytest

from torchlight.backends.base import Backend
from torchlight.backends.cpu import CPUBackend
from torchlight.core.tensor_data import TensorData

SPECIALS = (np.nan, np.inf, -np.inf, 1e30, -0.0, 0.0)


def _inputs(dtype, shape, strided: bool, seed: int = 4):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    x.reshape(-1)[: len(SPECIALS)] = SPECIALS[: x.size]
    data = TensorData.from_array(x)
    if strided:  # the same values seen through transposed strides
        data = TensorData.from_array(np.ascontiguousarray(x.T)).permute(*reversed(range(x.ndim)))
    gamma = rng.standard_normal(shape[-1]).astype(dtype)
    beta = rng.standard_normal(shape[-1]).astype(dtype)
    dy = rng.standard_normal(shape)
    return x, data, gamma, beta, dy


def _same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape, what
    np.testing.assert_array_equal(got, want, err_msg=what)
    assert np.array_equal(np.signbit(got), np.signbit(want)), f"{what}: the sign of a zero differs"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 5, 8), (4, 9), (7,)])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("grad_dtype", ["same", "float64"])
def test_layernorm_forward_is_its_plain_expression(dtype, shape, strided, grad_dtype):
    _, data, gamma, beta, _ = _inputs(dtype, shape, strided and len(shape) > 1)
    y, mean, rstd = CPUBackend().layernorm_fw(
        data, TensorData.from_array(gamma), TensorData.from_array(beta), 1e-5
    )
    x = data.array  # the expressions read the same view (a strided sum can round differently)
    with np.errstate(all="ignore"):
        m = x.mean(axis=-1, keepdims=True)
        var = ((x - m) * (x - m)).mean(axis=-1, keepdims=True)
        r = (1.0 / np.sqrt(var + 1e-5)).astype(dtype)
        want = (x - m) * r * gamma + beta
    _same_bits(y.array, want, "y")
    _same_bits(mean.array, m[..., 0], "mean")
    _same_bits(rstd.array, r[..., 0], "rstd")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(6, 5, 8), (4, 9), (7,)])
@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("other", ["none", "dy", "rstd", "mean"])
def test_layernorm_backward_is_its_plain_expression(dtype, shape, strided, other):
    """``other`` names an input given in float64 where the rest are ``dtype``: the result widens
    where the plain expression's would, never rounded to a reused temporary's dtype."""
    _, data, gamma, beta, dy = _inputs(dtype, shape, strided and len(shape) > 1)
    _, mean, rstd = CPUBackend().layernorm_fw(
        data, TensorData.from_array(gamma), TensorData.from_array(beta), 1e-5
    )
    inputs = {"dy": dy.astype(dtype), "mean": mean.array, "rstd": rstd.array}
    if other in inputs:
        inputs[other] = inputs[other].astype(np.float64)
    dx, dgamma, dbeta = CPUBackend().layernorm_bw(
        TensorData.from_array(inputs["dy"]),
        data,
        TensorData.from_array(gamma),
        TensorData.from_array(inputs["mean"]),
        TensorData.from_array(inputs["rstd"]),
    )
    x, g_in, r = data.array, inputs["dy"], inputs["rstd"][..., None]
    with np.errstate(all="ignore"):
        xhat = (x - inputs["mean"][..., None]) * r
        g = g_in * gamma
        want = r * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
    _same_bits(dx.array, want.astype(dtype), "dx")
    assert dgamma.dtype == dbeta.dtype == dtype


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strided", [False, True])
def test_gelu_is_the_backend_composition(dtype, strided):
    """CPU's gelu_fw/gelu_bw against Backend's, which compose the bound ops with fresh results."""
    rng = np.random.default_rng(6)
    shape = (96, 37, 29)  # odd sizes: no SIMD loop ends on a whole vector
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    x.reshape(-1)[: len(SPECIALS)] = SPECIALS
    data = TensorData.from_array(x)
    if strided:
        data = TensorData.from_array(np.ascontiguousarray(x.T)).permute(2, 1, 0)
    dy = TensorData.from_array(rng.standard_normal(shape).astype(dtype))
    cpu = CPUBackend()
    got, want = cpu.gelu_fw(data), Backend.gelu_fw(cpu, data)
    for g, w, what in zip(got, want, ("y", "t")):
        _same_bits(g.array, w.array, what)
    _same_bits(cpu.gelu_bw(data, got[1], dy).array, Backend.gelu_bw(cpu, data, want[1], dy).array, "dx")


def test_gelu_bw_refuses_mismatched_inputs():
    cpu = CPUBackend()
    x = TensorData.from_array(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"gelu_bw: shapes \(2, 3\) and \(3, 2\) must be equal"):
        cpu.gelu_bw(x, x, TensorData.from_array(np.ones((3, 2), np.float32)))
    with pytest.raises(
        TypeError, match="gelu_bw: x, t and dy must share one dtype, got float32, float32 and float64"
    ):
        cpu.gelu_bw(x, x, TensorData.from_array(np.ones((2, 3), np.float64)))
