"""Argument checks shared by the layers: counts, bounded reals and input tensors, with clear errors."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from ..core.tensor import Tensor


def _prefix(owner: str) -> str:
    return f"{owner} " if owner else ""


def check_count(value: Any, name: str, owner: str, minimum: int = 0) -> int:
    """``value`` as an int >= ``minimum``: TypeError for a non-int, ValueError for one too small."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{_prefix(owner)}{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{_prefix(owner)}{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_real(value: Any, name: str, owner: str, low: float, high: float, high_open: bool = True) -> float:
    """``value`` as a finite float in ``[low, high)`` (or ``[low, high]``), else a clear error."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{_prefix(owner)}{name} must be a real number, got {type(value).__name__} {value!r}")
    number = float(value)
    inside = low <= number < high if high_open else low <= number <= high
    if not (math.isfinite(number) and inside):
        bracket = ")" if high_open else "]"
        raise ValueError(
            f"{_prefix(owner)}{name} must be a finite number in [{low}, {high}{bracket}, got {value!r}"
        )
    return number


def check_input(x: Any, owner: str, min_ndim: int, layout: str) -> Tensor:
    """``x`` as a Tensor with at least ``min_ndim`` dims, or an error naming ``layout``."""
    if not isinstance(x, Tensor):
        raise TypeError(
            f"{owner} expects a Tensor shaped {layout}, got {type(x).__name__}; wrap it with tl.tensor(x)"
        )
    if x.ndim < min_ndim:
        raise ValueError(f"{owner} expects input shaped {layout}, got shape {x.shape} ({x.ndim}-d)")
    return x
