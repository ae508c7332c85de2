"""Every public entry point refuses malformed arguments by the README's rule, on every backend.

One table lists each public function, constructor and method with the argument it takes and
that argument's *kind* (a count, a dim, a flag, a bounded real, a device, ...). Each kind says
which exception a value deserves: ``TypeError`` for a value of the wrong kind (bools and
strings where numbers or flags are meant included), ``ValueError`` for a wrong value,
``IndexError`` for a dim or id out of range, or ``None`` for a value it accepts.

Two tests drive the table: one with a fixed list of malformed values per kind (every entry,
every value), one with hypothesis drawing values of each kind. Both check the exception type,
that the message names the argument, and that it is in the library's words (no bare Python or
numpy message such as ``float() argument must be...``).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from tl_testing import LIMITS, on

import torchlight as tl
from torchlight import nn
from torchlight.core.tensor_data import TensorData
from torchlight.nn import functional as F
from torchlight.optim import (
    SGD,
    Adam,
    AdamW,
    clip_grad_norm_,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
)

# Phrases of Python's and numpy's own messages: a message holding one was not written for the user.
FOREIGN_WORDS = re.compile(
    r"argument must be a string or a (real )?number|object is not iterable|expected str, bytes or "
    r"os\.PathLike|SeedSequence|too large to convert|array is too big|Maximum allowed dimension|"
    r"could not convert|invalid literal|unsupported operand|has no attribute|not supported between|"
    r"cannot be interpreted as an integer|object cannot be|positional argument|unhashable type|"
    r"only integer scalar arrays|negative dimensions are not allowed|expected a sequence|"
    r"must be real number, not|is not subscriptable|Cannot cast|ufunc"
)


class Unset:
    """Marks a value a kind accepts: the entry is not called with it."""


@dataclass(frozen=True)
class Kind:
    """What an argument may be: ``verdict(value)`` is the exception class it deserves, or None."""

    name: str
    verdict: Callable[[Any], type[BaseException] | None]
    probes: tuple  # fixed malformed values, each tried on every entry of this kind
    strategy: st.SearchStrategy


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not _is_bool(v)


def count_verdict(minimum: int) -> Callable[[Any], type[BaseException] | None]:
    def verdict(v):
        if not _is_int(v):
            return TypeError
        if v < minimum or v > 2**40:  # 2**40: no test allocates that; larger ones are refused
            return ValueError if v < minimum or v >= 2**63 else None
        return None

    return verdict


def dim_verdict(ndim: int, none_ok: bool) -> Callable[[Any], type[BaseException] | None]:
    def verdict(v):
        if v is None and none_ok:
            return None
        if not _is_int(v):
            return TypeError
        return None if -max(ndim, 1) <= v < max(ndim, 1) else IndexError

    return verdict


def flag_verdict(v):
    return None if _is_bool(v) else TypeError


def real_verdict(low: float, high: float, low_open: bool, high_open: bool, none_ok: bool = False):
    def verdict(v):
        if v is None and none_ok:
            return None
        if _is_bool(v) or not isinstance(v, numbers.Real):
            return TypeError
        try:
            number = float(v)
        except OverflowError:
            return ValueError
        above = number > low if low_open else number >= low
        below = number < high if high_open else number <= high
        return None if math.isfinite(number) and above and below else ValueError

    return verdict


DEVICE_FORM = re.compile(r"(cpu|cuda)(?::([0-9]+))?")


def device_verdict(v):
    if v is None or isinstance(v, tl.Device):
        return None
    if not isinstance(v, str):
        return TypeError
    match = DEVICE_FORM.fullmatch(v)
    if not match:
        return ValueError
    index = match.group(2)
    if index is None:
        return None
    limit = 0 if match.group(1) == "cpu" else 2**31 - 1
    return None if int(index) <= limit else ValueError


def target_verdict(v, floats_ok: bool):
    """``.to(v)``: a device, or (where ``floats_ok``) float32/float64; another dtype is a TypeError."""
    if isinstance(v, str) and device_verdict(v) is ValueError:
        try:
            dtype = np.dtype(v)
        except (TypeError, ValueError, SyntaxError):
            return ValueError
        return None if floats_ok and dtype in (np.float32, np.float64) else TypeError
    return device_verdict(v)


def dtype_verdict(v):
    if v is None:
        return None
    if isinstance(v, str):
        return None if v in ("float32", "float64", "float", "double") else TypeError
    return None if v is np.float32 or v is np.float64 else TypeError


def seed_verdict(v):
    if not _is_int(v):
        return TypeError
    return None if v >= 0 else ValueError


def tensor_verdict(v):
    return None if isinstance(v, (tl.Tensor, numbers.Real, np.ndarray)) and not _is_bool(v) else TypeError


def mask_verdict(v):
    if v is None or isinstance(v, tl.Tensor):
        return None
    if isinstance(v, np.ndarray) and v.dtype.kind == "f":
        return None
    return TypeError


def padding_verdict(v, shape: tuple[int, int] | None = (1, 3)):
    """``shape``: what the entry expects (None: any 2-d shape)."""
    if v is None and shape is not None:
        return None
    array = v if isinstance(v, np.ndarray) else None
    if array is None:
        try:
            array = np.asarray(v)
        except ValueError:
            return ValueError
    fits = array.shape == shape if shape is not None else array.ndim == 2
    if array.dtype.kind == "b":
        return None if fits else ValueError
    if array.dtype.kind in "iu":
        return None if fits and np.isin(array, (0, 1)).all() else ValueError
    return TypeError


def path_verdict(v):
    return None if isinstance(v, str) else TypeError


odd_objects = st.sampled_from([object(), [1], (2,), {"a": 1}, b"x", 1j, np.array([1.0, 2.0])])
huge_ints = st.integers(min_value=2**63, max_value=2**200)

KINDS: dict[str, Kind] = {}


def kind(name: str, verdict, probes: tuple, strategy: st.SearchStrategy) -> Kind:
    KINDS[name] = Kind(name, verdict, probes, strategy)
    return KINDS[name]


COUNT = kind(
    "count",
    count_verdict(0),
    (True, False, "3", None, 2.0, math.nan, math.inf, -1, 2**70, object(), [2]),
    st.one_of(
        st.booleans(),
        st.text(max_size=3),
        st.none(),
        st.floats(),
        st.integers(max_value=-1),
        huge_ints,
        odd_objects,
    ),
)
POSITIVE_COUNT = kind(
    "positive count",
    count_verdict(1),
    (*COUNT.probes, 0),
    st.one_of(COUNT.strategy, st.integers(max_value=0)),
)
FLAG = kind(
    "flag",
    flag_verdict,
    ("no", "True", [False], 1, 0, None, math.nan, 0.0, np.array([True, False])),
    st.one_of(
        st.integers(), st.text(max_size=3), st.none(), st.floats(), st.lists(st.booleans(), max_size=2)
    ),
)
EPS = kind(
    "eps",
    real_verdict(0.0, math.inf, True, True),
    (True, "1e-5", None, 0.0, -1e-5, math.inf, math.nan, 10**400, 1j, [1e-5], np.array([1e-5, 1e-5])),
    st.one_of(
        st.booleans(),
        st.text(max_size=3),
        st.none(),
        st.floats(max_value=0.0),
        st.sampled_from([math.inf, math.nan]),
        st.integers(min_value=10**309, max_value=10**400),
        odd_objects,
    ),
)
RATE = kind(  # a learning rate, momentum or decay: finite and >= 0
    "rate",
    real_verdict(0.0, math.inf, False, True),
    (True, "0.1", None, -0.1, math.inf, math.nan, 10**400, 1j, [0.1]),
    st.one_of(
        st.booleans(),
        st.text(max_size=3),
        st.none(),
        st.floats(max_value=-1e-12),
        st.sampled_from([math.inf, math.nan]),
        st.integers(min_value=10**309, max_value=10**400),
        odd_objects,
    ),
)
MAX_NORM = kind(
    "max_norm",
    real_verdict(0.0, math.inf, True, True),
    EPS.probes,
    EPS.strategy,
)
PROBABILITY = kind(
    "probability",
    real_verdict(0.0, 1.0, False, True),
    (True, "0.1", None, -0.1, 1.0, 2, math.inf, math.nan, 10**400, 1j),
    st.one_of(
        st.booleans(),
        st.text(max_size=3),
        st.none(),
        st.floats(min_value=1.0),
        st.floats(max_value=-1e-12),
        st.sampled_from([math.nan]),
        odd_objects,
    ),
)
DEVICE = kind(
    "device",
    device_verdict,
    (
        5,
        True,
        1.5,
        object(),
        b"cpu",
        " CPU ",
        "CPU",
        "cuda:99999999999999999999",
        "gpu",
        "",
        "cuda:-1",
        "cpu:1",
        "cuda:0 ",
        "cu da",
        "cuda:1:2",
    ),
    st.one_of(st.integers(), st.booleans(), st.floats(), st.text(max_size=8), odd_objects),
)
DTYPE = kind(
    "dtype",
    dtype_verdict,
    ("float16", "int64", 5, True, "", object(), np.int32, "cpu"),
    st.one_of(st.text(max_size=8), st.integers(), st.booleans(), odd_objects),
)
SEED = kind(
    "seed",
    seed_verdict,
    (True, "3", 1.5, None, math.nan, -1, -(2**70), object(), [1]),
    st.one_of(
        st.booleans(), st.text(max_size=3), st.floats(), st.none(), st.integers(max_value=-1), odd_objects
    ),
)
DIM = kind(
    "dim",
    dim_verdict(2, none_ok=False),
    (True, "0", None, 1.0, math.nan, 2, -3, 2**70, -(2**70), [0]),
    st.one_of(
        st.booleans(),
        st.text(max_size=2),
        st.none(),
        st.floats(),
        st.integers(min_value=2),
        st.integers(max_value=-3),
        odd_objects,
    ),
)
REDUCE_DIM = kind(
    "reduce dim",
    dim_verdict(2, none_ok=True),
    tuple(v for v in DIM.probes if v is not None),
    st.one_of(
        st.booleans(),
        st.text(max_size=2),
        st.floats(),
        st.integers(min_value=2),
        st.integers(max_value=-3),
        odd_objects,
    ),
)
TENSOR = kind(
    "tensor",
    tensor_verdict,
    ("x", None, [1.0, 2.0], object(), True, {"a": 1}),
    st.one_of(st.text(max_size=3), st.none(), st.booleans(), st.sampled_from([object(), {"a": 1}, [1.0]])),
)
MASK = kind(
    "mask",
    mask_verdict,
    (
        np.zeros((1, 3), bool),
        np.ones((1, 3), bool),
        np.zeros((1, 3), np.int64),
        np.zeros((1, 3), np.uint8),
        "mask",
        [0.0, 0.0, 0.0],
        True,
    ),
    st.one_of(
        st.sampled_from([bool, np.int8, np.int32, np.int64, np.uint8]).map(lambda t: np.zeros((1, 3), t)),
        st.text(max_size=3),
        st.lists(st.floats(), min_size=3, max_size=3),
        st.booleans(),
    ),
)
PADDING = kind(
    "padding",
    padding_verdict,
    (
        "ab",
        0.5,
        math.nan,
        np.array([[0.5, 0.0, 1.0]]),
        np.array([[math.nan, 0.0, 0.0]]),
        np.array([[2, 0, 0]]),
        np.array([["a", "b", "c"]]),
        np.zeros((2, 3), bool),
        [[True, False]],
        object(),
    ),
    st.one_of(
        st.text(max_size=3),
        st.floats(),
        st.lists(st.floats(), min_size=3, max_size=3).map(lambda v: np.array([v])),
        st.lists(st.integers(2, 9), min_size=3, max_size=3).map(lambda v: np.array([v])),
        st.lists(st.booleans(), min_size=1, max_size=5)
        .filter(lambda v: len(v) != 3)
        .map(lambda v: np.array([v])),
    ),
)
PAD = kind(
    "pad",
    lambda v: padding_verdict(v, None),
    tuple(v for v in PADDING.probes if padding_verdict(v, None) is not None) + (None, np.zeros(3, bool)),
    PADDING.strategy,
)
PATH = kind(
    "path",
    path_verdict,
    (None, 5, object(), 1.5, True, ["a"]),
    st.one_of(st.none(), st.integers(), st.floats(), st.booleans(), odd_objects),
)
ONLY_TENSOR = kind(
    "only a tensor",
    lambda v: None if isinstance(v, tl.Tensor) else TypeError,
    ("x", None, [1.0, 2.0], np.ones(3, np.float32), 2.0, True, object()),
    st.one_of(st.text(max_size=3), st.none(), st.floats(), st.booleans(), odd_objects),
)
GENERATOR = kind(
    "generator",
    lambda v: None if v is None or isinstance(v, np.random.Generator) else TypeError,
    (5, "seed", True, np.random.RandomState(0), object()),
    st.one_of(st.integers(), st.text(max_size=3), st.booleans(), odd_objects),
)
PARAMS = kind(
    "parameters",
    lambda v: TypeError,
    (None, 5, "ab", object(), 1.5, True),
    st.one_of(st.none(), st.integers(), st.text(max_size=3), st.floats(), st.booleans()),
)
STATE = kind(
    "state",
    lambda v: None if isinstance(v, dict) else TypeError,
    (None, 5, "state", [("a", 1)], object()),
    st.one_of(st.none(), st.integers(), st.text(max_size=3), odd_objects),
)


# --- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One public entry point: ``call(backend, value)`` passes ``value`` as argument ``arg``."""

    label: str
    arg: str  # the name the message must hold as a word (a regex: "device|dtype" takes either)
    kind: Kind
    call: Callable[[Any, Any], Any]


