"""Which of CUDA's libraries a program's text uses, and a seeded order of a pool that favours
the programs that use one."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# A library counts as used when the program includes its headers (or, for the header-only ones,
# names its namespace). cuBLAS and cuRAND count by their headers only: an error header that
# wraps their calls for programs that include them (the CUDA Handbook's chError_cuda.h) names
# their functions without using them. A mention in a comment counts too (rare; a draw only
# leans on it).
LIBRARY_USE: dict[str, re.Pattern] = {
    "CUB": re.compile(r"#\s*include\s*[<\"]cub/|\bcub::"),
    "Thrust": re.compile(r"#\s*include\s*[<\"]thrust/|\bthrust::"),
    "cuBLAS": re.compile(r"#\s*include\s*[<\"]cublas"),
    "cuRAND": re.compile(r"#\s*include\s*[<\"]curand"),
    "cooperative groups": re.compile(r"\bcooperative_groups\b"),
}


def libraries_used(text: str) -> list[str]:
    """The names (keys of ``LIBRARY_USE``) of the libraries that a program's text uses."""
    return [name for name, pattern in LIBRARY_USE.items() if pattern.search(text)]


def weighted_order(pool: Sequence[T], rng: random.Random, weight: Callable[[T], float]) -> list[T]:
    """``pool`` in a random order where an item of weight w comes ahead of one of weight 1 as
    often as w draws would (each item's key is ``u ** (1 / w)`` for a uniform u, largest first:
    sampling without replacement in proportion to the weights)."""
    keys = []
    for item in pool:
        w = weight(item)
        if w <= 0:
            raise ValueError(f"weight {w!r} of {item!r}: give each item a weight above 0")
        keys.append(rng.random() ** (1.0 / w))
    order = sorted(range(len(pool)), key=lambda i: keys[i], reverse=True)
    return [pool[i] for i in order]
