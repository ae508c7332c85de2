"""The backward pass walks a deep graph without recursion (on the default device)."""

from __future__ import annotations

import numpy as np

import torchlight as tl


def test_deep_chain_does_not_recurse():
    # Topological order is iterative: a graph deeper than Python's recursion limit works.
    # The graph walk does not depend on the backend, so this runs on the CPU only.
    x = tl.tensor([1.0], dtype="float64", requires_grad=True)
    y = x
    for _ in range(1500):
        y = y * 1.0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
