"""Constructors and conversions: tensor, zeros, ones, rand, randn, from_numpy, numpy, item, to."""

from __future__ import annotations

import numpy as np
import pytest

import torchlight as tl
from torchlight.backends.cpu import CPUBackend


@pytest.mark.op("creation")
def test_constructors_on_backend(backend):
    assert np.array_equal(tl.zeros(2, 3, device=backend).numpy(), np.zeros((2, 3)))
    assert np.array_equal(tl.ones((3,), device=backend).numpy(), np.ones(3))
    t = tl.tensor([[1.0, 2.0]], device=backend, requires_grad=True)
    assert t.shape == (1, 2) and t.requires_grad and t.is_leaf and t.backend is backend
    assert tl.zeros(0, 2, device=backend).shape == (0, 2)
    assert tl.tensor(2.5, device=backend).item() == 2.5


@pytest.mark.op("creation")
def test_to_other_backend_and_back(backend):
    other = CPUBackend()
    x = tl.tensor([1.0, -2.0], dtype="float64", device=backend, requires_grad=True)
    y = x.to(other)
    assert y.backend is other and x.to(backend) is x
    z = y.to(backend)
    assert z.backend is backend
    np.testing.assert_array_equal(z.numpy(), x.numpy())
    (z * z).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0])