def x23(backend, requires_grad: bool = False) -> tl.Tensor:
    data = TensorData.from_array(np.arange(6, dtype=np.float32).reshape(2, 3) / 6)
    return on(backend, data, requires_grad)


def scores(backend) -> tl.Tensor:
    return on(backend, TensorData.from_array(np.zeros((1, 1, 3, 3), np.float32)))


def seq(backend) -> tl.Tensor:
    return on(backend, TensorData.from_array(np.zeros((1, 3, 4), np.float32)))


def ln_params(backend) -> tuple[tl.Tensor, tl.Tensor]:
    gamma = on(backend, TensorData.from_array(np.ones(3, np.float32)))
    beta = on(backend, TensorData.from_array(np.zeros(3, np.float32)))
    return gamma, beta


def params(backend) -> list[nn.Parameter]:
    return list(nn.Linear(2, 2).to(backend).parameters())


def _saved(tmp: str, backend) -> tuple[nn.Module, str]:
    model = nn.Linear(2, 2).to(backend)
    save_checkpoint(tmp, model)
    return model, tmp


CHECKPOINT = "malformed-input-checkpoint.npz"

ENTRIES: list[Entry] = [
    # creation
    *(
        Entry(f"tl.{name}(size)", "size", COUNT, lambda b, v, n=name: getattr(tl, n)(2, v))
        for name in ("zeros", "ones", "rand", "randn")
    ),
    Entry("tl.zeros(device=)", "device", DEVICE, lambda b, v: tl.zeros(2, device=v)),
    Entry("tl.ones(dtype=)", "dtype", DTYPE, lambda b, v: tl.ones(2, dtype=v)),
    Entry("tl.rand(requires_grad=)", "requires_grad", FLAG, lambda b, v: tl.rand(2, requires_grad=v)),
    Entry("tl.tensor(requires_grad=)", "requires_grad", FLAG, lambda b, v: tl.tensor([1.0], requires_grad=v)),
    Entry("tl.tensor(device=)", "device", DEVICE, lambda b, v: tl.tensor([1.0], device=v)),
    Entry("tl.tensor(dtype=)", "dtype", DTYPE, lambda b, v: tl.tensor([1.0], dtype=v)),
    Entry("tl.from_numpy(device=)", "device", DEVICE, lambda b, v: tl.from_numpy(np.zeros(2), device=v)),
    Entry("tl.rand(generator=)", "generator", GENERATOR, lambda b, v: tl.rand(2, generator=v)),
    Entry("tl.manual_seed(seed)", "seed", SEED, lambda b, v: tl.manual_seed(v)),
    Entry("tl.get_backend(device)", "device", DEVICE, lambda b, v: tl.get_backend(v)),
    Entry("tl.Device(spec)", "device", DEVICE, lambda b, v: tl.Device(v)),
    Entry(
        "tl.Device(index=)",
        "index",
        kind(
            "index",
            lambda v: None if v is None else COUNT.verdict(v),
            tuple(v for v in COUNT.probes if v is not None),
            COUNT.strategy.filter(lambda v: v is not None),
        ),
        lambda b, v: tl.Device("cuda", v),
    ),
    # tensor methods
    *(
        Entry(f"Tensor.{name}(dim)", "dim", REDUCE_DIM, lambda b, v, n=name: getattr(x23(b), n)(v))
        for name in ("sum", "mean", "max", "min")
    ),
    *(
        Entry(
            f"Tensor.{name}(keepdim=)", "keepdim", FLAG, lambda b, v, n=name: getattr(x23(b), n)(0, keepdim=v)
        )
        for name in ("sum", "mean", "max", "min")
    ),
    *(
        Entry(f"Tensor.{name}(dim)", "dim", DIM, lambda b, v, n=name: getattr(x23(b), n)(v))
        for name in ("softmax", "log_softmax", "squeeze")
    ),
    Entry(
        "Tensor.unsqueeze(dim)",
        "dim",
        kind(
            "unsqueeze dim",
            dim_verdict(3, False),
            (*(v for v in DIM.probes if v not in (2, -3)), 3, -4),
            DIM.strategy,
        ),
        lambda b, v: x23(b).unsqueeze(v),
    ),
    Entry("Tensor.transpose(dim0)", "dim", DIM, lambda b, v: x23(b).transpose(v, 0)),
    Entry("Tensor.permute(dims)", "dim", DIM, lambda b, v: x23(b).permute(0, v)),
    Entry(
        "Tensor.view(size)",
        "size",
        kind(
            "view size",
            lambda v: None if _is_int(v) and v in (6, -1) else (ValueError if _is_int(v) else TypeError),
            (*(v for v in COUNT.probes if v != -1), -2, 5),
            COUNT.strategy,
        ),
        lambda b, v: x23(b).view(v, 1),
    ),
    Entry("Tensor.requires_grad_(flag)", "requires_grad", FLAG, lambda b, v: x23(b).requires_grad_(v)),
    Entry(
        "Tensor.to(target)",
        "device|dtype",
        kind("tensor target", lambda v: target_verdict(v, True), DEVICE.probes, DEVICE.strategy),
        lambda b, v: x23(b).to(v),
    ),
    Entry("Tensor.layer_norm(eps=)", "eps", EPS, lambda b, v: x23(b).layer_norm(*ln_params(b), eps=v)),
    Entry("Tensor.layer_norm(gamma)", "gamma", TENSOR, lambda b, v: x23(b).layer_norm(v, ln_params(b)[1])),
    Entry("Tensor.attn_softmax(mask)", "mask", MASK, lambda b, v: scores(b).attn_softmax(v)),
    Entry("Tensor.attn_softmax(causal=)", "causal", FLAG, lambda b, v: scores(b).attn_softmax(causal=v)),
    Entry(
        "Tensor.backward(grad)",
        "grad",
        kind(
            "grad",
            lambda v: None if v is None else ONLY_TENSOR.verdict(v),
            tuple(v for v in ONLY_TENSOR.probes if v is not None),
            ONLY_TENSOR.strategy.filter(lambda v: v is not None),
        ),
        lambda b, v: (x23(b, True) * 2).sum().backward(v),
    ),
    Entry("Tensor ** exponent", "exponent", TENSOR, lambda b, v: x23(b) ** v),
    # functional
    Entry("F.dropout(p)", "p", PROBABILITY, lambda b, v: F.dropout(x23(b), v)),
    Entry("F.dropout(x)", "x", ONLY_TENSOR, lambda b, v: F.dropout(v, 0.5)),
    Entry("F.dropout(generator=)", "generator", GENERATOR, lambda b, v: F.dropout(x23(b), 0.5, generator=v)),
    Entry("F.gelu(x)", "x", ONLY_TENSOR, lambda b, v: F.gelu(v)),
    Entry("F.linear(weight)", "weight", ONLY_TENSOR, lambda b, v: F.linear(x23(b), v)),
    Entry("F.embedding(weight)", "weight", ONLY_TENSOR, lambda b, v: F.embedding([0], v)),
    Entry("F.layer_norm(x)", "x", ONLY_TENSOR, lambda b, v: F.layer_norm(v, *ln_params(b))),
    Entry("F.dropout(training=)", "training", FLAG, lambda b, v: F.dropout(x23(b), 0.5, training=v)),
    Entry("F.layer_norm(eps=)", "eps", EPS, lambda b, v: F.layer_norm(x23(b), *ln_params(b), eps=v)),
    Entry("F.layer_norm(fused=)", "fused", FLAG, lambda b, v: F.layer_norm(x23(b), *ln_params(b), fused=v)),
    Entry("F.attention_softmax(mask)", "mask", MASK, lambda b, v: F.attention_softmax(scores(b), v)),
    Entry(
        "F.attention_softmax(causal=)", "causal", FLAG, lambda b, v: F.attention_softmax(scores(b), causal=v)
    ),
    Entry("F.attention_softmax(fused=)", "fused", FLAG, lambda b, v: F.attention_softmax(scores(b), fused=v)),
    Entry("F.padding_mask(pad)", "padding", PAD, lambda b, v: F.padding_mask(v, np.float32)),
    Entry("F.causal_mask(q_len)", "q_len", COUNT, lambda b, v: F.causal_mask(v, 3, np.float32)),
    Entry("F.causal_mask(k_len)", "k_len", COUNT, lambda b, v: F.causal_mask(3, v, np.float32)),
    Entry("F.softmax(dim)", "dim", DIM, lambda b, v: F.softmax(x23(b), v)),
    # layers
    Entry("nn.Linear(in_features)", "in_features", COUNT, lambda b, v: nn.Linear(v, 2)),
    Entry("nn.Linear(out_features)", "out_features", COUNT, lambda b, v: nn.Linear(2, v)),
    Entry("nn.Linear(bias=)", "bias", FLAG, lambda b, v: nn.Linear(2, 2, bias=v)),
    Entry("nn.Linear(device=)", "device", DEVICE, lambda b, v: nn.Linear(2, 2, device=v)),
    Entry("nn.Linear(dtype=)", "dtype", DTYPE, lambda b, v: nn.Linear(2, 2, dtype=v)),
    Entry("nn.Embedding(num_embeddings)", "num_embeddings", COUNT, lambda b, v: nn.Embedding(v, 2)),
    Entry("nn.Embedding(embedding_dim)", "embedding_dim", COUNT, lambda b, v: nn.Embedding(2, v)),
    Entry("nn.Embedding(std=)", "std", RATE, lambda b, v: nn.Embedding(2, 2, std=v)),
    Entry("nn.LayerNorm(dim)", "dim", COUNT, lambda b, v: nn.LayerNorm(v)),
    Entry("nn.LayerNorm(eps=)", "eps", EPS, lambda b, v: nn.LayerNorm(3, eps=v)),
    Entry("nn.LayerNorm(fused=)", "fused", FLAG, lambda b, v: nn.LayerNorm(3, fused=v)),
    Entry("nn.Dropout(p)", "p", PROBABILITY, lambda b, v: nn.Dropout(v)),
    Entry("nn.Dropout(generator=)", "generator", GENERATOR, lambda b, v: nn.Dropout(0.5, generator=v)),
    Entry("nn.MultiHeadAttention(dim)", "dim", POSITIVE_COUNT, lambda b, v: nn.MultiHeadAttention(v, 1)),
    Entry("nn.MultiHeadAttention(heads)", "heads", POSITIVE_COUNT, lambda b, v: nn.MultiHeadAttention(4, v)),
    Entry(
        "nn.MultiHeadAttention(dropout=)",
        "dropout",
        PROBABILITY,
        lambda b, v: nn.MultiHeadAttention(4, 1, dropout=v),
    ),
    Entry("nn.MultiHeadAttention(fused=)", "fused", FLAG, lambda b, v: nn.MultiHeadAttention(4, 1, fused=v)),
    Entry(
        "MultiHeadAttention()(padding)",
        "padding",
        PADDING,
        lambda b, v: nn.MultiHeadAttention(4, 1).to(b)(seq(b), padding=v),
    ),
    Entry(
        "MultiHeadAttention()(causal=)",
        "causal",
        FLAG,
        lambda b, v: nn.MultiHeadAttention(4, 1).to(b)(seq(b), causal=v),
    ),
    Entry(
        "nn.TransformerBlock(hidden=)",
        "hidden",
        kind(
            "hidden",
            lambda v: None if v is None else count_verdict(1)(v),
            POSITIVE_COUNT.probes[:3] + POSITIVE_COUNT.probes[4:],
            POSITIVE_COUNT.strategy,
        ),
        lambda b, v: nn.TransformerBlock(4, 1, hidden=v),
    ),
    Entry(
        "nn.TransformerBlock(dim)", "dim", POSITIVE_COUNT, lambda b, v: nn.TransformerBlock(v, 1, hidden=2)
    ),
    Entry(
        "TransformerBlock()(padding)",
        "padding",
        PADDING,
        lambda b, v: nn.TransformerBlock(4, 1, hidden=2).to(b)(seq(b), padding=v),
    ),
    Entry(
        "TransformerBlock()(causal=)",
        "causal",
        FLAG,
        lambda b, v: nn.TransformerBlock(4, 1, hidden=2).to(b)(seq(b), causal=v),
    ),
    Entry("nn.DecoderLM(vocab)", "vocab", POSITIVE_COUNT, lambda b, v: nn.DecoderLM(v, 4, 1, 1, 4)),
    Entry("nn.DecoderLM(layers=)", "layers", COUNT, lambda b, v: nn.DecoderLM(3, 4, 1, v, 4)),
    Entry("nn.DecoderLM(max_len=)", "max_len", POSITIVE_COUNT, lambda b, v: nn.DecoderLM(3, 4, 1, 1, v)),
    Entry(
        "DecoderLM()(padding)",
        "padding",
        PADDING,
        lambda b, v: nn.DecoderLM(3, 4, 1, 1, 4).to(b)(np.zeros((1, 3), int), padding=v),
    ),
    Entry(
        "DecoderLM()(tokens)",
        "tokens",
        kind(
            "tokens",
            lambda v: TypeError if v is None or isinstance(v, (str, bytes, float)) else ValueError,
            (None, "ab", 1.5, np.zeros(3, int), np.zeros((1, 1, 2), int), 7),
            st.one_of(st.none(), st.text(max_size=3), st.floats(), st.integers()),
        ),
        lambda b, v: nn.DecoderLM(3, 4, 1, 1, 4).to(b)(v),
    ),
    Entry("Module.train(mode)", "mode", FLAG, lambda b, v: nn.Linear(2, 2).train(v)),
    Entry(
        "Module.to(device)",
        "device|dtype",
        kind("module target", lambda v: target_verdict(v, False), DEVICE.probes, DEVICE.strategy),
        lambda b, v: nn.Linear(2, 2).to(v),
    ),
    Entry("Module.load_state_dict(state)", "state", STATE, lambda b, v: nn.Linear(2, 2).load_state_dict(v)),
    Entry(
        "Module.load_state_dict(strict=)",
        "strict",
        FLAG,
        lambda b, v: nn.Linear(2, 2).load_state_dict(nn.Linear(2, 2).state_dict(), strict=v),
    ),
    Entry(
        "nn.Parameter(requires_grad=)",
        "requires_grad",
        FLAG,
        lambda b, v: nn.Parameter([1.0], requires_grad=v),
    ),
    # optimizers and checkpoints
    *(
        Entry(f"{cls.__name__}(lr=)", "lr", RATE, lambda b, v, c=cls: c(params(b), lr=v))
        for cls in (SGD, Adam, AdamW)
    ),
    Entry("SGD(params)", "parameters", PARAMS, lambda b, v: SGD(v)),
    Entry("clip_grad_norm_(params)", "parameters", PARAMS, lambda b, v: clip_grad_norm_(v, 1.0)),
    Entry("SGD(momentum=)", "momentum", RATE, lambda b, v: SGD(params(b), momentum=v)),
    Entry("Adam(eps=)", "eps", RATE, lambda b, v: Adam(params(b), eps=v)),
    Entry(
        "Adam(weight_decay=)",
        "weight_decay",
        kind(
            "weight decay",
            real_verdict(0.0, math.inf, False, True, none_ok=True),
            tuple(v for v in RATE.probes if v is not None),
            RATE.strategy.filter(lambda v: v is not None),
        ),
        lambda b, v: Adam(params(b), weight_decay=v),
    ),
    Entry("Optimizer.lr = ", "lr", RATE, lambda b, v: setattr(SGD(params(b)), "lr", v)),
    Entry("clip_grad_norm_(max_norm)", "max_norm", MAX_NORM, lambda b, v: clip_grad_norm_(params(b), v)),
    Entry("save_checkpoint(path)", "path", PATH, lambda b, v: save_checkpoint(v, nn.Linear(2, 2))),
    Entry("load_checkpoint(path)", "path", PATH, lambda b, v: load_checkpoint(v, nn.Linear(2, 2))),
    Entry("read_checkpoint(path)", "path", PATH, lambda b, v: read_checkpoint(v)),
]


