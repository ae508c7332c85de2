"""Functional forms of the layers: activations, losses, dropout, and the fused/unfused ops.

Everything here composes Tensor operations, so it runs on any backend and differentiates
through the Functions of ``torchlight.core``. The ``*_reference`` forms are the unfused
compositions the fused kernels are checked against.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core.creation import default_generator
from ..core.tensor import Tensor
from ..core.tensor_data import TensorData

IGNORE_INDEX = -100


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Softmax along ``dim``."""
    return x.softmax(dim)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """Log-softmax along ``dim``."""
    return x.log_softmax(dim)


def gelu(x: Tensor) -> Tensor:
    """GELU, tanh approximation: ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    inner = (x + (x * x * x) * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (inner.tanh() + 1.0)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight.T + bias`` with ``weight`` shaped ``[out, in]``."""
    out = x @ weight.T
    return out if bias is None else out + bias


def as_index_array(indices: Tensor | np.ndarray | Sequence, size: int, what: str) -> np.ndarray:
    """Integer class/token ids as an int64 array, each checked to lie in ``[0, size)``."""
    if isinstance(indices, Tensor):
        values = indices.numpy()
    else:
        values = np.asarray(indices)
    if values.dtype.kind == "f":
        if not np.all(np.equal(np.mod(values, 1), 0)):
            raise TypeError(f"{what} must be integers, got non-integral values in {values.dtype} input")
        values = values.astype(np.int64)
    elif values.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got dtype {values.dtype}")
    values = values.astype(np.int64, copy=False)
    bad = (values < 0) | (values >= size)
    if bad.any():
        raise IndexError(f"{what} value {int(values[bad][0])} is out of range: expected 0 <= id < {size}")
    return values


def one_hot(indices: np.ndarray, size: int, like: Tensor) -> Tensor:
    """One-hot rows ``[..., size]`` in ``like``'s dtype and backend (no gradient)."""
    eye = np.zeros((*indices.shape, size), dtype=like.dtype)
    np.put_along_axis(eye, indices[..., None], 1.0, axis=-1)
    return Tensor._wrap(TensorData.from_array(eye), like.backend)


def embedding(indices: Tensor | np.ndarray | Sequence, weight: Tensor) -> Tensor:
    """Rows of ``weight`` picked by integer ``indices`` (a one-hot matmul, so it differentiates)."""
    ids = as_index_array(indices, weight.shape[0], "embedding index")
    return one_hot(ids, weight.shape[0], weight) @ weight


def cross_entropy(
    logits: Tensor, targets: Tensor | np.ndarray | Sequence, ignore_index: int = IGNORE_INDEX
) -> Tensor:
    """Mean negative log-likelihood of integer ``targets`` under ``logits [..., classes]``.

    Positions whose target equals ``ignore_index`` do not count; if every position is
    ignored the loss is 0.
    """
    classes = logits.shape[-1]
    raw = np.asarray(targets.numpy() if isinstance(targets, Tensor) else targets)
    if raw.shape != logits.shape[:-1]:
        raise ValueError(
            f"cross_entropy targets have shape {raw.shape}, expected {logits.shape[:-1]} "
            f"to match logits of shape {logits.shape}"
        )
    keep = raw != ignore_index
    ids = as_index_array(np.where(keep, raw, 0), classes, "cross_entropy target")
    flat = logits.view(-1, classes)
    picked = (flat.log_softmax(-1) * one_hot(ids.reshape(-1), classes, logits)).sum(-1)
    weight = keep.reshape(-1).astype(logits.dtype)
    count = max(float(weight.sum()), 1.0)
    return -(picked * weight).sum() * (1.0 / count)


def dropout(
    x: Tensor, p: float, training: bool = True, generator: np.random.Generator | None = None
) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p!r}")
    if not training or p == 0.0:
        return x
    rng = generator if generator is not None else default_generator()
    keep = (rng.random(x.shape) >= p).astype(x.dtype) / (1.0 - p)
    return x * keep


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5, fused: bool = True) -> Tensor:
    """Layer norm over the last dim: the fused kernel, or the unfused reference."""
    if fused:
        return x.layer_norm(gamma, beta, eps)
    return layer_norm_reference(x, gamma, beta, eps)


def layer_norm_reference(x: Tensor, gamma: Tensor, beta: Tensor, eps: float = 1e-5) -> Tensor:
    """Layer norm composed from elementwise ops and reductions (no fused kernel)."""
    centred = x - x.mean(-1, keepdim=True)
    var = (centred * centred).mean(-1, keepdim=True)
    return centred * (var + eps) ** -0.5 * gamma + beta


def causal_mask(q_len: int, k_len: int, dtype: np.dtype) -> np.ndarray:
    """Additive ``[q_len, k_len]`` mask: ``-inf`` where key ``k > q``, else 0."""
    future = np.arange(k_len)[None, :] > np.arange(q_len)[:, None]
    return np.where(future, -np.inf, 0.0).astype(dtype)


def attention_softmax(
    scores: Tensor, mask: Tensor | None = None, causal: bool = False, fused: bool = True
) -> Tensor:
    """Softmax of ``[batch, heads, q, k]`` scores: the fused kernel, or the unfused reference."""
    if fused:
        return scores.attn_softmax(mask, causal)
    return attention_softmax_reference(scores, mask, causal)


def attention_softmax_reference(scores: Tensor, mask: Tensor | None = None, causal: bool = False) -> Tensor:
    """Unfused attention softmax (rows with every key excluded give NaN here, zeros fused).

    ``mask`` broadcasts as in ``Tensor.attn_softmax``: a 2-d mask is ``[batch, k_len]``.
    """
    _, _, q_len, k_len = scores.shape
    if mask is not None:
        if mask.ndim == 2:  # key padding: [batch, k_len] -> [batch, 1, 1, k_len]
            mask = mask.view(mask.shape[0], 1, 1, mask.shape[1])
        scores = scores + mask
    if causal:
        scores = scores + causal_mask(q_len, k_len, scores.dtype)
    return scores.softmax(-1)


def padding_mask(pad: np.ndarray | Sequence, dtype: np.dtype) -> np.ndarray:
    """Additive ``[batch, k_len]`` mask from booleans (True = padding: excluded)."""
    return np.where(np.asarray(pad, dtype=bool), -np.inf, 0.0).astype(dtype)
