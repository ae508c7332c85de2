"""Input checks shared by every backend's primitives and fused ops.

They run before any kernel (numpy, numba, CUDA or a ctypes launcher) sees the data, so
every backend refuses bad input with the same message.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor_data import TensorData, broadcast_shapes, normalize_dim


def check_reduce_dim(a: TensorData, dim: int) -> int:
    """The reduced dim as a non-negative index, or IndexError naming it."""
    if a.ndim == 0:
        raise IndexError(f"cannot reduce dim {dim} of a 0-d tensor: view it as shape (1,) first")
    return normalize_dim(dim, a.ndim, "reduce dim")


def matmul_shape(a: TensorData, b: TensorData) -> tuple[int, ...]:
    """Result shape of a batched matmul, or ValueError naming both shapes."""
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul needs tensors with at least 2 dims, got shapes {a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul inner dimensions differ: {a.shape} @ {b.shape} "
            f"({a.shape[-1]} != {b.shape[-2]}); the last dim of the left operand must equal "
            f"the second-to-last dim of the right"
        )
    batch = a.shape[:-2]
    if batch != b.shape[:-2]:
        batch = broadcast_shapes(batch, b.shape[:-2])
    return (*batch, a.shape[-2], b.shape[-1])


MASK_SHAPES_HELP = (
    "a mask broadcastable to [batch, heads, q_len, k_len]: [k_len], [batch, k_len] (key padding, "
    "as PyTorch's key_padding_mask), [heads, q_len, k_len] or [batch, heads, q_len, k_len] with any "
    "dim 1 (e.g. [batch, 1, 1, k_len], [1, 1, q_len, k_len])"
)


def check_attn_softmax(x: TensorData, mask: TensorData | None) -> None:
    """``x`` is ``[batch, heads, q_len, k_len]``; ``mask``, if given, a float mask that broadcasts to it."""
    attn_softmax_inputs(x, mask)


def attn_mask_4d(x_shape: tuple[int, ...], mask: TensorData) -> TensorData:
    """``mask`` as a 4-d view broadcastable to ``x_shape`` (sizes 1 or equal), without a copy.

    A 2-d mask is ``[batch, k_len]`` (key padding); other ranks align from the right.
    """
    if mask.ndim > 4:
        raise ValueError(
            f"attn_softmax mask has {mask.ndim} dims (shape {mask.shape}) for scores of shape "
            f"{tuple(x_shape)}; expected {MASK_SHAPES_HELP}"
        )
    if mask.ndim == 2:
        shape = (mask.shape[0], 1, 1, mask.shape[1])
        strides = (mask.strides[0], 0, 0, mask.strides[1])
    else:
        pad = 4 - mask.ndim
        shape = (1,) * pad + tuple(mask.shape)
        strides = (0,) * pad + tuple(mask.strides)
    if any(m not in (1, d) for m, d in zip(shape, x_shape)):
        kind = ""
        if mask.ndim == 2:
            kind = f" (a 2-d mask is [batch, k_len] = {(x_shape[0], x_shape[3])}, key padding)"
        raise ValueError(
            f"attn_softmax mask of shape {mask.shape}{kind} does not broadcast to the scores' "
            f"[batch, heads, q_len, k_len] = {tuple(x_shape)}; pass {MASK_SHAPES_HELP}"
        )
    return TensorData(mask.storage, shape, strides, mask.offset)


def attn_softmax_inputs(x: TensorData, mask: TensorData | None) -> tuple[TensorData, TensorData | None]:
    """Checked scores and mask, promoted to one dtype as other ops do; the mask as a 4-d view.

    ``x`` must be ``[batch, heads, q_len, k_len]``; the mask is additive and floating point
    (0 keeps a key, ``-inf`` excludes it), broadcastable as ``attn_mask_4d`` says.
    """
    if x.ndim != 4:
        raise ValueError(f"attn_softmax expects scores of shape [batch, heads, q_len, k_len], got {x.shape}")
    if mask is None:
        return x, None
    if mask.dtype.kind != "f":
        raise TypeError(
            f"attn_softmax mask has dtype {mask.dtype}; it must be an additive float mask "
            "(0 keeps a key, -inf excludes it): for a boolean keep-mask use np.where(keep, 0.0, -np.inf)"
        )
    mask = attn_mask_4d(x.shape, mask)
    common = np.result_type(x.dtype, mask.dtype)
    if x.dtype != common:
        x = TensorData.from_array(x.array.astype(common))
    if mask.dtype != common:
        mask = TensorData.from_array(mask.array.astype(common))
    return x, mask


def compact_mask(mask: TensorData) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The mask's own elements (C-contiguous) and the element strides that broadcast them.

    ``mask`` is a 4-d view from ``attn_mask_4d``; the strides are 0 along its size-1 dims. Only
    a non-contiguous mask is copied, and never to the scores' size.
    """
    array = np.ascontiguousarray(mask.array)
    strides = tuple(0 if n == 1 else s // array.itemsize for n, s in zip(array.shape, array.strides))
    return array, strides


def check_same_shape(name: str, a: TensorData, b: TensorData) -> None:
    """Raise ValueError unless the two operands of ``name`` have one shape."""
    if a.shape != b.shape:
        raise ValueError(f"{name}: shapes {a.shape} and {b.shape} must be equal")


def check_layernorm(x: TensorData, gamma: TensorData, beta: TensorData, eps: float) -> None:
    """``gamma`` and ``beta`` are ``[hidden]`` with hidden the last dim of ``x``; eps > 0."""
    if x.ndim < 1:
        raise ValueError("layer_norm needs at least one dimension to normalise over")
    hidden = x.shape[-1]
    if hidden == 0:
        raise ValueError(f"layer_norm over an empty last dim (input shape {x.shape}) is undefined")
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p.shape != (hidden,):
            raise ValueError(
                f"layer_norm {name} has shape {p.shape}, expected ({hidden},) to match the last "
                f"dim of input shape {x.shape}"
            )
        if p.dtype != x.dtype:
            raise TypeError(f"layer_norm {name} dtype {p.dtype} differs from input {x.dtype}")
    if not eps > 0:
        raise ValueError(f"layer_norm eps must be > 0, got {eps!r}")


def check_layernorm_bw(
    dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
) -> None:
    """``dy`` matches ``x``; ``gamma`` is ``[hidden]``; ``mean`` and ``rstd`` are ``x.shape[:-1]``."""
    check_same_shape("layernorm_bw", dy, x)
    if x.ndim < 1 or x.shape[-1] == 0:
        raise ValueError(f"layernorm_bw needs a non-empty last dim to normalise over, got shape {x.shape}")
    hidden = x.shape[-1]
    if gamma.shape != (hidden,):
        raise ValueError(
            f"layernorm_bw gamma has shape {gamma.shape}, expected ({hidden},) to match the last dim "
            f"of input shape {x.shape}"
        )
    rows = x.shape[:-1]
    if mean.shape != rows or rstd.shape != rows:
        raise ValueError(f"layernorm_bw: mean {mean.shape} and rstd {rstd.shape} must have shape {rows}")


def check_gelu_bw(x: TensorData, t: TensorData, dy: TensorData) -> None:
    """``t`` (the forward's tanh) and ``dy`` have the shape and dtype of ``x``."""
    check_same_shape("gelu_bw", x, t)
    check_same_shape("gelu_bw", x, dy)
    if not x.dtype == t.dtype == dy.dtype:
        raise TypeError(
            f"gelu_bw: x, t and dy must share one dtype, got {x.dtype}, {t.dtype} and {dy.dtype}; "
            f"convert dy with .to(x.dtype) first"
        )