def refused(entry: Entry, backend, value: Any) -> str | None:
    """None when ``entry`` treats ``value`` by the rule, else what it did instead."""
    want = entry.kind.verdict(value)
    if want is None:
        return None
    shown = f"{entry.label} with {value!r}"
    try:
        entry.call(backend, value)
    except (TypeError, ValueError, IndexError) as err:
        message = str(err)
        if type(err) is not want and not isinstance(err, want):
            return f"{shown}: {type(err).__name__} ({message}), expected {want.__name__}"
        if not re.search(rf"(?<!\w)(?:{entry.arg})(?!\w)", message):
            return f"{shown}: the message {message!r} does not name {entry.arg!r}"
        if FOREIGN_WORDS.search(message):
            return f"{shown}: the message {message!r} is Python's or numpy's, not the library's"
        return None
    except Exception as err:  # the failure being tested for: an unclear exception
        return f"{shown}: {type(err).__name__} ({err}), expected {want.__name__}"
    return f"{shown}: accepted, expected {want.__name__}"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # save_checkpoint probes write nothing, but never into the checkout


@pytest.mark.op("input errors")
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.label)
def test_every_fixed_malformed_value_is_refused_by_the_rule(backend, entry):
    problems = [p for value in entry.kind.probes if (p := refused(entry, backend, value))]
    assert not problems, "\n".join(problems)


# Each entry gets its own draws: a third of the tier's example count (at least 2).
PER_ENTRY = settings(max_examples=max(2, LIMITS.max_examples // 3))


@pytest.mark.op("input errors")
@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.label)
@PER_ENTRY
@given(data=st.data())
def test_drawn_malformed_values_are_refused_by_the_rule(backend, entry, data):
    value = data.draw(entry.kind.strategy, label="value")
    assume(entry.kind.verdict(value) is not None)
    problem = refused(entry, backend, value)
    assert problem is None, problem
