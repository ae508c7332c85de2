"""How a program that includes Thrust is built: where NVIDIA's CCCL headers are, the flags, and
what of Thrust the simulator refuses.

Thrust is header-only and ships in CCCL. A program that includes a ``<thrust/...>`` header is
built with CCCL's folder on the include path, after the simulator's own headers, and with
Thrust's sequential C++ system as the device system (simulator/docs/supported.md, "Thrust").
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from functools import cache
from pathlib import Path

from .errors import SimBuildError

__all__ = [
    "CCCL_ENV",
    "CUDA_ONLY",
    "CUDA_ONLY_NAMES",
    "INSTALL_HINT",
    "cccl_flags",
    "compile_flags",
    "find_cccl",
    "refuse_cuda_only_headers",
]

CCCL_ENV = "SIMULATOR_CCCL"
INSTALL_HINT = (
    "Thrust ships in NVIDIA's CCCL headers, which were not found: pip install "
    '"torchlight[simulator]" (or pip install nvidia-cuda-cccl), install the CUDA toolkit (found '
    f"through CUDA_HOME, nvcc on PATH or /usr/local/cuda), or set {CCCL_ENV} to CCCL's include folder"
)
# Folders inside a Python environment's site-packages where NVIDIA's CCCL wheels put the headers.
_WHEEL_FOLDERS = ("nvidia/cu13/include/cccl", "nvidia/cu12/include/cccl", "nvidia/cuda_cccl/include")
# The file every supported CCCL has (CCCL 2.x/3.x: Thrust 2+, with its configuration header).
_MARKER = Path("cuda/std/__cccl/compiler.h")


def _is_cccl(folder: Path) -> bool:
    return (folder / "thrust" / "version.h").is_file() and (folder / _MARKER).is_file()


def _candidates() -> list[Path]:
    """Where CCCL may be, in order: this Python's wheels, CUDA_HOME/CUDA_PATH, nvcc's, /usr/local/cuda."""
    found = [Path(p) / w for p in sys.path if p for w in _WHEEL_FOLDERS]
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        homes.append(str(Path(nvcc).resolve().parent.parent))
    homes.append("/usr/local/cuda")
    found += [Path(h) / "include" / "cccl" for h in homes if h]
    return found


@cache
def _search() -> Path | None:
    return next((c.absolute() for c in _candidates() if _is_cccl(c)), None)


def find_cccl() -> Path | None:
    """CCCL's include folder (the one holding ``thrust/`` and ``cuda/std/``), or None when absent.

    ``$SIMULATOR_CCCL`` overrides the search: a folder (refused when it holds no CCCL), or ``0``
    for none (the build then refuses Thrust, as where CCCL is not installed).
    """
    given = os.environ.get(CCCL_ENV, "")
    if given == "0":
        return None
    if given:
        folder = Path(given)
        if not _is_cccl(folder):
            raise SimBuildError(
                f"{CCCL_ENV}={given!r} holds no CCCL headers (thrust/version.h and {_MARKER}): give "
                "CCCL's include folder (such as $CUDA_HOME/include/cccl), 0 for none, or leave it unset"
            )
        return folder.absolute()
    return _search()


def cccl_flags() -> list[str]:
    """The preprocessor flags for a program that includes Thrust, or SimBuildError saying how to get CCCL."""
    folder = find_cccl()
    if folder is None:
        raise SimBuildError(INSTALL_HINT)
    return [
        # After every -I folder, so the simulator's stand-ins come first (-isystem: CCCL's own
        # warnings stay quiet, and the front end treats it as a library, never as the program).
        "-isystem",
        str(folder),
        "-DSIM_WITH_CCCL",
        # Thrust's device algorithms run on the host, sequentially (no CUDA back end on a CPU).
        "-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP",
        "-DTHRUST_HOST_SYSTEM=THRUST_HOST_SYSTEM_CPP",
    ]


# Names a Thrust program may use that the simulator's Thrust (its sequential host back end) lacks.
CUDA_ONLY_NAMES = re.compile(r"thrust::(?:system::)?cuda\b.*|thrust::cuda_cub\b.*|cub\b.*")
CUDA_ONLY = (
    "Thrust's CUDA back end (thrust::cuda::par, thrust::cuda::...) and CUB's device-wide calls are not "
    "provided: the simulator runs Thrust with its sequential host back end; use thrust::device (or no "
    "execution policy) for Thrust's algorithms"
)
# Line markers entering a CUB or Thrust CUDA-system header: Thrust's host back end includes
# neither, so the program does.
_CUDA_ONLY_HEADER = re.compile(r'(?m)^# 1 "[^"]*/((?:cub|thrust/system/cuda)/[^"]+)" 1')
# A line marker of Thrust's configuration header: the source includes Thrust.
_THRUST_INCLUDED = re.compile(r'(?m)^# \d+ "[^"]*/thrust/detail/config\.h"')


def refuse_cuda_only_headers(text: str, source: str) -> None:
    """A SimBuildError naming the include when the preprocessed ``text`` has CUB or Thrust's CUDA system."""
    m = _CUDA_ONLY_HEADER.search(text)
    if m:
        header = m.group(1)
        raise SimBuildError(f"{_include_site(source, header)}<{header}>: {CUDA_ONLY}")


def _include_site(source: str, header: str) -> str:
    """``source:LINE: `` where ``source`` includes ``header`` itself, else ``source: ``."""
    try:
        lines = Path(source).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return f"{source}: "
    for n, line in enumerate(lines, 1):
        if re.match(r"\s*#\s*include\s*[<\"]" + re.escape(header), line):
            return f"{source}:{n}: "
    return f"{source}: "


def compile_flags(mode: str, pre: str) -> list[str]:
    """Compiler flags for a source whose preprocessed text ``pre`` includes Thrust (else none).

    memcheck: no UBSan null checks. Thrust reaches its empty system tags through null pointers
    (thrust/detail/reference.h, select_system.inl), by design, on every element access from
    host code: the failed checks made memcheck runs of Thrust programs hundreds of times slower
    than fast ones (segmentationTreeThrust: 253 s against 1 s). Null dereferences are still
    AddressSanitizer's reports.
    """
    if mode == "memcheck" and _THRUST_INCLUDED.search(pre):
        return ["-fno-sanitize=null"]
    return []
