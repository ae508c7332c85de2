"""cross_entropy selects each target's log-probability: other classes at -inf and ignored rows stay out."""

from __future__ import annotations

import numpy as np

import torchlight as tl
from torchlight.nn import functional as F


def _log_softmax(row: np.ndarray) -> np.ndarray:
    shifted = row - row.max()
    return shifted - np.log(np.exp(shifted).sum())


def test_a_class_at_minus_inf_does_not_make_the_loss_nan():
    logits = np.array([[-np.inf, 0.0, 1.0]])
    loss = F.cross_entropy(tl.tensor(logits, dtype="float64"), [2]).item()
    assert np.isclose(loss, -_log_softmax(logits[0])[2], rtol=1e-12)
    with np.errstate(over="ignore"):
        huge = F.cross_entropy(tl.tensor([[3e38, 0.0, -3e38]]), [0]).item()
    assert huge == 0.0


def test_an_ignored_row_with_nan_logits_is_not_read():
    logits = np.array([[np.nan, 0.0, 1.0], [0.5, 1.0, 2.0]])
    loss = F.cross_entropy(tl.tensor(logits, dtype="float64"), [-100, 1]).item()
    assert np.isclose(loss, -_log_softmax(logits[1])[1], rtol=1e-12)


def test_gradient_is_softmax_minus_one_hot_over_the_kept_count():
    logits = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5], [2.0, 2.0, 2.0]])
    x = tl.tensor(logits, dtype="float64", requires_grad=True)
    F.cross_entropy(x, [2, -100, 0]).backward()
    expected = np.zeros_like(logits)
    for row, target in ((0, 2), (2, 0)):
        expected[row] = np.exp(_log_softmax(logits[row]))
        expected[row, target] -= 1.0
    np.testing.assert_allclose(x.grad.numpy(), expected / 2, rtol=1e-12)


def test_every_position_ignored_gives_zero_loss_and_zero_gradient():
    x = tl.tensor([[1.0, 2.0], [3.0, 4.0]], dtype="float64", requires_grad=True)
    loss = F.cross_entropy(x, [-100, -100])
    assert loss.item() == 0.0
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 2)))
