"""Optimizers, gradient clipping, and checkpoints of a model with its optimizer."""

from .checkpoint import load_checkpoint, save_checkpoint
from .optimizers import SGD, Adam, AdamW, Optimizer, clip_grad_norm_

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "clip_grad_norm_", "load_checkpoint", "save_checkpoint"]
