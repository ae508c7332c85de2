"""NVIDIA's CUDA headers, as the simulator compiles every program against them.

Declarations, enum values, error codes, typedefs, macros and include guards all come from the
headers of the pinned CUDA release, installed as pip wheels (``nvidia-cuda-runtime``,
``nvidia-cuda-crt``, ``nvidia-cuda-cccl``, ``nvidia-curand`` and, for cuBLAS programs,
``nvidia-cublas``): they all unpack into one ``nvidia/cu13/include`` folder of site-packages.

The build compiles against a copy of that folder made once per release in the build cache
(:func:`include_dir`): a tree of symbolic links to NVIDIA's files (so their own ``#include
"..."`` of a sibling finds the sibling here too), except for the few headers that cannot be used
by a host compiler as they are. Those are generated from NVIDIA's text by the rules in
``_PATCHES``, each a mechanical rewrite that keeps every declaration:

* the device intrinsics' headers give each intrinsic an empty body ``{ }`` in the host pass
  (``__DEF_IF_HOST``), which nvcc's own front end throws away; here they become plain
  declarations with external linkage, defined by the simulator's runtime
  (``runtime/sim_intrinsics.h``), or by a generated stub that fails at run time with one line
  where the runtime has no implementation;
* a header's own declaration of a built-in variable for host compilers (``extern const uint3
  threadIdx;``) becomes thread-local, as every declaration of them is here (each OS thread runs
  one CUDA thread at a time, and the built-ins are its values);
* ``<crt/math_functions.h>``'s device-only redeclarations of the C++ library's functions inside
  ``namespace std`` become blank lines, as nvcc's host compilation never sees them;
* libcu++'s generated PTX wrappers (``cuda/__ptx/instructions/generated/``), which test
  ``__CUDA_ARCH__ >= N`` and else call a function that is defined nowhere (a link error naming the
  architecture), test the modelled device's architecture too: CCCL's device code is compiled in
  the host pass here, where ``__CUDA_ARCH__`` is not defined, and runs as device code.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
from functools import cache
from pathlib import Path

from .errors import SimBuildError

__all__ = [
    "CUDA_MAJOR",
    "INSTALL_HINT",
    "TOOLKIT_ENV",
    "cccl_dir",
    "include_dir",
    "is_toolkit_header",
    "nvidia_include",
    "toolkit_version",
]

CUDA_MAJOR = 13
TOOLKIT_ENV = "SIMULATOR_CUDA_INCLUDE"
INSTALL_HINT = (
    f"the simulator compiles against NVIDIA's CUDA {CUDA_MAJOR} headers, which were not found: "
    'pip install "torchlight[simulator]" (the nvidia-cuda-runtime, nvidia-cuda-crt and '
    f"nvidia-cuda-cccl wheels), or set {TOOLKIT_ENV} to a CUDA {CUDA_MAJOR} include folder"
)
# Where NVIDIA's CUDA 13 wheels put their headers inside site-packages.
_WHEEL_FOLDER = Path("nvidia") / f"cu{CUDA_MAJOR}" / "include"
# The patterns in this module are text: re compiles each on first use and caches it, so a process that
# never copies the headers compiles none of them.
_VERSION = r"#define\s+CUDART_VERSION\s+(\d+)"
# Bumped when a rule below changes, so that every cached copy is made again.
_RULES_VERSION = "4"

# The headers whose device intrinsics carry the host pass's empty bodies, and the rewrite that
# makes them declarations with external linkage (the storage of the "static __inline__" variant
# of each header's *_DECL__ macro goes; its RTC variant already reads so).
_DEF_IF_HOST = r"(?m)^(\s*#\s*define\s+__DEF_IF_HOST\s+)\{\s*\}"
_STATIC_DECL = (
    r"(?m)^(\s*#\s*define\s+__\w+_DECL__\s+)"
    r"(?:static\s+__device__\s+__inline__|static\s+__inline__\s+__device__)"
)


def _declarations_only(text: str) -> str:
    text = re.sub(_DEF_IF_HOST, r"\1;", text)
    return re.sub(_STATIC_DECL, r"\1__device__", text)


# A header's own declaration of a built-in variable for host compilers (cuRAND's MTGP32 kernels
# declare blockDim and threadIdx so): thread-local, as cuda_sim.h makes every declaration of them.
_BUILTIN_REDECLARATION = (
    r"(?m)^(\s*extern)(\s+const\s+(?:uint3|dim3)\s+(?:threadIdx|blockIdx|blockDim|gridDim)\s*;)"
)


# <crt/math_functions.h> redeclares C++ library functions inside namespace std for device code
# (std::abs(float), std::pow(float, float), ...). nvcc's host compilation never sees them; g++
# would take them for redeclarations of its own constexpr ones and stop. Between the two markers
# of that block, each such declaration becomes blank lines (the line numbers stay); device code
# calls the host's functions, which are what runs here.
_STD_BLOCK = (
    r"(?s)(#elif defined\(__GNUC__\) && !defined\(_STLPORT_VERSION\)\nnamespace std \{\n)(.*?)"
    r"(#elif defined\(__GNUC__\) && !defined\(_STLPORT_VERSION\)\n\}\n)"
)
_STD_DEVICE_DECL = (
    r"(?m)^(?:template\s*<[^;{}]*>\s*\n)?extern __DEVICE_FUNCTIONS_DECL__ __cudart_builtin__[^;{}]*;"
)


def _without_std_device_declarations(text: str) -> str:
    def blank(m: re.Match) -> str:
        return "\n" * m.group(0).count("\n")

    def strip(m: re.Match) -> str:
        return m.group(1) + re.sub(_STD_DEVICE_DECL, blank, m.group(2)) + m.group(3)

    return re.sub(_STD_BLOCK, strip, text)


# The architecture test of a generated PTX wrapper, and the same test that also holds when the
# modelled device (CUB_PTX_ARCH, which toolchain.nvcc_macros defines for every pass) is that recent.
_PTX_ARCH_TEST = r"(?m)^(#\s*if _CCCL_CUDA_COMPILER\(NVHPC\) \|\| )__CUDA_ARCH__ >= (\d+)$"
_PTX_WRAPPERS = Path("cccl", "cuda", "__ptx", "instructions", "generated")


def _ptx_wrappers_for_modelled_arch(text: str) -> str | None:
    """A generated PTX wrapper header whose ``__CUDA_ARCH__`` tests also take the modelled device's
    architecture, or None when it has none."""
    modelled = r"\1__CUDA_ARCH__ >= \2 || (!defined(__CUDA_ARCH__) && CUB_PTX_ARCH >= \2)"
    patched = re.sub(_PTX_ARCH_TEST, modelled, text)
    return patched if patched != text else None


def _patch(text: str) -> str | None:
    """The rewritten text of a header that needs one, else None (the header is linked as it is)."""
    patched = text
    if re.search(_DEF_IF_HOST, patched):
        patched = _declarations_only(patched)
    patched = re.sub(_BUILTIN_REDECLARATION, r"\1 __thread\2", patched)
    if "__DEVICE_FUNCTIONS_DECL__ __cudart_builtin__" in patched:
        patched = _without_std_device_declarations(patched)
    return patched if patched != text else None


def nvidia_include() -> Path:
    """NVIDIA's include folder: ``$SIMULATOR_CUDA_INCLUDE``, else the CUDA 13 wheels' folder on sys.path."""
    given = os.environ.get(TOOLKIT_ENV, "")
    if given:
        folder = Path(given)
        if not (folder / "cuda_runtime_api.h").is_file():
            raise SimBuildError(
                f"{TOOLKIT_ENV}={given!r} holds no cuda_runtime_api.h: give a CUDA {CUDA_MAJOR} include "
                "folder (such as $CUDA_HOME/include) or leave it unset"
            )
        _check_version(folder)
        return folder.absolute()
    return _search()


@cache
def _search() -> Path:
    for entry in sys.path:
        if entry and (Path(entry) / _WHEEL_FOLDER / "cuda_runtime_api.h").is_file():
            folder = (Path(entry) / _WHEEL_FOLDER).absolute()
            _check_version(folder)
            return folder
    raise SimBuildError(INSTALL_HINT)


def toolkit_version(folder: Path) -> int:
    """``CUDART_VERSION`` of the headers in ``folder`` (13000 for CUDA 13.0)."""
    m = re.search(_VERSION, (folder / "cuda_runtime_api.h").read_text(encoding="latin-1"))
    if not m:
        raise SimBuildError(f"{folder}/cuda_runtime_api.h does not define CUDART_VERSION: not CUDA's header")
    return int(m.group(1))


def _check_version(folder: Path) -> None:
    version = toolkit_version(folder)
    if version // 1000 != CUDA_MAJOR:
        raise SimBuildError(
            f"{folder} holds CUDA {version // 1000}.{version % 1000 // 10}'s headers; the simulator "
            f"implements CUDA {CUDA_MAJOR}'s runtime: {INSTALL_HINT.split(': ', 1)[1]}"
        )


def cccl_dir(folder: Path | None = None) -> Path | None:
    """CCCL's include folder (Thrust, CUB, libcu++) beside NVIDIA's headers, or None."""
    base = folder or nvidia_include()
    cccl = base / "cccl"
    return cccl if (cccl / "cub" / "cub.cuh").is_file() else None


def _copied(rel: Path) -> tuple[str, ...]:
    """The endings of the files of the folder ``rel`` that the mirror may hold a rewritten copy of
    (none: it links them all)."""
    if "cccl" not in rel.parts[:1]:
        return (".h", ".hpp")
    return (".h",) if rel == _PTX_WRAPPERS else ()


@cache
def _fingerprint(folder: Path) -> str:
    """A key for ``folder``'s headers: every folder's path and modification time (which a file
    added, removed or renamed changes), the path, size and modification time of every file the
    mirror may copy, and the rules. A linked file needs no more: the build reads it through the link."""
    # Most of the files are CCCL's, all linked: a stat of each would be most of a cached run's work.
    h = hashlib.sha256(f"{folder}\0{_RULES_VERSION}\0".encode())
    h.update(Path(__file__).read_bytes())
    rows = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        rows.append(f"{root}/\0{os.stat(root).st_mtime_ns}\n")
        copied = _copied(Path(root).relative_to(folder))
        for name in sorted(files):
            if copied and name.endswith(copied):
                st = os.stat(os.path.join(root, name))
                rows.append(f"{os.path.join(root, name)}\0{st.st_size}\0{st.st_mtime_ns}\n")
    h.update("".join(rows).encode())
    return h.hexdigest()[:16]


def _mirror(source: Path, dest: Path) -> None:
    """Fill ``dest`` with links to every file under ``source``, and the rewritten headers."""
    for root, dirs, files in os.walk(source):
        rel = Path(root).relative_to(source)
        (dest / rel).mkdir(parents=True, exist_ok=True)
        dirs.sort()
        for name in files:
            original = Path(root) / name
            target = dest / rel / name
            patched = None
            if name.endswith(_copied(rel)):
                text = original.read_text(encoding="latin-1")
                patched = _ptx_wrappers_for_modelled_arch(text) if rel == _PTX_WRAPPERS else _patch(text)
            if patched is None:
                os.symlink(original, target)
            else:
                target.write_text(patched, encoding="latin-1")


_INCLUDE_PREFIX = f"cuda{CUDA_MAJOR}-include-"


def is_toolkit_header(path: str) -> bool:
    """True for a header of the include folder :func:`include_dir` makes (NVIDIA's or CCCL's)."""
    return f"/{_INCLUDE_PREFIX}" in path


def include_dir(cache_root: Path) -> Path:
    """The include folder programs are compiled against (made once in ``cache_root``)."""
    source = nvidia_include()
    key = _fingerprint(source)
    dest = cache_root / f"{_INCLUDE_PREFIX}{key}"
    if dest.is_dir():
        return dest
    cache_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", dir=cache_root))
    try:
        _mirror(source, tmp)
        try:
            os.rename(tmp, dest)
        except OSError:
            if not dest.is_dir():  # another builder won the race: its copy is the same
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest
