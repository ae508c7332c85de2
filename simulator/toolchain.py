"""The C++ compiler a build uses and the flags every compile takes: which compiler, which of
the optional flags it takes, what the machine's CPU allows, and NVIDIA's headers and macros.

The compiler is ``$CXX`` or the first of g++, c++, clang++ on PATH; what it is asked once (its
version, the flags it takes, the CPU's features) is kept per process, and the flags it takes in
the build cache.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from pathlib import Path

from . import compiler_probe, cuda_headers
from .build_cache import cache_dir, cache_key, cached_output
from .compiler_run import compiler_command, invoke
from .errors import SimBuildError
from .host import find_cxx

__all__ = [
    "PORTABLE_VARIABLE",
    "RUNTIME_DIR",
    "common_flags",
    "compiler",
    "compiler_id",
    "crt_build",
    "host_has_fma",
    "is_gcc",
    "nvcc_macros",
    "portable",
    "target_flags",
    "target_key",
    "toolkit_flags",
    "toolkit_include",
]

PACKAGE_DIR = Path(__file__).resolve().parent
RUNTIME_DIR = PACKAGE_DIR / "runtime"

# -fno-semantic-interposition: the build never interposes its own symbols, so g++ may inline a
# kernel into the launch's plain loop (simulator/runtime/launch.h, Packed::run_plain).
# -mtls-dialect=gnu2 (x86-64; other targets have no such flag): thread-local variables through
# TLS descriptors, so that every threadIdx read and barrier in a library loaded at run time
# costs a load instead of a __tls_get_addr call. Only for a compiler that takes it (g++ does;
# clang from release 19): an older clang in $CXX builds without it, a little slower.
# -fno-var-tracking-assignments: full debug information (line tables and inlined frames, which
# the checkers' reports name) without GCC's tracking of where each local variable lives at each
# instruction, which only a debugger reads; it takes two fifths of a memcheck compile.
# Not -g1, though it compiles a checker's translation 7-23% faster with the same instructions: it
# drops the line table's location views, and addr2line then names another line or inlined frame
# at about 1% of a racecheck translation's instructions (-gno-variable-location-views alike).
# -fno-canonical-system-headers: GCC otherwise names a system header by its resolved path when
# that is shorter, and the toolkit folder's headers are links into the wheels (cuda_headers.py):
# a header's own `#include "..."` would then find the wheel's unpatched neighbour.
# The vectorising flags (for a fast build's translated sources, vectorizing_flags): at -O2 g++
# vectorises a loop only where no scalar epilogue is needed, so a block-loop region's loop over
# blockDim.x threads, a number known at run time, stayed scalar; -fvect-cost-model=dynamic lets
# it vectorise with an epilogue (and a run-time alias check where needed), and -fpeel-loops lets
# a short constant loop inside it (a tile's `for (k = 0; k < 16; ++k)`) unroll completely, so that
# the thread loop is the innermost one. Neither changes a result: no reassociation is allowed.
_VECTORIZING_FLAGS = ("-fvect-cost-model=dynamic", "-fpeel-loops")
_OPTIONAL_FLAGS = (
    "-mtls-dialect=gnu2",
    "-fno-var-tracking-assignments",
    "-fno-canonical-system-headers",
    *_VECTORIZING_FLAGS,
)


def _machine() -> str:
    """The CPU's architecture, as ``platform.machine()`` reads it (whose module every run would import)."""
    return os.uname().machine


@cache
def _takes_flag(cxx: str, flag: str) -> bool:
    if flag.startswith("-mtls-dialect") and _machine() not in ("x86_64", "AMD64"):
        return False
    try:
        probe = invoke([cxx, flag, "-Werror", "-x", "c++", "-c", "-o", os.devnull, "-"], f"a test of {flag}")
    except SimBuildError:
        return False  # the build's own call of the compiler reports why it cannot run
    return probe.returncode == 0


@cache
def _optional_flags(cxx: str) -> tuple[str, ...]:
    """The ``_OPTIONAL_FLAGS`` that ``cxx`` takes, asked once per compiler and kept in the cache
    (two compiler runs that every build command would otherwise make)."""
    try:
        folder = cache_dir()
    except SimBuildError:  # the build itself names why the cache cannot be used
        return tuple(f for f in _OPTIONAL_FLAGS if _takes_flag(cxx, f))
    found = folder / f"compiler-flags-{cache_key(cxx, compiler_id(cxx), *_OPTIONAL_FLAGS)}.txt"

    def produce(tmp: Path) -> None:
        tmp.write_text("".join(f"{f}\n" for f in _OPTIONAL_FLAGS if _takes_flag(cxx, f)))

    cached_output(found, produce)
    return tuple(f for f in found.read_text().split() if f in _OPTIONAL_FLAGS)


