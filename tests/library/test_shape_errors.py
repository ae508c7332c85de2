"""Shape errors raised before any backend runs: creation shapes and expand targets."""

from __future__ import annotations

import numpy as np
from tl_testing import raises_naming

import torchlight as tl
from torchlight.core.tensor_data import TensorData


def test_expand_to_incompatible_shape():
    data = TensorData.from_array(np.zeros((2, 3), np.float32))
    raises_naming(ValueError, lambda: data.expand((4, 3)), "(2, 3)", "(4, 3)")


def test_bad_creation_shapes():
    raises_naming(ValueError, lambda: tl.zeros(2, -1), "-1")
    raises_naming(TypeError, lambda: tl.ones(1.5), "1.5")
