"""dtype rules on the default device: float32 default, float64 kept, other dtypes refused by name."""

from __future__ import annotations

import numpy as np
import pytest

import torchlight as tl

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)


def test_float32_is_the_default():
    assert tl.tensor([1.0, 2.0]).dtype == F32
    assert tl.tensor(3).dtype == F32
    assert tl.tensor(np.arange(3)).dtype == F32, "integer arrays become float32"
    assert tl.zeros(2, 3).dtype == F32
    assert tl.ones(2).dtype == F32
    assert tl.rand(2).dtype == F32
    assert tl.randn(2).dtype == F32


def test_float64_is_kept():
    assert tl.tensor([1.0], dtype="float64").dtype == F64
    assert tl.tensor([1.0], dtype=np.float64).dtype == F64
    assert tl.tensor([1.0], dtype=tl.float64).dtype == F64
    assert tl.tensor(np.ones(2, np.float64)).dtype == F64, "a float64 array keeps its dtype"
    assert tl.zeros(2, dtype="float64").dtype == F64
    assert tl.randn(2, dtype="float64").dtype == F64
    assert tl.from_numpy(np.ones(2)).dtype == F64


@pytest.mark.parametrize("bad", ["int32", np.int64, "float16", np.complex128, "bogus"])
def test_unsupported_dtype_raises(bad):
    for make in (
        lambda: tl.tensor([1.0], dtype=bad),
        lambda: tl.zeros(2, dtype=bad),
        lambda: tl.ones(2, dtype=bad),
        lambda: tl.rand(2, dtype=bad),
    ):
        with pytest.raises(TypeError) as info:
            make()
        assert repr(bad) in str(info.value) or str(bad) in str(info.value)
        assert "float32" in str(info.value)


def test_from_numpy_refuses_other_dtypes():
    with pytest.raises(TypeError, match="int64"):
        tl.from_numpy(np.arange(3))
    with pytest.raises(TypeError, match="list"):
        tl.from_numpy([1.0, 2.0])
