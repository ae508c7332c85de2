"""Save and load a model's parameters and its optimizer's state in one ``.npz`` file."""

from __future__ import annotations

import os

import numpy as np

from ..nn.module import Module
from .optimizers import Optimizer

MODEL_PREFIX = "model/"
OPTIM_PREFIX = "optim/"


def save_checkpoint(path: str | os.PathLike, model: Module, optimizer: Optimizer | None = None) -> None:
    """Write ``model`` (and ``optimizer``) state to ``path`` (a ``.npz`` file)."""
    arrays = {MODEL_PREFIX + k: v for k, v in model.state_dict().items()}
    if optimizer is not None:
        arrays.update({OPTIM_PREFIX + k: v for k, v in optimizer.state_dict().items()})
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def load_checkpoint(path: str | os.PathLike, model: Module, optimizer: Optimizer | None = None) -> None:
    """Restore ``model`` (and ``optimizer``) from a file written by ``save_checkpoint``."""
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    model.load_state_dict(
        {k[len(MODEL_PREFIX) :]: v for k, v in arrays.items() if k.startswith(MODEL_PREFIX)}
    )
    if optimizer is not None:
        optim = {k[len(OPTIM_PREFIX) :]: v for k, v in arrays.items() if k.startswith(OPTIM_PREFIX)}
        if not optim:
            raise KeyError(f"checkpoint {os.fspath(path)!r} holds no optimizer state")
        optimizer.load_state_dict(optim)
