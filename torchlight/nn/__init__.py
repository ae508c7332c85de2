"""Neural-network layers built from torchlight Tensors."""

from . import functional
from .layers import GELU, Dropout, Embedding, LayerNorm, Linear
from .module import Module, Parameter, StateDictError
from .transformer import DecoderLM, MultiHeadAttention, TransformerBlock

__all__ = [
    "GELU",
    "DecoderLM",
    "Dropout",
    "Embedding",
    "LayerNorm",
    "Linear",
    "Module",
    "MultiHeadAttention",
    "Parameter",
    "StateDictError",
    "TransformerBlock",
    "functional",
]
