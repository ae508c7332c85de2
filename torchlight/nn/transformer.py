"""Multi-head attention, the pre-LN transformer block and a small decoder-only language model."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.tensor import Tensor
from . import functional as F
from .checks import check_count, check_flag, check_input, check_real
from .layers import Dropout, Embedding, LayerNorm, Linear
from .module import Module


class MultiHeadAttention(Module):
    """Self-attention over ``[batch, seq, dim]`` with ``heads`` heads.

    ``padding`` (``[batch, seq]`` booleans, True = padding) excludes keys; ``causal``
    excludes keys after each query. ``fused`` picks the fused attention softmax.
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        dropout: float = 0.0,
        fused: bool = True,
        dtype: Any = None,
        device: Any = None,
    ):
        super().__init__()
        dim = check_count(dim, "dim", "MultiHeadAttention", 1)
        heads = check_count(heads, "heads", "MultiHeadAttention", 1)
        if dim % heads:
            raise ValueError(f"MultiHeadAttention dim {dim} must be a positive multiple of heads {heads}")
        check_real(dropout, "dropout", "MultiHeadAttention", 0.0, 1.0)
        fused = check_flag(fused, "fused", "MultiHeadAttention")
        self.dim, self.heads, self.fused = dim, heads, fused
        self.q_proj = Linear(dim, dim, dtype=dtype, device=device)
        self.k_proj = Linear(dim, dim, dtype=dtype, device=device)
        self.v_proj = Linear(dim, dim, dtype=dtype, device=device)
        self.out_proj = Linear(dim, dim, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)

    def _split(self, x: Tensor) -> Tensor:
        batch, seq, _ = x.shape
        return x.view(batch, seq, self.heads, self.dim // self.heads).permute(0, 2, 1, 3)

    def forward(self, x: Tensor, padding: np.ndarray | None = None, causal: bool = False) -> Tensor:
        """Attend over ``x [batch, seq, dim]``; ``padding`` and ``causal`` exclude keys."""
        owner = f"MultiHeadAttention({self.dim}, {self.heads})"
        causal = check_flag(causal, "causal", owner)
        x = check_input(x, owner, 3, f"[batch, seq, {self.dim}]")
        if x.ndim != 3:
            raise ValueError(
                f"{owner} expects input shaped [batch, seq, {self.dim}], got shape {x.shape} ({x.ndim}-d)"
            )
        batch, seq, dim = x.shape
        if dim != self.dim:
            raise ValueError(f"MultiHeadAttention({self.dim}) got input of shape {x.shape}")
        pad = None if padding is None else F.padding_array(padding, (batch, seq))  # checked before any work
        q, k, v = self._split(self.q_proj(x)), self._split(self.k_proj(x)), self._split(self.v_proj(x))
        scores = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dim // self.heads))
        mask = None
        if pad is not None:
            mask = x._lift(F.padding_mask(pad, x.dtype))
        weights = self.dropout(F.attention_softmax(scores, mask, causal, fused=self.fused))
        out = (weights @ v).permute(0, 2, 1, 3).view(batch, seq, dim)
        return self.out_proj(out)


class TransformerBlock(Module):
    """Pre-LN block: ``x + attn(ln1(x))`` then ``x + mlp(ln2(x))`` with a GELU MLP."""

    def __init__(
        self,
        dim: int,
        heads: int,
        hidden: int | None = None,
        dropout: float = 0.0,
        fused: bool = True,
        dtype: Any = None,
        device: Any = None,
    ):
        super().__init__()
        dim = check_count(dim, "dim", "TransformerBlock", 1)
        hidden = 4 * dim if hidden is None else check_count(hidden, "hidden", "TransformerBlock", 1)
        self.ln1 = LayerNorm(dim, fused=fused, dtype=dtype, device=device)
        self.attn = MultiHeadAttention(dim, heads, dropout, fused=fused, dtype=dtype, device=device)
        self.ln2 = LayerNorm(dim, fused=fused, dtype=dtype, device=device)
        self.fc1 = Linear(dim, hidden, dtype=dtype, device=device)
        self.fc2 = Linear(hidden, dim, dtype=dtype, device=device)
        self.dropout = Dropout(dropout)

    def forward(self, x: Tensor, padding: np.ndarray | None = None, causal: bool = True) -> Tensor:
        """One pre-LN block over ``x [batch, seq, dim]``; ``padding`` and ``causal`` exclude keys."""
        check_flag(causal, "causal", "TransformerBlock")
        x = check_input(x, "TransformerBlock", 3, "[batch, seq, dim]")
        if padding is not None:
            F.padding_array(padding, x.shape[:2])  # refused before any work
        x = x + self.dropout(self.attn(self.ln1(x), padding, causal))
        return x + self.dropout(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class DecoderLM(Module):
    """A small decoder-only language model: token + position embeddings, blocks, LM head."""

    def __init__(
        self,
        vocab: int,
        dim: int = 64,
        heads: int = 4,
        layers: int = 2,
        max_len: int = 64,
        dropout: float = 0.0,
        fused: bool = True,
        dtype: Any = None,
        device: Any = None,
    ):
        super().__init__()
        vocab = check_count(vocab, "vocab", "DecoderLM", 1)
        dim = check_count(dim, "dim", "DecoderLM", 1)
        heads = check_count(heads, "heads", "DecoderLM", 1)
        layers = check_count(layers, "layers", "DecoderLM")
        max_len = check_count(max_len, "max_len", "DecoderLM", 1)
        self.vocab, self.max_len = vocab, max_len
        # A small start (std 0.1) keeps the first attention logits tame.
        self.tokens = Embedding(vocab, dim, std=0.1, dtype=dtype, device=device)
        self.positions = Embedding(max_len, dim, std=0.1, dtype=dtype, device=device)
        self.blocks = [
            TransformerBlock(dim, heads, dropout=dropout, fused=fused, dtype=dtype, device=device)
            for _ in range(layers)
        ]
        self.ln_f = LayerNorm(dim, fused=fused, dtype=dtype, device=device)
        self.head = Linear(dim, vocab, dtype=dtype, device=device)

    def forward(self, tokens: Any, padding: np.ndarray | None = None) -> Tensor:
        """Logits ``[batch, seq, vocab]`` of integer ``tokens [batch, seq]``; ``padding`` excludes keys."""
        if isinstance(tokens, Tensor):
            tokens = tokens.numpy()
        if tokens is None or isinstance(tokens, (str, bytes, float)):
            raise TypeError(
                f"DecoderLM tokens must be integer ids shaped [batch, seq] (a numpy array or nested "
                f"lists), got {type(tokens).__name__}; e.g. numpy.array([[1, 2, 3]])"
            )
        ids = np.asarray(tokens)
        if ids.ndim != 2:
            raise ValueError(f"DecoderLM tokens must be ids shaped [batch, seq], got shape {ids.shape}")
        if ids.shape[1] > self.max_len:
            raise ValueError(f"sequence length {ids.shape[1]} exceeds max_len {self.max_len}")
        if padding is not None:
            F.padding_array(padding, ids.shape)  # refused before any work
        x = self.tokens(ids) + self.positions(np.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x, padding, causal=True)
        return self.head(self.ln_f(x))
