"""The one table of elementwise and reduction ops every backend binds.

Each entry carries two forms of the same maths:

* ``scalar`` -- a plain Python function of floats using only ``math``; numba compiles it
  with ``njit`` for the CPU twin and as a CUDA device function for the GPU.
* ``array`` -- the vectorised numpy form the CPUBackend runs over strided views.

Adding an op is adding one entry here; every backend then binds it under the name rule
``<name>_map`` (unary), ``<name>`` (binary, including the ``<name>_back`` helpers used by
autograd) and ``<name>_reduce`` (reductions).

Both forms must agree on NaN, +-inf and -0.0 (the non-finite rule in ``cpu.py``): a scalar
body's comparison is written so that NaN takes the branch that passes it on, because every
ordered comparison with NaN is false.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ScalarOp:
    """One elementwise op: its scalar body (for compiled kernels) and its numpy form."""

    name: str
    scalar: Callable
    array: Callable


@dataclass(frozen=True)
class ReduceOp:
    """One reduction: the binary scalar body, its numpy ufunc, and the start value."""

    name: str
    scalar: Callable
    ufunc: np.ufunc
    start: float


# --- scalar bodies (plain math; numba compiles them for the CPU twin and for CUDA) ---


def _neg(x):
    return -x


def _id(x):
    return x


def _inv(x):
    return 1.0 / x


def _exp(x):
    return math.exp(x)


def _log(x):
    return math.log(x)


def _sigmoid(x):
    # Two branches so that neither exp() can overflow.
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def _relu(x):
    # Written so that NaN fails the test and passes through (``x > 0 ? x : 0`` would drop it);
    # -0.0 gives +0.0.
    return 0.0 if x <= 0.0 else x


def _tanh(x):
    return math.tanh(x)


def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def _mul(x, y):
    return x * y


def _div(x, y):
    return x / y


def _pow(x, y):
    return x**y


def _max(x, y):
    # NaN wins from either side, as with np.maximum.
    return x if x > y or x != x else y


def _lt(x, y):
    return 1.0 if x < y else 0.0


def _eq(x, y):
    return 1.0 if x == y else 0.0


def _gt(x, y):
    return 1.0 if x > y else 0.0


def _max_hit(x, m):
    # 1 where x is the reduction's result m; a NaN result is hit by the NaN inputs (PyTorch's
    # max backward sends the gradient to them, where ``x == m`` would match nothing).
    return 1.0 if x == m or (x != x and m != m) else 0.0


def _masked_grad(g, keep):
    # masked_fill's backward: zero where the position was filled (keep == 0), g elsewhere, so a
    # NaN gradient never reaches a value the result did not depend on.
    return g if keep != 0.0 else 0.0


def _relu_back(x, g):
    # PyTorch's threshold_backward: zero where x <= 0, else g (so a NaN input passes g on).
    return 0.0 if x <= 0.0 else g


def _log_back(x, g):
    return g / x


def _inv_back(x, g):
    return -g / (x * x)


def _sigmoid_back(y, g):
    return g * y * (1.0 - y)


def _tanh_back(y, g):
    return g * (1.0 - y * y)


# --- vectorised numpy forms ---


def _np_sigmoid(x):
    # Same two-branch form as the scalar body: exp(-|x|) never overflows.
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z)).astype(x.dtype, copy=False)


def _np_relu(x):
    return np.where(x <= 0, 0, x).astype(x.dtype, copy=False)


def _np_compare(ufunc):
    def compare(x, y):
        return ufunc(x, y).astype(np.result_type(x, y))

    compare.__name__ = f"np_{ufunc.__name__}"
    return compare


def _np_max_hit(x, m):
    return (np.equal(x, m) | (np.isnan(x) & np.isnan(m))).astype(np.result_type(x, m))


def _np_masked_grad(g, keep):
    return np.where(keep != 0, g, 0).astype(np.result_type(g, keep), copy=False)


def _np_relu_back(x, g):
    return np.where(x <= 0, 0, g).astype(np.result_type(x, g), copy=False)


UNARY_OPS: tuple[ScalarOp, ...] = (
    ScalarOp("neg", _neg, np.negative),
    ScalarOp("id", _id, np.positive),
    ScalarOp("inv", _inv, np.reciprocal),
    ScalarOp("exp", _exp, np.exp),
    ScalarOp("log", _log, np.log),
    ScalarOp("sigmoid", _sigmoid, _np_sigmoid),
    ScalarOp("relu", _relu, _np_relu),
    ScalarOp("tanh", _tanh, np.tanh),
)

BINARY_OPS: tuple[ScalarOp, ...] = (
    ScalarOp("add", _add, np.add),
    ScalarOp("sub", _sub, np.subtract),
    ScalarOp("mul", _mul, np.multiply),
    ScalarOp("div", _div, np.divide),
    ScalarOp("pow", _pow, np.power),
    ScalarOp("max", _max, np.maximum),
    ScalarOp("lt", _lt, _np_compare(np.less)),
    ScalarOp("eq", _eq, _np_compare(np.equal)),
    ScalarOp("gt", _gt, _np_compare(np.greater)),
    ScalarOp("max_hit", _max_hit, _np_max_hit),
    ScalarOp("masked_grad", _masked_grad, _np_masked_grad),
    ScalarOp("relu_back", _relu_back, _np_relu_back),
    ScalarOp("log_back", _log_back, lambda x, g: g / x),
    ScalarOp("inv_back", _inv_back, lambda x, g: -g / (x * x)),
    ScalarOp("sigmoid_back", _sigmoid_back, lambda y, g: g * y * (1 - y)),
    ScalarOp("tanh_back", _tanh_back, lambda y, g: g * (1 - y * y)),
)

REDUCE_OPS: tuple[ReduceOp, ...] = (
    ReduceOp("add", _add, np.add, 0.0),
    ReduceOp("mul", _mul, np.multiply, 1.0),
    ReduceOp("max", _max, np.maximum, -math.inf),
)
