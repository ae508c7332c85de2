"""``torchlight info``: versions, usable backends and tiers, GPU and kernel libraries."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil
from collections.abc import Callable

from .build_kernels import KernelBuildError, find_nvcc, simulator_package

PACKAGES = ("numpy", "numba", "numba-cuda", "llvmlite", "nvidia-cuda-nvrtc", "nvidia-cuda-nvrtc-cu12")


def package_versions() -> dict[str, str]:
    """Installed versions of Python and the packages torchlight can use."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def _probe(build: Callable[[], object]) -> tuple[bool, str]:
    """Build a backend and run one tiny op; (usable, why not)."""
    from .backends.registry import describe_error

    try:
        backend = build()
        from . import tensor

        (tensor([1.0, 2.0], device=backend) * 2.0).sum().item()
    except Exception as err:  # a probe reports every failure instead of raising it
        return False, describe_error(err)
    return True, "ok"


def backend_status() -> dict[str, tuple[bool, str]]:
    """Which registered backends work on this machine, and why not where they do not."""
    from .backends.registry import BACKENDS

    return {name: _probe(entry.build) for name, entry in BACKENDS.items()}


def gpu_status() -> list[str]:
    """GPU name, compute capability and driver version when a GPU answers."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return ["NUMBA_ENABLE_CUDASIM=1: numba-cuda runs its simulator, no GPU is used"]
    if importlib.util.find_spec("numba_cuda") is None:
        return ['GPU not checked: numba-cuda is not installed (pip install "torchlight[cuda]")']
    try:
        from numba import cuda

        if not cuda.is_available():
            return ["no usable GPU: numba-cuda reports none (no NVIDIA driver or device)"]
        lines = []
        for device in cuda.list_devices():
            with device:
                dev = cuda.get_current_device()
                major, minor = dev.compute_capability
                name = dev.name.decode() if isinstance(dev.name, bytes) else dev.name
                lines.append(f"GPU {device.id}: {name}, compute capability {major}.{minor}")
        version = cuda.cudadrv.driver.driver.get_version()
        lines.append(f"CUDA driver API version {version[0]}.{version[1]}")
        return lines
    except Exception as err:  # report, never raise, from an info command
        return [f"no GPU information: {type(err).__name__}: {err}"]


def device_status() -> list[str]:
    """What each device name passed to ``get_backend`` means here, and why (the registry's rule)."""
    from .backends.registry import DEVICES, explain_device

    return [f"  {explain_device(device)}" for device in DEVICES]


def kernel_library_status() -> list[str]:
    """Where the CUDA C kernel libraries were found and whether they load."""
    try:
        from .backends.cuda_c import loader as cuda_c_loader

        directory = cuda_c_loader.find_kernel_dir()
    except Exception as err:
        return [f"kernel libraries: {type(err).__name__}: {err}"]
    if directory is None:
        return [
            f"kernel libraries: none in {cuda_c_loader.DEFAULT_KERNEL_DIR}; build them with "
            "`python -m torchlight build-kernels` (nvcc) or "
            "`python -m torchlight build-kernels --simulator` (CPU)"
        ]
    lines = [f"kernel libraries: {directory}"]
    try:
        cuda_c_loader.load_kernels(directory)
        lines.append("  they load and export the expected launchers")
    except Exception as err:
        lines.append(f"  they do not load: {type(err).__name__}: {err}")
    return lines


def _host():
    """The simulator's ``host`` module: the one CPU count and C++ compiler lookup of the repository.

    Reached through ``simulator_package`` because a source checkout has no ``torchlight/simulator``
    folder (the wheel maps the repository's ``simulator/`` there).
    """
    simulator_package()
    return importlib.import_module("torchlight.simulator.host")


def report() -> str:
    """The whole info text."""
    lines = ["torchlight " + __import__("torchlight").__version__, ""]
    lines += [f"{name:24s} {version}" for name, version in package_versions().items()]
    lines += ["", f"{'platform':24s} {platform.platform()}", f"{'cpus':24s} {_host().cpu_count()}"]
    lines += ["", "backends:"]
    for name, (ok, why) in backend_status().items():
        lines.append(f"  {name:8s} {'usable' if ok else 'unavailable'}" + ("" if ok else f"  ({why})"))
    lines += ["", "devices (get_backend(name) -> backend: why):", *device_status()]
    lines += ["", "tiers:"]
    try:
        nvcc = find_nvcc()[0]
    except KernelBuildError as err:  # NVCC names something that is not there
        nvcc = err
    lines.append(f"  nvcc     {nvcc or 'not found (kernels tier and nvcc kernel build unavailable)'}")
    lines.append(f"  ptxas    {shutil.which('ptxas') or 'not on PATH'}")
    no_cxx = "none (g++, c++ or clang++ on PATH, or $CXX): simulator unavailable"
    lines.append(f"  c++      {_host().find_cxx() or no_cxx}")
    lines += ["", *gpu_status(), "", *kernel_library_status()]
    return "\n".join(lines)


DESCRIPTION = (
    "Print the installed versions, which backends and tiers work here, the GPU and kernel libraries."
)
