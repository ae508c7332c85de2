"""Argument checks every public entry point shares: flags, counts, bounded reals, seeds and paths.

Each raises the README's error (TypeError for a value of the wrong kind, bools and strings where
numbers or flags are meant included; ValueError for a wrong value) with a message that names the
argument, shows the value and says what to pass instead.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

# Sizes and element counts above this cannot be held by any array (numpy's index type).
MAX_SIZE = np.iinfo(np.intp).max


def _prefix(owner: str) -> str:
    return f"{owner} " if owner else ""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def is_bool(value: Any) -> bool:
    """True for Python and numpy booleans."""
    return isinstance(value, (bool, np.bool_))


def is_int(value: Any) -> bool:
    """True for Python and numpy integers, booleans excluded."""
    return isinstance(value, (int, np.integer)) and not is_bool(value)


def check_flag(value: Any, name: str, owner: str = "") -> bool:
    """``value`` as a bool: TypeError for anything else (a string, a number, a list, None)."""
    if not is_bool(value):
        raise TypeError(
            f"{_prefix(owner)}{name} must be True or False, got {type(value).__name__} {_short(value)}; "
            f"pass a bool (truthiness is not read: 'no' and [False] would both mean True)"
        )
    return bool(value)


def check_count(value: Any, name: str, owner: str = "", minimum: int = 0) -> int:
    """``value`` as an int >= ``minimum`` that an array can hold: TypeError for a non-int, else ValueError."""
    if not is_int(value):
        raise TypeError(
            f"{_prefix(owner)}{name} must be an int, got {type(value).__name__} {_short(value)}; "
            f"convert it with int() first"
        )
    if value < minimum:
        raise ValueError(f"{_prefix(owner)}{name} must be >= {minimum}, got {value!r}")
    if value > MAX_SIZE:
        raise ValueError(
            f"{_prefix(owner)}{name} {value!r} is larger than any array can hold (at most {MAX_SIZE})"
        )
    return int(value)


def check_numel(shape: tuple[int, ...], name: str, owner: str = "") -> tuple[int, ...]:
    """``shape`` (already non-negative ints) unless its element count exceeds what an array can hold."""
    count = math.prod(shape)
    if count > MAX_SIZE:
        raise ValueError(
            f"{_prefix(owner)}{name} {tuple(shape)} holds {count} elements, more than any array "
            f"can hold (at most {MAX_SIZE}); pass smaller sizes"
        )
    return shape


def check_real(
    value: Any,
    name: str,
    owner: str,
    low: float,
    high: float,
    high_open: bool = True,
    low_open: bool = False,
) -> float:
    """``value`` as a finite float in the interval from ``low`` to ``high``, else a clear error."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if is_bool(value) or not isinstance(value, numbers.Real):
        hint = f" (float({value!r}) converts it)" if isinstance(value, str) else ""
        raise TypeError(
            f"{_prefix(owner)}{name} must be a real number, got {type(value).__name__} {_short(value)}{hint}"
        )
    try:
        number = float(value)
    except OverflowError:
        number = math.inf if value > 0 else -math.inf
    inside = (low < number if low_open else low <= number) and (
        number < high if high_open else number <= high
    )
    if not (math.isfinite(number) and inside):
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{_prefix(owner)}{name} must be a finite number in {interval}, got {_short(value)}")
    return number


def check_held_by(value: float, dtype: Any, name: str, owner: str) -> float:
    """``value`` (a positive float) when ``dtype`` holds it: ValueError naming it when it overflows
    to infinity or rounds to zero there, which would change the answer without a word."""
    dt = np.dtype(dtype)
    if dt.kind != "f":
        return value
    largest = float(np.finfo(dt).max)
    if value > largest:
        raise ValueError(
            f"{_prefix(owner)}{name}={value!r} overflows {dt.name} (its largest value is {largest:.4g}); "
            f"give a smaller {name}, such as 1e-5"
        )
    if value > 0 and dt.type(value) == 0:
        raise ValueError(
            f"{_prefix(owner)}{name}={value!r} rounds to 0 in {dt.name} (its smallest value is "
            f"{float(np.finfo(dt).smallest_subnormal):.4g}); give a larger {name}, such as 1e-5"
        )
    return value


def check_float_dtype(dtype: Any, name: str, owner: str, why: str) -> np.dtype:
    """``dtype`` as a floating numpy dtype; TypeError naming it and the fix (``why`` it must float)."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.kind != "f":
        shown = dt.name if dt is not None else _short(dtype)
        raise TypeError(
            f"{_prefix(owner)}{name} must be a floating dtype ({why}), got {shown}; "
            f"give the scores' dtype, e.g. np.float32"
        )
    return dt


def check_seed(value: Any, name: str = "seed", owner: str = "manual_seed") -> int:
    """A generator seed: a non-negative int (TypeError for a bool, string, float or None)."""
    if not is_int(value):
        raise TypeError(
            f"{_prefix(owner)}{name} must be a non-negative int, got {type(value).__name__} {_short(value)}; "
            f"e.g. manual_seed(0)"
        )
    if value < 0:
        raise ValueError(f"{_prefix(owner)}{name} must be a non-negative int, got {value!r}")
    return int(value)


def check_path(value: Any, owner: str, name: str = "path") -> str | os.PathLike:
    """A file path (``str`` or ``os.PathLike``); TypeError for anything else, before any file is opened."""
    if isinstance(value, str) or (isinstance(value, os.PathLike) and isinstance(os.fspath(value), str)):
        return value
    raise TypeError(
        f"{_prefix(owner)}{name} must be a str or os.PathLike file name, got {type(value).__name__} "
        f"{_short(value)}; e.g. 'model.npz' or pathlib.Path('model.npz')"
    )
