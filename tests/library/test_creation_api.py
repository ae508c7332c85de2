"""Creation functions on the default device: copies, shared memory, seeding and repr."""

from __future__ import annotations

import numpy as np

import torchlight as tl


def test_rand_and_randn_are_seedable():
    tl.manual_seed(7)
    a, b = tl.rand(3, 2), tl.randn(4)
    tl.manual_seed(7)
    np.testing.assert_array_equal(tl.rand(3, 2).numpy(), a.numpy())
    np.testing.assert_array_equal(tl.randn(4).numpy(), b.numpy())
    assert ((a.numpy() >= 0) & (a.numpy() < 1)).all()
    gen = np.random.default_rng(3)
    np.testing.assert_array_equal(
        tl.randn(5, generator=gen).numpy(), np.random.default_rng(3).standard_normal(5, dtype=np.float32)
    )


def test_tensor_copies_its_input():
    source = np.ones(3, np.float32)
    t = tl.tensor(source)
    source[0] = 5.0
    assert t.numpy()[0] == 1.0
    out = t.numpy()
    out[1] = 9.0
    assert t.numpy()[1] == 1.0, "numpy() returns a copy"


def test_from_numpy_shares_memory():
    source = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = tl.from_numpy(source)
    source[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0
    view = source[:, ::2]  # non-contiguous: still shared, strides kept
    tv = tl.from_numpy(view)
    source[1, 2] = -1.0
    np.testing.assert_array_equal(tv.numpy(), view)
    np.testing.assert_array_equal((tv * 2.0).numpy(), view * 2.0)


def test_repr_names_device_and_dtype():
    text = repr(tl.tensor([1.0, 2.0], dtype="float64", requires_grad=True))
    assert "device='cpu'" in text and "float64" in text and "requires_grad=True" in text