PORTABLE_VARIABLE = "SIMULATOR_PORTABLE"
# What compiled device code may use of the CPU that builds it (unless SIMULATOR_PORTABLE=1): its
# instruction set (AVX2, ...) but the fused multiply-add, whose use stays what it was: device
# functions contract into FMAs under -fmad through transform.DEVICE_FMA's target attribute, host
# code never does (as nvcc's host compiler at baseline x86-64 does not). AVX-512 is left out
# too, since g++ contracts into its FMA instructions even under -mno-fma.
_NATIVE_X86 = ("-march=native", "-mno-fma", "-mno-avx512f")


def portable() -> bool:
    """Whether builds are for any CPU of the architecture (``SIMULATOR_PORTABLE=1``), not only this one."""
    raw = os.environ.get(PORTABLE_VARIABLE, "")
    if raw not in ("", "0", "1"):
        raise SimBuildError(
            f"{PORTABLE_VARIABLE}={raw[:80]!r}: set it to 1 (build for any CPU of the architecture, "
            "e.g. for an image or a library to ship) or 0 (for this machine's CPU), or unset it"
        )
    return raw == "1"


def target_flags(cxx: str) -> list[str]:
    """The flags that compile device and host code for this machine's CPU (none when
    :func:`portable`, or when the compiler cannot tell the CPU)."""
    if portable() or _native_macros(cxx) is None:
        return []
    return list(_NATIVE_X86) if _machine() in ("x86_64", "AMD64") else ["-march=native"]


def target_key(cxx: str) -> str:
    """What a cached object's key takes from :func:`target_flags`: the CPU's features as the
    compiler names them, since ``-march=native`` means another CPU on another machine (a shared
    cache folder)."""
    flags = target_flags(cxx)
    return " ".join(flags) + "\n" + (_native_macros(cxx) or "") if flags else "portable"


def common_flags(cxx: str) -> list[str]:
    """The flags of every compile and link with ``cxx``."""
    optional = [f for f in _optional_flags(cxx) if f not in _VECTORIZING_FLAGS]
    return ["-std=gnu++17", "-g", "-fPIC", "-fno-semantic-interposition", *optional, "-pthread"]


def vectorizing_flags(cxx: str) -> list[str]:
    """The flags (of ``_VECTORIZING_FLAGS``, those ``cxx`` takes) that let a fast build's loops over
    a block's threads vectorise."""
    return [f for f in _optional_flags(cxx) if f in _VECTORIZING_FLAGS]


@cache
def _native_macros(cxx: str) -> str | None:
    """The macros ``cxx -march=native`` defines (the CPU's features); None when it takes no such flag."""
    command = [cxx, "-march=native", "-dM", "-E", "-x", "c++", "/dev/null"]
    probe = compiler_probe.probe(command, "a probe of -march=native", cpu_bound=True)
    return probe.stdout if probe.returncode == 0 else None


def host_has_fma(cxx: str) -> bool:
    """Whether the machine's CPU has fused multiply-add instructions (device code contracts into them)."""
    return "#define __FMA__ 1" in (_native_macros(cxx) or "")


def compiler() -> str:
    """The C++ compiler command: ``$CXX`` when set (a command with arguments, as make takes it:
    ``CXX='g++ -w'``), else the first of g++, c++, clang++ on PATH; SimBuildError when there is none."""
    cxx = find_cxx()
    if not cxx:
        raise SimBuildError("no C++ compiler: install g++ (apt-get install g++) or set CXX to one")
    compiler_command(cxx)  # names a $CXX that cannot run, before any work
    return cxx


@cache
def _version_text(cxx: str) -> str:
    run = compiler_probe.probe([cxx, "--version"], "--version")
    if run.returncode != 0:
        raise SimBuildError(f"cannot run the C++ compiler {cxx!r}: --version exited with {run.returncode}")
    return run.stdout


