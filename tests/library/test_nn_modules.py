"""nn modules on the default device: layers against a plain-numpy transformer block written from the
maths (and torch.nn where installed), parameters, state dicts, train/eval, input errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tl_testing import central_difference, run_module

import torchlight as tl
from torchlight import nn
from torchlight.nn import functional as F


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(3, 4), nn.Linear(4, 2, bias=False)]
        self.scale = nn.Parameter(np.ones(2))
        self.shared = self.layers[0]  # the same module twice: its parameters count once

    def forward(self, x):
        return self.layers[1](self.layers[0](x)) * self.scale


def test_parameter_discovery_through_attributes_and_lists():
    model = Stack()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["scale", "layers.0.weight", "layers.0.bias", "layers.1.weight"]  # own first
    assert len(model.parameters()) == 4
    assert all(p.requires_grad for p in model.parameters())


def test_train_eval_reach_every_submodule():
    model = nn.DecoderLM(5, dim=8, heads=2, layers=2, max_len=4)
    model.eval()
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_state_dict_round_trip_and_errors():
    a, b = Stack(), Stack()
    b.load_state_dict(a.state_dict())
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
    state = a.state_dict()
    state["layers.0.weight"] = np.zeros((5, 5))
    with pytest.raises(ValueError, match=r"layers\.0\.weight.*\(5, 5\).*\(4, 3\)"):
        b.load_state_dict(state)
    with pytest.raises(KeyError, match="missing.*scale"):
        b.load_state_dict({k: v for k, v in a.state_dict().items() if k != "scale"})
    with pytest.raises(KeyError, match="unexpected.*extra"):
        b.load_state_dict({**a.state_dict(), "extra": np.ones(1)})
    b.load_state_dict({"scale": np.full(2, 3.0)}, strict=False)
    np.testing.assert_array_equal(b.scale.numpy(), [3.0, 3.0])


def test_layer_input_errors_name_the_value():
    with pytest.raises(ValueError, match="Linear\\(3, 4\\).*last dim 5"):
        nn.Linear(3, 4)(tl.ones(2, 5))
    with pytest.raises(IndexError, match="embedding index value 9"):
        nn.Embedding(4, 2)(np.array([[1, 9]]))
    with pytest.raises(ValueError, match="dim 10 must be a positive multiple of heads 3"):
        nn.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="Dropout p .*1.5"):
        nn.Dropout(1.5)


def test_cross_entropy_ignores_index_and_matches_numpy():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 3, 4))
    targets = np.array([[1, -100, 3], [0, 2, -100]])
    loss = F.cross_entropy(tl.tensor(logits, dtype="float64"), targets)
    z = logits - logits.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    keep = targets != -100
    want = -logp[keep, targets[keep]].mean()
    assert math.isclose(loss.item(), want, rel_tol=1e-12)
    with pytest.raises(ValueError, match=r"targets have shape \(2,\)"):
        F.cross_entropy(tl.tensor(logits), np.array([1, 2]))
    with pytest.raises(IndexError, match="target value 7"):
        F.cross_entropy(tl.tensor(logits), np.full((2, 3), 7))


def test_dropout_is_seedable_and_off_in_eval():
    x = tl.ones(4, 50)
    first = nn.Dropout(0.5, generator=np.random.default_rng(3))(x).numpy()
    second = nn.Dropout(0.5, generator=np.random.default_rng(3))(x).numpy()
    np.testing.assert_array_equal(first, second)
    assert set(np.unique(first)) == {0.0, 2.0}
    layer = nn.Dropout(0.5).eval()
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())


def test_gelu_matches_tanh_formula():
    x = np.linspace(-4, 4, 17)
    want = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(F.gelu(tl.tensor(x, dtype="float64")).numpy(), want, rtol=1e-12)


# --- an independent reference: the pre-LN block in plain numpy, from the formulas -----------------


def _np_layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _np_linear(x, weight, bias):
    return x @ weight.T + bias  # weight is [out, in], as torch.nn.Linear's


def _np_gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def _np_attention(x, state, heads, pad):
    """Multi-head self-attention: softmax(q k^T / sqrt(d) with causal and padded keys at -inf) v."""
    batch, seq, dim = x.shape
    d = dim // heads

    def split(name):
        y = _np_linear(x, state[f"attn.{name}_proj.weight"], state[f"attn.{name}_proj.bias"])
        return y.reshape(batch, seq, heads, d).transpose(0, 2, 1, 3)  # [batch, heads, seq, d]

    q, k, v = split("q"), split("k"), split("v")
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    later = np.triu(np.ones((seq, seq), bool), 1)  # key after query
    excluded = later[None, None] | pad[:, None, None, :]
    scores = np.where(excluded, -np.inf, scores)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    out = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, seq, dim)
    return _np_linear(out, state["attn.out_proj.weight"], state["attn.out_proj.bias"])


def _np_block(x, state, heads, pad):
    h = _np_layer_norm(x, state["ln1.weight"], state["ln1.bias"])
    x = x + _np_attention(h, state, heads, pad)
    h = _np_layer_norm(x, state["ln2.weight"], state["ln2.bias"])
    return x + _np_linear(
        _np_gelu(_np_linear(h, state["fc1.weight"], state["fc1.bias"])),
        state["fc2.weight"],
        state["fc2.bias"],
    )


def test_transformer_block_matches_a_numpy_reference_written_from_the_formulas():
    # Shares no code with torchlight: projections, head split, scaling, causal and padding masks,
    # both layer norms and the tanh GELU MLP, forward and every gradient (central differences).
    tl.manual_seed(8)
    heads = 2
    x = np.random.default_rng(3).standard_normal((2, 3, 4))
    pad = np.array([[False, False, False], [False, False, True]])  # the last key of sequence 1
    block = nn.TransformerBlock(4, heads, hidden=8, dtype="float64")
    state = {k: np.array(v, dtype=np.float64) for k, v in block.state_dict().items()}
    weight = np.random.default_rng(7).uniform(-1, 1, x.shape)  # run_module's weighting of the output
    out, grads, gx = run_module(block, tl.tensor(x, dtype="float64"), padding=pad)

    def loss() -> float:
        return float((_np_block(x, state, heads, pad) * weight).sum())

    np.testing.assert_allclose(out, _np_block(x, state, heads, pad), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gx, central_difference(loss, x), rtol=1e-6, atol=1e-8)
    assert set(grads) == set(state)
    for name, value in state.items():
        np.testing.assert_allclose(
            grads[name], central_difference(loss, value), rtol=1e-6, atol=1e-8, err_msg=name
        )


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed: the torch.nn comparison needs it")


def test_layers_match_torch_nn():
    torch = _torch()
    tl.manual_seed(6)
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    tx = torch.tensor(x, requires_grad=True)
    block = nn.TransformerBlock(4, 2, hidden=8, dtype="float64")
    state = {k: torch.tensor(v) for k, v in block.state_dict().items()}

    def torch_block(t):
        def ln(t, p):
            return torch.nn.functional.layer_norm(t, (4,), state[p + ".weight"], state[p + ".bias"], 1e-5)

        def lin(t, p):
            return torch.nn.functional.linear(t, state[p + ".weight"], state[p + ".bias"])

        h = ln(t, "ln1")
        q, k, v = (lin(h, f"attn.{n}_proj").view(2, 3, 2, 2).transpose(1, 2) for n in "qkv")
        att = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        t = t + lin(att.transpose(1, 2).reshape(2, 3, 4), "attn.out_proj")
        mlp = lin(torch.nn.functional.gelu(lin(ln(t, "ln2"), "fc1"), approximate="tanh"), "fc2")
        return t + mlp

    weight = np.random.default_rng(7).uniform(-1, 1, (2, 3, 4))
    want = torch_block(tx)
    (want * torch.tensor(weight)).sum().backward()
    out, _, gx = run_module(block, tl.tensor(x, dtype="float64"))
    np.testing.assert_allclose(out, want.detach().numpy(), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-9, atol=1e-11)
    logits = np.random.default_rng(2).standard_normal((5, 3))
    targets = np.array([0, 2, -100, 1, 1])
    ours = F.cross_entropy(tl.tensor(logits, dtype="float64"), targets).item()
    theirs = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(targets), ignore_index=-100)
    assert math.isclose(ours, theirs.item(), rel_tol=1e-12)
