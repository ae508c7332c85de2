"""optim: update rules against their formulas (and torch.optim when present), clipping, checkpoints."""

from __future__ import annotations

import math

import numpy as np
import pytest

import torchlight as tl
from torchlight import nn
from torchlight.optim import SGD, Adam, AdamW, clip_grad_norm_, load_checkpoint, save_checkpoint

GRADS = [np.array([0.5, -1.0, 2.0]), np.array([-0.25, 0.75, 1.5]), np.array([1.0, 1.0, -3.0])]
START = np.array([1.0, -2.0, 0.5])


def _steps(make_optimizer) -> np.ndarray:
    p = nn.Parameter(START.copy(), dtype="float64")
    opt = make_optimizer([p])
    for g in GRADS:
        p.grad = tl.tensor(g, dtype="float64")
        opt.step()
    return p.numpy()


def _sgd_reference(lr, momentum, wd):
    p, v = START.copy(), None
    for g in GRADS:
        g = g + wd * p
        v = g if v is None else momentum * v + g
        p = p - lr * (v if momentum else g)
    return p


def _adam_reference(lr, b1, b2, eps, wd, decoupled):
    p, m, v = START.copy(), 0.0, 0.0
    for t, g in enumerate(GRADS, start=1):
        if wd and not decoupled:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        if decoupled:
            p = p * (1 - lr * wd)
        p = p - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return p


@pytest.mark.parametrize("momentum, wd", [(0.0, 0.0), (0.9, 0.0), (0.9, 0.1)])
def test_sgd_follows_its_formula(momentum, wd):
    got = _steps(lambda ps: SGD(ps, lr=0.1, momentum=momentum, weight_decay=wd))
    np.testing.assert_allclose(got, _sgd_reference(0.1, momentum, wd), rtol=1e-12)


@pytest.mark.parametrize("cls, wd, decoupled", [(Adam, 0.0, False), (Adam, 0.1, False), (AdamW, 0.1, True)])
def test_adam_family_follows_its_formula(cls, wd, decoupled):
    got = _steps(lambda ps: cls(ps, lr=0.05, betas=(0.8, 0.95), eps=1e-8, weight_decay=wd))
    np.testing.assert_allclose(got, _adam_reference(0.05, 0.8, 0.95, 1e-8, wd, decoupled), rtol=1e-12)


def test_optimizers_match_torch_optim():
    torch = pytest.importorskip(
        "torch", reason="PyTorch is not installed: the torch.optim comparison needs it"
    )
    cases = [
        (
            lambda ps: SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
            lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
        ),
        (
            lambda ps: Adam(ps, lr=0.05, weight_decay=0.1),
            lambda ps: torch.optim.Adam(ps, lr=0.05, weight_decay=0.1),
        ),
        (
            lambda ps: AdamW(ps, lr=0.05, weight_decay=0.1),
            lambda ps: torch.optim.AdamW(ps, lr=0.05, weight_decay=0.1),
        ),
    ]
    for ours, theirs in cases:
        tp = torch.tensor(START.copy(), requires_grad=True)
        opt = theirs([tp])
        for g in GRADS:
            tp.grad = torch.tensor(g)
            opt.step()
        np.testing.assert_allclose(_steps(ours), tp.detach().numpy(), rtol=1e-10)


def test_bad_hyperparameters_are_refused():
    p = [nn.Parameter(np.ones(2))]
    with pytest.raises(ValueError, match="lr must be >= 0, got -1"):
        SGD(p, lr=-1)
    with pytest.raises(ValueError, match="beta1 must be in \\[0, 1\\), got 1.0"):
        Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty parameter list"):
        Adam([])


def test_clip_grad_norm_scales_to_the_limit():
    a, b = nn.Parameter(np.zeros(2), dtype="float64"), nn.Parameter(np.zeros(1), dtype="float64")
    a.grad, b.grad = tl.tensor([3.0, 0.0], dtype="float64"), tl.tensor([4.0], dtype="float64")
    before = clip_grad_norm_([a, b], 1.0)
    assert math.isclose(before, 5.0)
    after = math.sqrt((a.grad.numpy() ** 2).sum() + (b.grad.numpy() ** 2).sum())
    assert math.isclose(after, 1.0, rel_tol=1e-5)
    with pytest.raises(ValueError, match="max_norm must be > 0"):
        clip_grad_norm_([a], 0.0)


def _train_step(model, opt, ids):
    loss = nn.functional.cross_entropy(model(ids), ids)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def test_checkpoint_resumes_training_exactly(tmp_path):
    ids = np.array([[1, 2, 3, 0], [3, 2, 1, 0]])
    tl.manual_seed(0)
    model = nn.DecoderLM(4, dim=8, heads=2, layers=1, max_len=4)
    opt = AdamW(model.parameters(), lr=0.01)
    for _ in range(2):
        _train_step(model, opt, ids)
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, model, opt)
    tl.manual_seed(99)
    fresh = nn.DecoderLM(4, dim=8, heads=2, layers=1, max_len=4)
    fresh_opt = AdamW(fresh.parameters(), lr=0.01)
    load_checkpoint(path, fresh, fresh_opt)
    assert fresh_opt.steps == 2
    assert _train_step(model, opt, ids) == _train_step(fresh, fresh_opt, ids)
    for (name, p), (_, q) in zip(model.named_parameters(), fresh.named_parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=name)
    small = nn.DecoderLM(4, dim=4, heads=2, layers=1, max_len=4)
    with pytest.raises(ValueError, match="has shape"):
        load_checkpoint(path, small)