# GCC's C++ driver as its --version names it: the name it was started by, of which ``c++`` and
# ``g++`` (with a target's prefix, a version's suffix) are two names of one program.
_GCC_CXX_NAME = re.compile(r"^(\S*?)[cg]\+\+(\S*) \(")


def compiler_id(cxx: str) -> str:
    """What a cached artefact's key takes from the compiler: the first line of its ``--version``.

    GCC writes there the name it was started by, so ``c++`` and ``g++``, one program, would key
    every object, runtime and header apart (CMake runs a project's nvcc with ``CXX=/usr/bin/c++``,
    the compiler it found, which built the whole runtime again): that name is written as ``g++``
    for both. A ``gcc`` (the C driver, which links differently) and every other compiler keep
    their line as it is.
    """
    text = _version_text(cxx)
    if not text:
        return cxx
    line = text.splitlines()[0]
    if is_gcc(cxx):
        line = _GCC_CXX_NAME.sub(r"\1g++\2 (", line, count=1)
    return line


def is_gcc(cxx: str) -> bool:
    """Whether ``cxx`` is GCC's g++ (whose precompiled headers the build uses), not clang."""
    text = _version_text(cxx)
    return "Free Software Foundation" in text and "clang" not in text.lower()


def toolkit_include() -> Path:
    """NVIDIA's headers as the build compiles against them (made once in the cache; cuda_headers.py)."""
    return cuda_headers.include_dir(cache_dir())


def toolkit_flags() -> list[str]:
    """The system include folders of every compile: the simulator's own headers first (those of
    NVIDIA's libraries it implements in its own way), then NVIDIA's headers and CCCL's."""
    inc = toolkit_include()
    flags = ["-isystem", str(RUNTIME_DIR / "include"), "-isystem", str(inc)]
    cccl_inc = cuda_headers.cccl_dir(inc)
    if cccl_inc is not None:
        flags += ["-isystem", str(cccl_inc)]
    # Thrust's default device system is its sequential C++ one (runtime/include/thrust/: its memory
    # is device memory to the runtime): its CUDA system compiles CUB's whole dispatch for the CPU,
    # minutes of g++ for each source. thrust::cuda::par and CUB itself still run CUB's kernels.
    return [*flags, "-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_CPP"]


def crt_build() -> int:
    """The build number of the pinned release's compiler headers (the nvidia-cuda-crt wheel's version)."""
    version = _wheel_version("nvidia_cuda_crt")
    if version is None:  # not a plain wheel install: ask importlib.metadata, which knows every layout
        from importlib import metadata

        try:
            version = metadata.version("nvidia-cuda-crt")
        except metadata.PackageNotFoundError:
            return 0
    try:
        return int(version.split(".")[2])
    except (IndexError, ValueError):
        return 0


@cache
def _wheel_version(name: str) -> str | None:
    """The ``Version:`` of the first ``NAME-*.dist-info/METADATA`` on ``sys.path`` (the one
    importlib.metadata would read), or None. Read directly: importlib.metadata's email parser is
    a tenth of a second of imports, paid by every build, cached or not."""
    for entry in sys.path:
        for info in sorted(Path(entry or ".").glob(f"{name}-*.dist-info")):
            try:
                with open(info / "METADATA", encoding="utf-8") as fh:
                    for line in fh:
                        if line.startswith("Version:"):
                            return line.split(":", 1)[1].strip()
                        if not line.strip():
                            break  # the headers end at the first empty line
            except OSError:
                continue
    return None


def nvcc_macros(arch: int) -> list[str]:
    """What nvcc defines for every pass (``__CUDA_ARCH__`` is the device pass's alone)."""
    version = cuda_headers.toolkit_version(toolkit_include())
    return [
        "-D__NVCC__",
        "-D__CUDACC__",
        f"-D__CUDACC_VER_MAJOR__={version // 1000}",
        f"-D__CUDACC_VER_MINOR__={version % 1000 // 10}",
        f"-D__CUDACC_VER_BUILD__={crt_build()}",
        f"-D__CUDA_ARCH_LIST__={arch}",
        # CUB's policies for host code are "implementation defined": the modelled device's, so that
        # a dispatch on the host and the kernels it launches agree (cub/util_arch.cuh); libcu++'s PTX
        # wrappers test it too (cuda_headers.py).
        f"-DCUB_PTX_ARCH={arch}",
    ]
