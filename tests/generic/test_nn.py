"""nn: module plumbing, and every layer against its unfused composition (and torch.nn when present).

Tolerances: fused and unfused forms differ only in summation order, so float64 runs are compared
at 1e-10 relative; the torch comparisons run in float64 too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tl_testing import module_grads, run_module

import torchlight as tl
from torchlight import nn
from torchlight.nn import functional as F

RTOL, ATOL = 1e-9, 1e-11


def _same(a, b, what: str) -> None:
    np.testing.assert_allclose(a, b, rtol=RTOL, atol=ATOL, err_msg=what)


def _copy_weights(src: nn.Module, dst: nn.Module) -> None:
    dst.load_state_dict(src.state_dict())


# --- plumbing ---------------------------------------------------------------------------------


# --- equivalence with the unfused composition, on every backend ----------------------------


@pytest.mark.op("nn.LayerNorm")
def test_layernorm_module_matches_composition(backend):
    tl.manual_seed(1)
    fused = nn.LayerNorm(6, dtype="float64").to(backend)
    plain = nn.LayerNorm(6, fused=False, dtype="float64").to(backend)
    fused.weight = nn.Parameter(tl.randn(6, dtype="float64", device=backend))
    fused.bias = nn.Parameter(tl.randn(6, dtype="float64", device=backend))
    _copy_weights(fused, plain)
    x = tl.randn(2, 3, 6, dtype="float64", device=backend)
    for got, want, what in zip(
        run_module(fused, x), run_module(plain, x), ("output", "param grads", "input grad")
    ):
        if isinstance(got, dict):
            for k in got:
                _same(got[k], want[k], f"{what} {k}")
        else:
            _same(got, want, what)


# Values over GELU's whole range: tanh's saturation, the cube's overflow to inf, NaN and -0.0.
GELU_SPECIALS = (0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 3.0, -3.0, 9.0, -9.0, 1e13, -1e13, 3e38, -3e38)
GELU_SPECIALS += (math.inf, -math.inf, math.nan)


@pytest.mark.op("gelu")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_gelu_is_its_composition_bit_for_bit(backend, dtype, layout):
    """The one-op GELU gives the composition's values and input gradient exactly, not just close."""
    rng = np.random.default_rng(5)
    values = np.concatenate([rng.standard_normal(40) * 3, np.array(GELU_SPECIALS)]).astype(dtype)
    values = np.resize(values, (8, 7)) if layout == "contiguous" else np.resize(values, (7, 8)).T
    seed = rng.standard_normal((8, 7)).astype(dtype)
    seed[0, :3] = (math.inf, math.nan, 0.0)
    got, want = [], []
    for fn, into in ((F.gelu, got), (F.gelu_reference, want)):
        x = tl.tensor(values, device=backend, requires_grad=True)
        xin = x.T.T if layout == "contiguous" else x.T.contiguous().T  # transposed: a strided view
        y = fn(xin)
        y.backward(tl.tensor(seed, device=backend))
        into += [y.numpy(), x.grad.numpy()]
    assert got[0].dtype == np.dtype(dtype) and got[1].dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got[0], want[0], err_msg="forward")
    np.testing.assert_array_equal(got[1], want[1], err_msg="input gradient")
    assert np.array_equal(np.signbit(got[0]), np.signbit(want[0])), "the sign of a zero differs"


@pytest.mark.op("nn.MultiHeadAttention")
@pytest.mark.parametrize("causal", [False, True])
def test_attention_module_matches_composition(backend, causal):
    tl.manual_seed(2)
    fused = nn.MultiHeadAttention(4, 2, fused=True, dtype="float64").to(backend)
    plain = nn.MultiHeadAttention(4, 2, fused=False, dtype="float64").to(backend)
    _copy_weights(fused, plain)
    x = tl.randn(2, 3, 4, dtype="float64", device=backend)
    padding = np.array([[False, False, True], [False, False, False]])  # no row loses every key
    got, want = (
        run_module(fused, x, padding=padding, causal=causal),
        run_module(plain, x, padding=padding, causal=causal),
    )
    _same(got[0], want[0], "output")
    _same(got[2], want[2], "input grad")
    for k in want[1]:
        _same(got[1][k], want[1][k], k)


@pytest.mark.op("nn.TransformerBlock")
def test_transformer_block_matches_composition(backend):
    tl.manual_seed(3)
    fused = nn.TransformerBlock(4, 2, hidden=8, dtype="float64").to(backend)
    plain = nn.TransformerBlock(4, 2, hidden=8, fused=False, dtype="float64").to(backend)
    _copy_weights(fused, plain)
    x = tl.randn(1, 3, 4, dtype="float64", device=backend)
    got, want = run_module(fused, x), run_module(plain, x)
    _same(got[0], want[0], "output")
    _same(got[2], want[2], "input grad")
    assert set(got[1]) == set(want[1]) and len(got[1]) == len(list(fused.parameters()))
    for k in want[1]:
        _same(got[1][k], want[1][k], k)


@pytest.mark.op("nn.Linear")
def test_linear_and_embedding_match_numpy(backend):
    tl.manual_seed(4)
    lin = nn.Linear(3, 2, dtype="float64").to(backend)
    x = np.random.default_rng(0).standard_normal((4, 3))
    out, grads, gx = run_module(lin, tl.tensor(x, dtype="float64", device=backend))
    w, b = lin.weight.numpy(), lin.bias.numpy()
    _same(out, x @ w.T + b, "linear output")
    up = np.random.default_rng(7).uniform(-1, 1, (4, 2))
    _same(grads["weight"], up.T @ x, "weight grad")
    _same(grads["bias"], up.sum(0), "bias grad")
    _same(gx, up @ w, "input grad")
    emb = nn.Embedding(5, 3, dtype="float64").to(backend)
    ids = np.array([[0, 4, 4], [2, 1, 0]])
    looked = emb(ids)
    _same(looked.numpy(), emb.weight.numpy()[ids], "embedding rows")
    looked.sum().backward()
    counts = np.bincount(ids.reshape(-1), minlength=5)[:, None] * np.ones((1, 3))
    _same(emb.weight.grad.numpy(), counts, "embedding grad counts each use")


@pytest.mark.op("nn.DecoderLM")
def test_decoder_lm_fused_matches_unfused(backend):
    tl.manual_seed(5)
    fused = nn.DecoderLM(6, dim=4, heads=2, layers=1, max_len=4, dtype="float64").to(backend)
    plain = nn.DecoderLM(6, dim=4, heads=2, layers=1, max_len=4, fused=False, dtype="float64").to(backend)
    _copy_weights(fused, plain)
    ids = np.array([[1, 2, 3], [5, 0, 4]])
    losses = []
    for model in (fused, plain):
        model.zero_grad()
        loss = F.cross_entropy(model(ids), np.array([[2, 3, -100], [0, 4, 1]]))
        loss.backward()
        losses.append((loss.item(), module_grads(model)))
    assert math.isclose(losses[0][0], losses[1][0], rel_tol=1e-12)
    for k in losses[1][1]:
        _same(losses[0][1][k], losses[1][1][k], k)


# --- functional ------------------------------------------------------------------------------------


# --- torch.nn, when it is importable ------------------------------------------------------------------
