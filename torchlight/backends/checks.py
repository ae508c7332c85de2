"""Input checks shared by every backend's primitives and fused ops.

They run before any kernel (numpy, numba, CUDA or a ctypes launcher) sees the data, so
every backend refuses bad input with the same message.
"""

from __future__ import annotations

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
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (*batch, a.shape[-2], b.shape[-1])


def check_attn_softmax(x: TensorData, mask: TensorData | None) -> None:
    """``x`` is ``[batch, heads, q_len, k_len]``; ``mask``, if given, is ``[batch, k_len]``."""
    if x.ndim != 4:
        raise ValueError(f"attn_softmax expects scores of shape [batch, heads, q_len, k_len], got {x.shape}")
    if mask is not None:
        expected = (x.shape[0], x.shape[3])
        if mask.shape != expected:
            raise ValueError(
                f"attn_softmax mask has shape {mask.shape}, expected [batch, k_len] = "
                f"{expected} for scores of shape {x.shape}"
            )
        if mask.dtype != x.dtype:
            raise TypeError(f"attn_softmax mask dtype {mask.dtype} differs from scores {x.dtype}")


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
