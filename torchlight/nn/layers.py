"""Layers: Linear, Embedding, LayerNorm, Dropout, and the transformer pieces built on them."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.checks import check_numel
from ..core.creation import default_generator
from ..core.tensor import Tensor, resolve_dtype
from . import functional as F
from .checks import check_count, check_flag, check_held_by, check_input, check_real
from .module import Module, Parameter


def _uniform(shape: tuple[int, ...], bound: float, dtype: Any, device: Any) -> Parameter:
    check_numel(shape, "weight shape", "Linear")
    values = default_generator().uniform(-bound, bound, size=shape)
    return Parameter(values.astype(resolve_dtype(dtype)), device=device)


class Linear(Module):
    """``y = x @ weight.T + bias`` with ``weight [out_features, in_features]``."""

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, dtype: Any = None, device: Any = None
    ):
        super().__init__()
        in_features = check_count(in_features, "in_features", "Linear")
        out_features = check_count(out_features, "out_features", "Linear")
        bias = check_flag(bias, "bias", "Linear")
        resolve_dtype(dtype)  # a bad dtype is named before anything is allocated
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.in_features, self.out_features = in_features, out_features
        self.weight = _uniform((out_features, in_features), bound, dtype, device)
        self.bias = _uniform((out_features,), bound, dtype, device) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        """``x @ weight.T + bias`` over the last dim of ``x``."""
        layout = f"[..., {self.in_features}]"
        x = check_input(x, f"Linear({self.in_features}, {self.out_features})", 1, layout)
        if x.shape[-1] != self.in_features:
            raise ValueError(
                f"Linear({self.in_features}, {self.out_features}) got input with last dim "
                f"{x.shape[-1]} (shape {x.shape})"
            )
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table of ``num_embeddings`` rows of size ``embedding_dim``."""

    def __init__(
        self, num_embeddings: int, embedding_dim: int, std: float = 1.0, dtype: Any = None, device: Any = None
    ):
        super().__init__()
        num_embeddings = check_count(num_embeddings, "num_embeddings", "Embedding")
        embedding_dim = check_count(embedding_dim, "embedding_dim", "Embedding")
        std = check_real(std, "std", "Embedding", 0.0, math.inf)
        check_numel((num_embeddings, embedding_dim), "weight shape", "Embedding")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        values = default_generator().normal(0.0, std, (num_embeddings, embedding_dim))
        self.weight = Parameter(values.astype(resolve_dtype(dtype)), device=device)

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(indices, self.weight)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    """Layer norm over the last dim; ``fused`` picks the fused kernel or the composition."""

    def __init__(
        self, dim: int, eps: float = 1e-5, fused: bool = True, dtype: Any = None, device: Any = None
    ):
        super().__init__()
        dim = check_count(dim, "dim", "LayerNorm")
        eps = check_real(eps, "eps", "LayerNorm", 0.0, math.inf, low_open=True)
        fused = check_flag(fused, "fused", "LayerNorm")
        self.dim, self.eps, self.fused = dim, eps, fused
        dt = resolve_dtype(dtype)
        check_held_by(eps, dt, "eps", "LayerNorm")
        self.weight = Parameter(np.ones(dim, dtype=dt), device=device)
        self.bias = Parameter(np.zeros(dim, dtype=dt), device=device)

    def forward(self, x: Tensor) -> Tensor:
        """Normalise the last dim of ``x`` and apply the scale and shift."""
        x = check_input(x, f"LayerNorm({self.dim})", 1, f"[..., {self.dim}]")
        return F.layer_norm(x, self.weight, self.bias, self.eps, fused=self.fused)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}, fused={self.fused}"


class Dropout(Module):
    """Randomly zero elements while training; seed with ``generator`` or ``manual_seed``."""

    def __init__(self, p: float = 0.1, generator: np.random.Generator | None = None):
        super().__init__()
        p = check_real(p, "p", "Dropout", 0.0, 1.0)
        if generator is not None and not isinstance(generator, np.random.Generator):
            raise TypeError(
                f"Dropout generator must be a numpy.random.Generator, got {type(generator).__name__}; "
                f"pass numpy.random.default_rng(seed)"
            )
        self.p, self.generator = p, generator

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class GELU(Module):
    """GELU activation (tanh approximation)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x)
