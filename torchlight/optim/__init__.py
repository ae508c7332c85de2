"""Optimizers, gradient clipping, and checkpoints of a model with its optimizer."""

from .atomic import atomic_write, check_writable
from .checkpoint import CheckpointError, load_checkpoint, read_checkpoint, save_checkpoint
from .optimizers import SGD, Adam, AdamW, Optimizer, clip_grad_norm_

__all__ = [
    "SGD",
    "Adam",
    "AdamW",
    "CheckpointError",
    "Optimizer",
    "atomic_write",
    "check_writable",
    "clip_grad_norm_",
    "load_checkpoint",
    "read_checkpoint",
    "save_checkpoint",
]
