"""Save and load a model's parameters and its optimizer's state in one file.

The file is safetensors (``checkpoint_safetensors``); a path ending in ``.npz`` gets the
earlier format, a zip of ``.npy`` arrays, and either loads whatever its name. Saving is atomic
(see ``atomic_write``) and never pickles: a crash during a save leaves the previous checkpoint
or the new one. Loading is bounded and all-or-nothing: the file's size (safetensors) or zip
directory and npy headers (.npz) are checked against the model and optimizer (names, shapes,
total size) before any array is read, then every array is read and checked, and only then is
anything changed, so a refused load leaves the model and the optimizer as they were.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..core.checks import check_path
from ..core.tensor_data import TensorData
from ..nn.module import Module, StateDictError
from . import checkpoint_safetensors
from .atomic import atomic_write
from .checkpoint_archive import (
    _NPY_MAGIC,
    _ZIP_MAGICS,
    CheckpointArchive,
    CheckpointError,
    open_regular,
    write_archive,
)
from .optimizers import Optimizer

MODEL_PREFIX = "model/"
OPTIM_PREFIX = "optim/"
# Per element, the widest numeric type (complex128): the most bytes any entry a target can
# hold needs per element, whatever dtype it was saved in.
ITEM_BYTES = 16
# Per entry, room for its npy header and a small scalar (the optimizer's type name).
ENTRY_BYTES = 4096

__all__ = ["CheckpointError", "load_checkpoint", "read_checkpoint", "save_checkpoint"]


def _check_targets(model: Any, optimizer: Any, what: str) -> None:
    if not isinstance(model, Module):
        raise TypeError(f"{what} expects a torchlight.nn.Module as model, got {type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"{what} expects a torchlight.optim.Optimizer (or None) as optimizer, "
            f"got {type(optimizer).__name__}"
        )


def save_checkpoint(path: str | os.PathLike, model: Module, optimizer: Optimizer | None = None) -> None:
    """Write ``model`` (and ``optimizer``) state to ``path`` atomically: safetensors, or the
    earlier ``.npz`` format when the name ends in ``.npz``."""
    check_path(path, "save_checkpoint")
    _check_targets(model, optimizer, "save_checkpoint")
    model_state = model.state_dict()
    optim_state = None if optimizer is None else optimizer.state_dict()
    if os.fspath(path).endswith(".npz"):
        arrays = {MODEL_PREFIX + k: v for k, v in model_state.items()}
        arrays.update({OPTIM_PREFIX + k: v for k, v in (optim_state or {}).items()})
        atomic_write(path, lambda handle: write_archive(handle, arrays))
        return
    data = checkpoint_safetensors.encode(model_state, optim_state)  # before the old file is touched
    atomic_write(path, lambda handle: handle.write(data))


def _is_npz(name: str) -> bool:
    """Whether a checkpoint file is the earlier zip format (else safetensors); refuses special
    files and a file that is neither."""
    with open_regular(name) as handle:
        head = handle.read(9)
    if head.startswith((*_ZIP_MAGICS, _NPY_MAGIC)):
        return True
    # safetensors: an 8-byte little-endian header length, then the JSON header.
    if len(head) == 9 and head[8:] == b"{":
        return False
    raise CheckpointError(
        f"{name!r} is not a checkpoint (.safetensors or .npz) file (it starts with {head[:6]!r}): "
        "write checkpoints with torchlight.optim.save_checkpoint"
    )


def _flat(tensors: dict[str, np.ndarray], scalars: dict[str, object] | None) -> dict[str, np.ndarray]:
    """A safetensors checkpoint's contents under the keys of the .npz format (``model/``, ``optim/``)."""
    prefix = checkpoint_safetensors.OPTIM_TENSOR_PREFIX
    arrays = {
        (OPTIM_PREFIX + k[len(prefix) :] if k.startswith(prefix) else MODEL_PREFIX + k): v
        for k, v in tensors.items()
    }
    for key, value in (scalars or {}).items():
        arrays[OPTIM_PREFIX + str(key)] = _scalar(value)
    return arrays


