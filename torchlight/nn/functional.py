"""Functional forms of the layers: activations, losses, dropout, and the fused/unfused ops.

Everything here composes Tensor operations, so it runs on any backend and differentiates
through the Functions of ``torchlight.core``. The ``*_reference`` forms are the unfused
compositions the fused kernels are checked against.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.autograd import Function
from ..core.creation import default_generator
from ..core.functions import Gelu
from ..core.tensor import Tensor
from ..core.tensor_data import TensorData
from .checks import check_count, check_flag, check_float_dtype, check_held_by, check_real, check_tensor

IGNORE_INDEX = -100


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along ``dim``."""
    return check_tensor(x, "x", "softmax").softmax(dim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Log-softmax along ``dim``."""
    return check_tensor(x, "x", "log_softmax").log_softmax(dim)


def gelu(x: Tensor) -> Tensor:
    """GELU, tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``, as one op."""
    check_tensor(x, "x", "gelu")
    return Gelu.apply(x)


def gelu_reference(x: Tensor) -> Tensor:
    """GELU composed from elementwise ops: ``gelu`` gives its values and gradients, bit for bit."""
    check_tensor(x, "x", "gelu")
    inner = (x + (x * x * x) * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (inner.tanh() + 1.0)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` with ``weight`` shaped ``[out, in]``."""
    check_tensor(x, "x", "linear")
    check_tensor(weight, "weight", "linear")
    if bias is not None:
        check_tensor(bias, "bias", "linear")
    out = x @ weight.T
    return out if bias is None else out + bias


def as_index_array(indices: Tensor | np.ndarray | Sequence, size: int, what: str) -> np.ndarray:
    """Integer class/token ids as an int64 array, each checked to lie in ``[0, size)``."""
    if isinstance(indices, Tensor):
        values = indices.numpy()
    elif indices is None or isinstance(indices, (str, bytes)):
        raise TypeError(f"{what} must be integers, got {type(indices).__name__} {indices!r}")
    else:
        try:
            values = np.asarray(indices)
        except ValueError as err:
            raise ValueError(f"{what} must be a rectangular array of integers ({err})") from None
    kind = values.dtype.kind
    if kind == "f":
        finite = np.isfinite(values)
        # mod of a non-finite id would warn (invalid value); those ids are refused anyway.
        fraction = np.mod(values, 1, out=np.ones_like(values), where=finite)
        integral = finite & np.equal(fraction, 0)
        if not integral.all():
            bad = values[~integral].reshape(-1)[0]
            raise TypeError(
                f"{what} must be integers, got {float(bad)!r} in {values.dtype} input; "
                f"pass integer ids (e.g. numpy.asarray(ids, dtype=int))"
            )
    elif kind not in "iu":
        raise TypeError(
            f"{what} must be integers, got dtype {values.dtype}; pass integer ids "
            f"(e.g. numpy.asarray(ids, dtype=int)){' not booleans' if kind == 'b' else ''}"
        )
    # Range check in the ids' own dtype: a cast to int64 first would wrap uint64 2**64-1 to -1.
    bad = (values < 0) | (values >= size)
    if bad.any():
        first = values[bad].reshape(-1)[0]
        shown = int(first) if kind in "iu" else float(first)
        raise IndexError(f"{what} value {shown} is out of range: expected 0 <= id < {size}")
    return values.astype(np.int64)


def one_hot(indices: np.ndarray, size: int, like: Tensor) -> Tensor:
    """One-hot rows ``[..., size]`` in ``like``'s dtype and backend (no gradient)."""
    eye = np.zeros((*indices.shape, size), dtype=like.dtype)
    np.put_along_axis(eye, indices[..., None], 1.0, axis=-1)
    return Tensor._wrap(TensorData.from_array(eye), like.backend)


def embedding(indices: Tensor | np.ndarray | Sequence, weight: Tensor) -> Tensor:
    """Rows of ``weight`` picked by integer ``indices`` (a one-hot matmul, so it differentiates)."""
    check_tensor(weight, "weight", "embedding")
    if weight.ndim != 2:
        raise ValueError(f"embedding weight must be [num_embeddings, dim], got shape {weight.shape}")
    ids = as_index_array(indices, weight.shape[0], "embedding index")
    return one_hot(ids, weight.shape[0], weight) @ weight


class Pick(Function):
    """``x[rows, cols]`` of a 2-d input as a 1-d result; the backward scatters the gradient back."""

    @staticmethod
    def forward(ctx, backend, x: TensorData, rows: np.ndarray, cols: np.ndarray) -> TensorData:
        ctx.save_for_backward(x.shape, x.dtype, rows, cols)
        return TensorData.from_array(np.ascontiguousarray(x.array[rows, cols]))

    @staticmethod
    def backward(ctx, backend, grad: TensorData) -> TensorData:
        shape, dtype, rows, cols = ctx.saved
        out = np.zeros(shape, dtype)
        np.add.at(out, (rows, cols), grad.array)
        return TensorData.from_array(out)


def cross_entropy(
    logits: Tensor, targets: Tensor | np.ndarray | Sequence, ignore_index: int = IGNORE_INDEX
) -> Tensor:
    """Mean negative log-likelihood of integer ``targets`` under ``logits [..., classes]``.

    Positions whose target equals ``ignore_index`` do not count; if every position is
    ignored the loss is 0.
    """
    if not isinstance(logits, Tensor):
        raise TypeError(
            f"cross_entropy logits must be a Tensor shaped [..., classes], got {type(logits).__name__}; "
            f"wrap it with tl.tensor(logits)"
        )
    if logits.ndim == 0:
        raise ValueError(
            "cross_entropy logits must have a class dimension ([..., classes]), got a 0-d tensor; "
            "view it as shape (1, classes)"
        )
    if isinstance(ignore_index, (bool, np.bool_)) or not isinstance(ignore_index, (int, np.integer)):
        raise TypeError(f"cross_entropy ignore_index must be an int, got {ignore_index!r}")
    classes = logits.shape[-1]
    if isinstance(targets, Tensor):
        raw = targets.numpy()
    elif targets is None or isinstance(targets, (str, bytes)):
        raise TypeError(f"cross_entropy targets must be integer class ids, got {targets!r}")
    else:
        raw = np.asarray(targets)
    if raw.dtype.kind not in "iuf":
        raise TypeError(
            f"cross_entropy targets have dtype {raw.dtype}: pass integer class ids "
            f"(e.g. numpy.asarray(targets, dtype=int))"
        )
    if raw.shape != logits.shape[:-1]:
        raise ValueError(
            f"cross_entropy targets have shape {raw.shape}, expected {logits.shape[:-1]} "
            f"to match logits of shape {logits.shape}"
        )
    keep = (raw != ignore_index).reshape(-1)
    ids = as_index_array(np.where(keep, raw.reshape(-1), 0), classes, "cross_entropy target")
    rows = np.flatnonzero(keep)
    # Select each kept row's target log-probability (a product with a one-hot row would turn a
    # -inf log-probability of another class into NaN; ignored rows are never read).
    picked = Pick.apply(logits.view(-1, classes).log_softmax(-1), rows=rows, cols=ids[rows])
    return (0.0 - picked.sum()) * (1.0 / max(rows.size, 1))


def dropout(
    x: Tensor, p: float, training: bool = True, generator: np.random.Generator | None = None
) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``."""
    p = check_real(p, "p", "dropout", 0.0, 1.0)
    check_tensor(x, "x", "dropout")
    if not check_flag(training, "training", "dropout") or p == 0.0:
        return x
    rng = generator if generator is not None else default_generator()
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"dropout generator must be a numpy.random.Generator, got {type(rng).__name__}; "
            f"pass numpy.random.default_rng(seed)"
        )
    keep = (rng.random(x.shape) >= p).astype(x.dtype) / (1.0 - p)
    return x * keep


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5, fused: bool = True) -> Tensor:
    """Layer norm over the last dim: the fused kernel, or the unfused reference."""
    check_tensor(x, "x", "layer_norm")
    eps = check_real(eps, "eps", "layer_norm", 0.0, math.inf, low_open=True)
    eps = check_held_by(eps, x.dtype, "eps", "layer_norm")
    if check_flag(fused, "fused", "layer_norm"):
        return x._layer_norm(gamma, beta, eps)  # eps checked above, as Tensor.layer_norm would
    return layer_norm_reference(x, gamma, beta, eps)


def layer_norm_reference(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """Layer norm composed from elementwise ops and reductions (no fused kernel)."""
    centred = x - x.mean(-1, keepdim=True)
    var = (centred * centred).mean(-1, keepdim=True)
    return centred * (var + eps) ** -0.5 * gamma + beta


_MASK_HOLDS = "an additive mask holds -inf for each excluded key"


def causal_mask(q_len: int, k_len: int, dtype: np.dtype) -> np.ndarray:
    """Additive ``[q_len, k_len]`` mask: ``-inf`` where key ``k > q``, else 0."""
    q_len = check_count(q_len, "q_len", "causal_mask")
    k_len = check_count(k_len, "k_len", "causal_mask")
    dtype = check_float_dtype(dtype, "dtype", "causal_mask", _MASK_HOLDS)
    future = np.arange(k_len)[None, :] > np.arange(q_len)[:, None]
    return np.where(future, -np.inf, 0.0).astype(dtype)


def attention_softmax(
    scores: Tensor, mask: Tensor | None = None, causal: bool = False, fused: bool = True
) -> Tensor:
    """Softmax of ``[batch, heads, q, k]`` scores: the fused kernel, or the unfused reference."""
    check_tensor(scores, "scores", "attention_softmax")
    if check_flag(fused, "fused", "attention_softmax"):
        return scores.attn_softmax(mask, causal)
    return attention_softmax_reference(scores, mask, causal)


def attention_softmax_reference(scores: Tensor, mask: Tensor | None = None, causal: bool = False) -> Tensor:
    """Unfused attention softmax (rows with every key excluded give NaN here, zeros fused).

    ``mask`` broadcasts as in ``Tensor.attn_softmax``: a 2-d mask is ``[batch, k_len]``.
    """
    causal = check_flag(causal, "causal", "attention_softmax")
    if scores.ndim != 4:
        raise ValueError(
            f"attention_softmax expects scores of shape [batch, heads, q_len, k_len], got {scores.shape}"
        )
    _, _, q_len, k_len = scores.shape
    if mask is not None:
        mask = scores._attn_mask(mask)
        if mask.ndim == 2:  # key padding: [batch, k_len] -> [batch, 1, 1, k_len]
            mask = mask.view(mask.shape[0], 1, 1, mask.shape[1])
        scores = scores + mask
    if causal:
        scores = scores + causal_mask(q_len, k_len, scores.dtype)
    return scores.softmax(-1)


def padding_array(pad: np.ndarray | Sequence, shape: tuple[int, int] | None = None) -> np.ndarray:
    """``pad`` as a ``[batch, k_len]`` bool array (True = padding), checked: bools, or ints 0 and 1."""
    if not isinstance(pad, (np.ndarray, list, tuple)):
        raise TypeError(
            f"padding must be a [batch, seq] array of bools (True = padding), got {type(pad).__name__} "
            f"{pad!r:.60}; e.g. numpy.array([[False, False, True]])"
        )
    try:
        array = np.asarray(pad)
    except ValueError as err:
        raise ValueError(f"padding must be a rectangular [batch, seq] array of bools ({err})") from None
    if array.dtype.kind in "iu":
        outside = ~np.isin(array, (0, 1))
        if outside.any():
            bad = array[outside].reshape(-1)[0]
            raise ValueError(
                f"padding holds {bad!r}: an integer padding mask holds only 0 and 1 (1 = padding)"
            )
        array = array.astype(bool)
    elif array.dtype.kind != "b":
        raise TypeError(
            f"padding must be bools (True = padding), got dtype {array.dtype}; a float or string mask "
            f"is ambiguous: pass numpy.asarray(pad, dtype=bool) if that is what it means"
        )
    if array.ndim != 2 or (shape is not None and array.shape != tuple(shape)):
        expected = f"{tuple(shape)} ([batch, seq])" if shape is not None else "[batch, seq] (2-d)"
        raise ValueError(f"padding has shape {array.shape}, expected {expected}")
    return array


def padding_mask(pad: np.ndarray | Sequence, dtype: np.dtype) -> np.ndarray:
    """Additive ``[batch, k_len]`` mask from booleans (True = padding: excluded), of the floating
    ``dtype`` (TypeError for any other: only a floating mask holds ``-inf``)."""
    dt = check_float_dtype(dtype, "dtype", "padding_mask", _MASK_HOLDS)
    return np.where(padding_array(pad), -np.inf, 0.0).astype(dt)
