"""Argument checks shared by the layers: counts, bounded reals, flags and input tensors, with clear errors.

The checks of plain values live in ``torchlight.core.checks`` (the core uses them too); this
module adds the ones that need a Tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.checks import check_count, check_flag, check_float_dtype, check_held_by, check_real
from ..core.tensor import Tensor

__all__ = [
    "check_count",
    "check_flag",
    "check_float_dtype",
    "check_held_by",
    "check_input",
    "check_real",
    "check_tensor",
]


def check_tensor(x: Any, name: str, owner: str) -> Tensor:
    """``x`` if it is a Tensor, else TypeError naming ``name`` and the fix."""
    if not isinstance(x, Tensor):
        fix = "tl.tensor(x)" if isinstance(x, (np.ndarray, list, tuple)) else "a torchlight Tensor"
        raise TypeError(f"{owner} {name} must be a Tensor, got {type(x).__name__}; pass {fix}")
    return x


def check_input(x: Any, owner: str, min_ndim: int, layout: str) -> Tensor:
    """``x`` as a Tensor with at least ``min_ndim`` dims, or an error naming ``layout``."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{owner} expects a Tensor shaped {layout}, got {type(x).__name__}; wrap it with tl.tensor(x)"
        )
    if x.ndim < min_ndim:
        raise ValueError(f"{owner} expects input shaped {layout}, got shape {x.shape} ({x.ndim}-d)")
    return x