def _scalar(value: object) -> np.ndarray:
    """A metadata scalar as the array the optimizer's checks take (they judge its type and range)."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return np.asarray(float(value))  # refused by the step check, named with its value
    return np.asarray(value)


def read_checkpoint(path: str | os.PathLike, max_bytes: int | None = None) -> dict[str, np.ndarray]:
    """Every array of a checkpoint file, keyed ``model/NAME`` and ``optim/NAME`` (CheckpointError
    when it is not a readable checkpoint).

    ``max_bytes`` caps the size of the arrays (the file's, for safetensors), checked before any
    array is read (``load_checkpoint`` derives it from the model and optimizer).
    """
    check_path(path, "read_checkpoint")
    name = os.fspath(path)
    if not _is_npz(name):
        return _flat(*checkpoint_safetensors.read(name, lambda key: True, None, max_bytes))
    with CheckpointArchive(path) as archive:
        keys = list(archive.members)
        _check_size(archive, keys, max_bytes, "max_bytes allows")
        for key in keys:
            archive.header(key)
        return {key: archive.read(key) for key in keys}


def _check_size(archive: CheckpointArchive, keys: list[str], limit: int | None, what: str) -> None:
    declared = sum(archive.declared_size(key) for key in keys)
    if limit is not None and declared > limit:
        raise CheckpointError(
            f"{archive.name!r} declares {declared} bytes of arrays, more than the {limit} bytes {what}"
        )


def _expected_shapes(model: Module, optimizer: Optimizer | None) -> dict[str, tuple[int, ...]]:
    """The archive key and shape of every entry ``model`` (and ``optimizer``) can take."""
    shapes = {MODEL_PREFIX + name: tuple(p.shape) for name, p in model.named_parameters()}
    if optimizer is not None:
        scalars = ["type", "steps", *(f"hyper.{k}" for k in optimizer.hyper)]
        shapes.update({OPTIM_PREFIX + k: () for k in scalars})
        for i, p in enumerate(optimizer.params):
            shapes.update({f"{OPTIM_PREFIX}state.{i}.{b}": tuple(p.shape) for b in optimizer.STATE})
    return shapes


def _capacity(shapes: dict[str, tuple[int, ...]]) -> int:
    """The most bytes a checkpoint of these entries can declare (widest dtype, plus headers)."""
    return sum(math.prod(shape) * ITEM_BYTES + ENTRY_BYTES for shape in shapes.values())


def _read_for(name: str, model: Module, optimizer: Optimizer | None) -> dict[str, np.ndarray]:
    """The arrays ``load_checkpoint`` needs, checked from the file's size, directory and headers first."""
    if not _is_npz(name):
        return _read_safetensors_for(name, model, optimizer)
    with CheckpointArchive(name) as archive:
        keys = list(archive.members)
        unknown = sorted(k for k in keys if not k.startswith((MODEL_PREFIX, OPTIM_PREFIX)))
        if unknown:
            raise CheckpointError(
                f"checkpoint {name!r} holds unknown entries {unknown}: expected only "
                f"'{MODEL_PREFIX}...' and '{OPTIM_PREFIX}...' (is it a save_checkpoint file?)"
            )
        # Without an optimizer its entries are never decompressed.
        wanted = [k for k in keys if k.startswith(MODEL_PREFIX) or optimizer is not None]
        shapes = _expected_shapes(model, optimizer)
        _check_size(
            archive,
            wanted,
            _capacity(shapes),
            "the model and optimizer can hold: it is not a checkpoint of this model (or it is crafted)",
        )
        for key in wanted:
            shape, _ = archive.header(key)
            expected = shapes.get(key)
            if expected is not None and shape != expected:
                raise CheckpointError(
                    f"checkpoint {name!r} does not fit: entry {key!r} has shape {shape}, expected {expected}"
                )
        return {key: archive.read(key) for key in wanted}


def _read_safetensors_for(name: str, model: Module, optimizer: Optimizer | None) -> dict[str, np.ndarray]:
    shapes = _expected_shapes(model, optimizer)
    prefix = checkpoint_safetensors.OPTIM_TENSOR_PREFIX
    tensor_shapes = {
        (k[len(MODEL_PREFIX) :] if k.startswith(MODEL_PREFIX) else prefix + k[len(OPTIM_PREFIX) :]): v
        for k, v in shapes.items()
    }
    # Without an optimizer its tensors are never read.
    tensors, scalars = checkpoint_safetensors.read(
        name,
        lambda key: optimizer is not None or not key.startswith(prefix),
        tensor_shapes,
        _capacity(shapes),
    )
    return _flat(tensors, scalars if optimizer is not None else None)


def load_checkpoint(path: str | os.PathLike, model: Module, optimizer: Optimizer | None = None) -> None:
    """Restore ``model`` (and ``optimizer``) from ``save_checkpoint``'s file; all of it or nothing."""
    check_path(path, "load_checkpoint")
    _check_targets(model, optimizer, "load_checkpoint")
    name = os.fspath(path)
    try:
        arrays = _read_for(name, model, optimizer)
    except CheckpointError as err:
        raise CheckpointError(f"{err}; nothing was loaded") from None
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
