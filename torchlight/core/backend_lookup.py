"""How core turns a device hint into a backend, without importing the backends.

core/ is the bottom layer: ``backends/`` builds on its TensorData and Device, so core cannot
import ``get_backend`` without an import circle. The package init installs the registry's
``get_backend`` here instead (``install``), and core's Tensor and creation functions call
``backend_for``, which calls it directly: the registry's table answers in one lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _not_installed(device: Any) -> Any:
    raise RuntimeError(
        "no backend lookup is installed: import torchlight (its __init__ installs get_backend) "
        "before creating tensors"
    )


_lookup: Callable[[Any], Any] = _not_installed


def install(lookup: Callable[[Any], Any]) -> None:
    """Make ``lookup`` (``torchlight.backends.get_backend``) the one device-to-backend resolver."""
    global _lookup
    _lookup = lookup


def backend_for(device: Any) -> Any:
    """The backend for a device hint (None, a string, a Device or a backend) via the installed lookup."""
    return _lookup(device)
