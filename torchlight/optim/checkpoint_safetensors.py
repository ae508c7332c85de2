"""Checkpoints as safetensors files: model weights under their own names, readable by other tools.

The model's parameters are tensors named as ``Module.state_dict`` names them (the names PyTorch
uses for the same layers), so ``safetensors.numpy.load_file`` or ``safetensors.torch.load_file``
reads them, and weights saved by PyTorch under those names load here. The optimizer's buffers
are tensors named ``optim/state.I.NAME``; its type, step count and hyper-parameters are JSON in
the header's ``__metadata__``. Reads are bounded: the file's size is checked against what the
targets can hold before the header is parsed, and each tensor is read only when asked for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping

import numpy as np

from .checkpoint_archive import CheckpointError, damaged

FORMAT = "torchlight-checkpoint"
OPTIM_TENSOR_PREFIX = "optim/"
# Metadata keys (strings only, as the format requires).
FORMAT_KEY = "format"
OPTIM_KEY = "optim"


def encode(model_state: Mapping[str, np.ndarray], optim_state: Mapping[str, np.ndarray] | None) -> bytes:
    """The safetensors bytes of a model's state (and an optimizer's), as ``save_checkpoint`` writes them."""
    from safetensors.numpy import save

    tensors = {name: _writable(name, array) for name, array in model_state.items()}
    metadata = {FORMAT_KEY: FORMAT}
    if optim_state is not None:
        scalars: dict[str, object] = {}
        for key, value in optim_state.items():
            array = np.asarray(value)
            if key == "type" or key == "steps" or key.startswith("hyper."):
                scalars[key] = array.item()
            else:
                tensors[OPTIM_TENSOR_PREFIX + key] = _writable(key, array)
        metadata[OPTIM_KEY] = json.dumps(scalars)
    return save(tensors, metadata=metadata)


def _writable(name: str, array: np.ndarray) -> np.ndarray:
    if array.dtype.kind not in "biuf":
        raise TypeError(f"checkpoint entry {name!r} has dtype {array.dtype}: only numeric arrays are saved")
    return np.ascontiguousarray(array)


def read(
    name: str,
    wanted: Callable[[str], bool],
    shapes: Mapping[str, tuple[int, ...]] | None,
    max_bytes: int | None,
) -> tuple[dict[str, np.ndarray], dict[str, object] | None]:
    """The tensors ``wanted`` accepts (shape-checked against ``shapes`` before any is read) and the
    optimizer's scalars from the metadata (None when the file holds no optimizer)."""
    from safetensors import SafetensorError, safe_open

    size = os.stat(name).st_size
    if max_bytes is not None and size > max_bytes:
        raise CheckpointError(
            f"{name!r} holds {size} bytes, more than the {max_bytes} bytes the model and optimizer can "
            "hold: it is not a checkpoint of this model (or it is crafted)"
        )
    try:
        with safe_open(name, framework="numpy") as handle:
            metadata = handle.metadata() or {}
            keys = [k for k in handle.keys() if wanted(k)]
            for key in keys:
                shape = tuple(handle.get_slice(key).get_shape())
                expected = None if shapes is None else shapes.get(key)
                if expected is not None and shape != expected:
                    raise CheckpointError(
                        f"checkpoint {name!r} does not fit: entry {key!r} has shape {shape}, "
                        f"expected {expected}"
                    )
            tensors = {key: handle.get_tensor(key) for key in keys}
    except (SafetensorError, OSError, ValueError) as err:
        if isinstance(err, CheckpointError):
            raise
        raise damaged(name, err) from None
    # A file without torchlight's metadata (weights saved by another library) holds a model only.
    if metadata.get(FORMAT_KEY) != FORMAT or OPTIM_KEY not in metadata:
        return tensors, None
    try:
        scalars = json.loads(metadata[OPTIM_KEY])
    except ValueError as err:
        raise damaged(name, f"its optimizer metadata is not JSON: {err}") from None
    if not isinstance(scalars, dict):
        raise damaged(name, "its optimizer metadata is not a JSON object")
    return tensors, scalars
