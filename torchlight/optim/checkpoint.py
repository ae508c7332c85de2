"""Save and load a model's parameters and its optimizer's state in one ``.npz`` file.

Saving is atomic (see ``atomic_write``): a crash during a save leaves the previous checkpoint
or the new one. Loading reads and checks the whole file, the model part and the optimizer part
before it changes anything, so a refused load leaves the model and the optimizer as they were.
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from ..core.checks import check_path
from ..core.tensor_data import TensorData
from ..nn.module import Module, StateDictError
from .atomic import atomic_write
from .optimizers import Optimizer

MODEL_PREFIX = "model/"
OPTIM_PREFIX = "optim/"
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


class CheckpointError(StateDictError):
    """A checkpoint file that cannot be loaded (unreadable, damaged, or not matching); nothing was changed."""


def _check_targets(model: Any, optimizer: Any, what: str) -> None:
    if not isinstance(model, Module):
        raise TypeError(f"{what} expects a torchlight.nn.Module as model, got {type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"{what} expects a torchlight.optim.Optimizer (or None) as optimizer, "
            f"got {type(optimizer).__name__}"
        )


def save_checkpoint(path: str | os.PathLike, model: Module, optimizer: Optimizer | None = None) -> None:
    """Write ``model`` (and ``optimizer``) state to ``path`` (a ``.npz`` file), atomically."""
    check_path(path, "save_checkpoint")
    _check_targets(model, optimizer, "save_checkpoint")
    arrays = {MODEL_PREFIX + k: v for k, v in model.state_dict().items()}
    if optimizer is not None:
        arrays.update({OPTIM_PREFIX + k: v for k, v in optimizer.state_dict().items()})
    atomic_write(path, lambda handle: np.savez(handle, **arrays))


def read_checkpoint(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of a checkpoint file, fully read (CheckpointError when it is not a readable .npz)."""
    check_path(path, "read_checkpoint")
    name = os.fspath(path)
    with open(name, "rb") as handle:
        head = handle.read(6)
    if head.startswith(_NPY_MAGIC):
        raise CheckpointError(
            f"{name!r} is a single .npy array, not a checkpoint: write checkpoints with "
            f"torchlight.optim.save_checkpoint"
        )
    if not head.startswith(_ZIP_MAGICS):
        raise CheckpointError(
            f"{name!r} is not a checkpoint (.npz) file (it starts with {head!r}): write checkpoints "
            f"with torchlight.optim.save_checkpoint"
        )
    try:
        with np.load(name, allow_pickle=False) as data:
            return {key: data[key] for key in data.files}
    except ValueError as err:
        if "allow_pickle" not in str(err):
            raise _damaged(name, err) from None
        raise CheckpointError(
            f"{name!r} holds pickled Python objects (object arrays), which are never loaded: "
            f"a checkpoint holds numeric arrays only; write it with torchlight.optim.save_checkpoint"
        ) from None
    except (zipfile.BadZipFile, zlib.error, EOFError, struct.error, NotImplementedError) as err:
        raise _damaged(name, err) from None


def _damaged(name: str, err: Exception) -> CheckpointError:
    return CheckpointError(
        f"{name!r} is damaged or truncated and cannot be read ({type(err).__name__}: {err}); "
        f"load an earlier checkpoint or save again"
    )


def load_checkpoint(path: str | os.PathLike, model: Module, optimizer: Optimizer | None = None) -> None:
    """Restore ``model`` (and ``optimizer``) from ``save_checkpoint``'s file; all of it or nothing."""
    check_path(path, "load_checkpoint")
    _check_targets(model, optimizer, "load_checkpoint")
    name = os.fspath(path)
    try:
        arrays = read_checkpoint(path)
    except CheckpointError as err:
        raise CheckpointError(f"{err}; nothing was loaded") from None
    unknown = sorted(k for k in arrays if not k.startswith((MODEL_PREFIX, OPTIM_PREFIX)))
    if unknown:
        raise CheckpointError(
            f"checkpoint {name!r} holds unknown entries {unknown}: expected only "
            f"'{MODEL_PREFIX}...' and '{OPTIM_PREFIX}...' (is it a save_checkpoint file?); nothing was loaded"
        )
    model_state = {k[len(MODEL_PREFIX) :]: v for k, v in arrays.items() if k.startswith(MODEL_PREFIX)}
    optim_state = {k[len(OPTIM_PREFIX) :]: v for k, v in arrays.items() if k.startswith(OPTIM_PREFIX)}
    try:
        model_plan = model.check_state_dict(model_state)
        if optimizer is not None:
            if not optim_state:
                raise StateDictError(
                    "it holds no optimizer state: pass optimizer=None to load the model alone"
                )
            optim_plan = optimizer.check_state_dict(optim_state)
    except StateDictError as err:
        raise CheckpointError(f"checkpoint {name!r} does not fit: {err}; nothing was loaded") from err
    for param, array in model_plan:
        param._data = TensorData.from_array(array)
    if optimizer is not None:
        optimizer.steps, optimizer.hyper, optimizer.state = optim_plan
