"""The one backend registry: each backend's name, how to build it, and why it cannot be built here.

Everything that lists backends reads ``BACKENDS``: ``get_backend`` (through each entry's
``device``), the test fixture (``TORCHLIGHT_TEST_BACKENDS`` names), ``python -m torchlight info``
and the matrix report's column order. Adding a backend is adding one ``BackendEntry`` below.

Builders import their modules on call, so importing this module never imports numba, and
the module imports only the standard library: ``ci/matrix_report.py`` loads this file alone,
without torchlight or numpy installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Backend


@dataclass(frozen=True)
class BackendEntry:
    """One backend: its registry name, what it is, and how to build it."""

    name: str
    summary: str
    build: Callable[[], Backend]  # the instance a test matrix column runs
    packages: tuple[str, ...] = ()  # import names it needs; `install` says how to get them
    install: str = ""
    device: str | None = None  # get_backend(<device>) resolves to this entry's device_backend
    device_backend: Callable[[], Backend] | None = None  # cached instance for get_backend

    def missing_packages(self) -> str | None:
        """None when every package the backend needs is importable, else which are not and the fix."""
        missing = [name for name in self.packages if not _importable(name)]
        if not missing:
            return None
        return f"{', '.join(missing)} not installed ({self.install})"

    def unavailable_reason(self) -> str | None:
        """None when the backend builds on this machine, else the first line of why not."""
        try:
            self.build()
        except Exception as err:  # any failure to build is the answer, not an error here
            return describe_error(err)
        return None


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a module blocked as None in sys.modules, or a broken one
        return False


def describe_error(err: BaseException) -> str:
    """``"<Type>: <first line of the message>"`` of an exception."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


def _cpu() -> Backend:
    from .cpu import cpu_backend

    return cpu_backend()


def _numba() -> Backend:
    from .numba_twin import numba_backend

    return numba_backend()


def _cuda() -> Backend:
    from .cuda_backend import CudaBackend
    from .cuda_provider import CudaProvider

    return CudaBackend(provider=CudaProvider())


def _cuda_device() -> Backend:
    from .cuda_backend import cuda_backend

    return cuda_backend()


def _cuda_c() -> Backend:
    from .cuda_backend import CudaBackend
    from .cuda_c import CudaCKernelProvider

    return CudaBackend(provider=CudaCKernelProvider())


BACKENDS: dict[str, BackendEntry] = {
    entry.name: entry
    for entry in (
        BackendEntry("cpu", "numpy reference (CPUBackend)", _cpu, device="cpu", device_backend=_cpu),
        BackendEntry(
            "numba",
            "numba CPU twin of the CUDA kernels (NumbaBackend)",
            _numba,
            packages=("numba",),
            install='pip install "torchlight[numba]"',
        ),
        BackendEntry(
            "cuda",
            "numba-cuda kernels on a GPU or its simulator (CudaBackend + CudaProvider)",
            _cuda,
            packages=("numba", "numba_cuda"),
            install='pip install "torchlight[cuda]"',
            device="cuda",
            device_backend=_cuda_device,
        ),
        BackendEntry(
            "cuda-c",
            "CUDA C fused kernels via ctypes, the rest numba-cuda (CudaBackend + CudaCKernelProvider)",
            _cuda_c,
            packages=("numba", "numba_cuda"),
            install='pip install "torchlight[cuda]", then build the kernel libraries',
        ),
    )
}


def backend_names() -> list[str]:
    """Every registered backend name, in registry (and report) order."""
    return list(BACKENDS)


def device_entry(device_type: str) -> BackendEntry:
    """The entry ``get_backend`` uses for a device type ("cpu", "cuda")."""
    for entry in BACKENDS.values():
        if entry.device == device_type and entry.device_backend is not None:
            return entry
    raise ValueError(f"no backend is registered for device type {device_type!r}")
