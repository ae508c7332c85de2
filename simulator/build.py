"""Compile CUDA sources with g++ into shared objects or check executables.

A ``.cu`` source is preprocessed by g++ (``-DSIM_FRONTEND``, the runtime header force-included,
line markers kept), parsed and rewritten by the front end (``transform.py``), and the rewritten
preprocessed text is compiled by g++ as ``c++-cpp-output``. Every artefact is cached by a hash of
its inputs (preprocessed text, runtime sources, flags, ``__CUDA_ARCH__``, compiler version) under
``build/simulator-cache`` (or ``$SIMULATOR_CACHE``): a hit costs one ``g++ -E`` and no parse.
"""

from __future__ import annotations

import contextvars
import hashlib
import os
import platform
import re
import secrets
import shutil
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from . import cccl, cuda_headers, link_stubs, pch, toolkit_index
from .build_cache import cache_dir, cached_output, recorded_digest, write_new
from .compiler_run import compiler_command, invoke
from .modes import BUILD_MODES, BUILD_NAMED, MODES
from .progress import Progress
from .transform import SimBuildError, clang_module, translate_preprocessed

__all__ = [
    "MODES",
    "PORTABLE_VARIABLE",
    "SimBuildError",
    "build_executable",
    "build_program",
    "build_shared",
    "cache_dir",
    "translate_source",
    "compiler",
    "portable",
    "target_flags",
]

PACKAGE_DIR = Path(__file__).resolve().parent
RUNTIME_DIR = PACKAGE_DIR / "runtime"
REPO_ROOT = PACKAGE_DIR.parent

DEFAULT_ARCH = 800  # __CUDA_ARCH__ of the modelled sm_80 device

# -fno-semantic-interposition: the build never interposes its own symbols, so g++ may inline a
# kernel into the launch's plain loop (simulator/runtime/launch.h, Packed::run_plain).
# -mtls-dialect=gnu2 (x86-64; other targets have no such flag): thread-local variables through
# TLS descriptors, so that every threadIdx read and barrier in a library loaded at run time
# costs a load instead of a __tls_get_addr call. Only for a compiler that takes it (g++ does;
# clang from release 19): an older clang in $CXX builds without it, a little slower.
# -fno-var-tracking-assignments: full debug information (line tables and inlined frames, which
# the checkers' reports name) without GCC's tracking of where each local variable lives at each
# instruction, which only a debugger reads; it takes two fifths of a memcheck compile.
# -fno-canonical-system-headers: GCC otherwise names a system header by its resolved path when
# that is shorter, and the toolkit folder's headers are links into the wheels (cuda_headers.py):
# a header's own `#include "..."` would then find the wheel's unpatched neighbour.
_OPTIONAL_FLAGS = ("-mtls-dialect=gnu2", "-fno-var-tracking-assignments", "-fno-canonical-system-headers")


@cache
def _takes_flag(cxx: str, flag: str) -> bool:
    if flag.startswith("-mtls-dialect") and platform.machine() not in ("x86_64", "AMD64"):
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
    found = folder / f"compiler-flags-{_hash(cxx, _compiler_id(cxx), *_OPTIONAL_FLAGS)}.txt"

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
    return list(_NATIVE_X86) if platform.machine() in ("x86_64", "AMD64") else ["-march=native"]


def _target_key(cxx: str) -> str:
    """What a cached object's key takes from :func:`target_flags`: the CPU's features as the
    compiler names them, since ``-march=native`` means another CPU on another machine (a shared
    cache folder)."""
    flags = target_flags(cxx)
    return " ".join(flags) + "\n" + (_native_macros(cxx) or "") if flags else "portable"


def _common(cxx: str) -> list[str]:
    """The flags of every compile and link with ``cxx``."""
    return ["-std=gnu++17", "-g", "-fPIC", "-fno-semantic-interposition", *_optional_flags(cxx), "-pthread"]


def compiler() -> str:
    """The C++ compiler command: ``$CXX`` when set (a command with arguments, as make takes it:
    ``CXX='g++ -w'``), else the first of g++, c++, clang++ on PATH; SimBuildError when there is none."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not cxx:
        raise SimBuildError("no C++ compiler: install g++ (apt-get install g++) or set CXX to one")
    compiler_command(cxx)  # names a $CXX that cannot run, before any work
    return cxx


@cache
def _version_text(cxx: str) -> str:
    run = invoke([cxx, "--version"], "--version")
    if run.returncode != 0:
        raise SimBuildError(f"cannot run the C++ compiler {cxx!r}: --version exited with {run.returncode}")
    return run.stdout


def _compiler_id(cxx: str) -> str:
    text = _version_text(cxx)
    return text.splitlines()[0] if text else cxx


def _is_gcc(cxx: str) -> bool:
    """Whether ``cxx`` is GCC's g++ (whose precompiled headers the build uses), not clang."""
    text = _version_text(cxx)
    return "Free Software Foundation" in text and "clang" not in text.lower()


def _cache_stem(name: str) -> str:
    """``name`` as the start of a cache file's name: safe characters, short enough that the name
    with its key and a temporary suffix fits every file system (the key tells sources apart)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64]


def _check_mode(mode: str) -> None:
    if mode not in BUILD_MODES:
        raise SimBuildError(f"unknown mode '{mode}': choose one of {', '.join(MODES)}")


def _hash(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode("utf-8", "surrogateescape"))
        h.update(b"\0")
    return h.hexdigest()[:20]


def _build_jobs() -> int:
    """How many compilers a runtime build runs at once: the CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1


def _runtime_cpp() -> list[Path]:
    """The runtime's sources, compiled into one object per mode."""
    return sorted(RUNTIME_DIR.glob("*.cpp"))


def _runtime_sources() -> str:
    paths = sorted(RUNTIME_DIR.glob("*.h")) + _runtime_cpp() + sorted(RUNTIME_DIR.glob("include/**/*.h*"))
    return "\n".join(f"{p.relative_to(RUNTIME_DIR)}\n{p.read_text()}" for p in paths)


def _run_compiler(args: list[str], what: str) -> str:
    proc = invoke(args, what)
    if proc.returncode != 0:
        raise SimBuildError(_explain_compiler_error(what, proc.stderr))
    return proc.stdout


def _compile(args: list[str], what: str) -> None:
    _run_compiler(args, what)


def _preprocess_text(args: list[str], what: str) -> str:
    """``g++ -E`` (``args``): the preprocessed text, or SimBuildError explaining the failure."""
    return _run_compiler(args, what)


# NVIDIA's libraries the simulator does not provide (it runs CUDA C++, the runtime API and a cuBLAS subset).
_LIBRARY_HEADERS = [
    (r"cublasXt", "cuBLASXt"),
    (r"cudnn", "cuDNN"),
    (r"cufft", "cuFFT"),
    (r"cusparse", "cuSPARSE"),
    (r"cusolver", "cuSOLVER"),
    (r"nccl", "NCCL"),
    (r"cupti", "CUPTI"),
    (r"cutlass/", "CUTLASS"),
    (r"cute/", "CuTe"),
    (r"npp", "NPP"),
    (r"nvrtc", "NVRTC"),
    (r"nvml", "NVML"),
]
LIBRARIES_OUT_OF_SCOPE = (
    "of NVIDIA's libraries it provides CCCL (Thrust, CUB, libcu++) and the cuBLAS/cublasLt and cuRAND "
    "subsets in simulator/docs/supported.md; the others (cuDNN, cuFFT, cuSPARSE, NCCL, CUTLASS, ...) are "
    "out of its scope: it runs CUDA C++ and the CUDA runtime API"
)

# g++ messages that name a declaration the program expected from CUDA: (pattern, name group(s)).
_UNDECLARED = [
    r"['\u2018]([A-Za-z_][\w:]*)['\u2019] was not declared in this scope",
    r"there are no arguments to ['\u2018]([A-Za-z_]\w*)['\u2019] that depend on a template parameter",
    r"['\u2018]([A-Za-z_][\w:]*)['\u2019] "
    r"(?:does not name a type|has not been declared|is not a namespace-name)",
    r"['\u2018]([A-Za-z_]\w*)['\u2019] in namespace ['\u2018]([\w:]+)['\u2019] "
    r"does not name a (?:template )?type",
    r"['\u2018]([A-Za-z_]\w*)['\u2019] is not a member of ['\u2018]([\w:]+)['\u2019]",
]
_LOCATION = re.compile(r"^(\S+?):(\d+):(?:\d+:)? (?:fatal )?error: ")


def _explain_compiler_error(what: str, stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.search(r"\berror\b", ln)]
    hint = ""
    for ln in errors:
        loc = _LOCATION.match(ln)
        where = f"{loc.group(1)}:{loc.group(2)}: " if loc else ""
        m = re.search(r"fatal error: (\S+): No such file or directory", ln)
        if m and re.match(r"(?:cublas|curand)", m.group(1)):
            hint = f"\n{where}<{m.group(1)}> is not installed: {LIBRARIES_HINT}"
            break
        if m:
            header = m.group(1)
            library = next((lib for rx, lib in _LIBRARY_HEADERS if re.match(rx, header, re.IGNORECASE)), None)
            if library:
                hint = (
                    f"\n{where}unsupported header <{header}>: {library} is not provided by the simulator; "
                    f"{LIBRARIES_OUT_OF_SCOPE}"
                )
            else:
                hint = (
                    f"\n{where}unsupported header <{header}>: it is not provided by the simulator "
                    "(see simulator/docs/supported.md for what is supported)"
                )
            break
        for rx in _UNDECLARED:
            m = re.search(rx, ln)
            if m:
                name = m.group(1) if m.lastindex == 1 else f"{m.group(2)}::{m.group(1)}"
                hint = (
                    f"\n{where}'{name}' is declared nowhere: neither the program nor CUDA "
                    f"{cuda_headers.CUDA_MAJOR}'s headers declare it (a name from an older CUDA, or a "
                    "missing #include); see simulator/docs/supported.md for what is supported"
                )
                break
        if hint:
            break
    return f"g++ could not compile {what}:{hint}\n{_excerpt(lines, errors[0] if errors else None)}"


_EXCERPT_LINES = 40
_CONTEXT_LINES = 10  # kept before the first error: where it is included from, what led to it


def _excerpt(lines: list[str], first_error: str | None) -> str:
    """At most ``_EXCERPT_LINES`` of the compiler's ``lines``, always with ``first_error`` among them."""
    at = lines.index(first_error) if first_error is not None else 0
    start = 0 if at < _EXCERPT_LINES - _CONTEXT_LINES else at - _CONTEXT_LINES
    shown = lines[start : start + _EXCERPT_LINES]
    if start:
        shown.insert(0, f"[{start} lines of compiler messages before these left out]")
    return "\n".join(shown)


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


def _crt_build() -> int:
    """The build number of the pinned release's compiler headers (the nvidia-cuda-crt wheel's version)."""
    from importlib import metadata

    try:
        return int(metadata.version("nvidia-cuda-crt").split(".")[2])
    except (metadata.PackageNotFoundError, IndexError, ValueError):
        return 0


def nvcc_macros(arch: int) -> list[str]:
    """What nvcc defines for every pass (``__CUDA_ARCH__`` is the device pass's alone)."""
    version = cuda_headers.toolkit_version(toolkit_include())
    return [
        "-D__NVCC__",
        "-D__CUDACC__",
        f"-D__CUDACC_VER_MAJOR__={version // 1000}",
        f"-D__CUDACC_VER_MINOR__={version % 1000 // 10}",
        f"-D__CUDACC_VER_BUILD__={_crt_build()}",
        f"-D__CUDA_ARCH_LIST__={arch}",
        # CUB's policies for host code are "implementation defined": the modelled device's, so that
        # a dispatch on the host and the kernels it launches agree (cub/util_arch.cuh).
        f"-DCUB_PTX_ARCH={arch}",
    ]


def _generated_dir() -> Path:
    """The runtime's sources generated from NVIDIA's headers (the error codes' table)."""
    inc = toolkit_include()
    gen = inc.with_name(inc.name + "-runtime")
    toolkit_index.write_error_table(inc, gen)
    return gen


def runtime_units(count: int) -> list[list[Path]]:
    """The runtime's sources in ``count`` groups of about equal size (fewer when there are fewer
    sources), each compiled as one translation unit: the headers every source includes are parsed
    once a group, not once a source (the sources keep no file-local name that another reuses, so
    any grouping compiles; a test builds them all as one unit)."""
    sizes = {src: src.stat().st_size for src in _runtime_cpp()}
    groups: list[list[Path]] = [[] for _ in range(max(1, min(count, len(sizes))))]
    loads = [0] * len(groups)
    for src in sorted(sizes, key=lambda s: (-sizes[s], s.name)):
        least = loads.index(min(loads))
        groups[least].append(src)
        loads[least] += sizes[src]
    return [sorted(g) for g in groups]


def _unit_text(group: list[Path]) -> str:
    return "".join(f'#include "{src}"\n' for src in group)


def runtime_flags(cxx: str, mode: str) -> list[str]:
    """The flags of every compile of the runtime's sources for ``mode``."""
    # Hidden: a simulated library exports its own launchers only, never the runtime's cuda* calls
    # (which NVIDIA's headers declare with default visibility).
    return (
        _common(cxx)
        + BUILD_NAMED[mode].runtime_flags
        + ["-fvisibility=hidden", "-I", str(RUNTIME_DIR), "-I", str(_generated_dir())]
        + toolkit_flags()
    )


def link_flags(mode: str) -> list[str]:
    """The flags a link of objects built for ``mode`` needs (the sanitizer's runtime)."""
    _check_mode(mode)
    return list(BUILD_NAMED[mode].link_flags)


def runtime_object(mode: str) -> Path:
    """The runtime compiled for ``mode`` (cached)."""
    _check_mode(mode)
    cxx = compiler()
    flags = runtime_flags(cxx, mode)
    key = _hash(_runtime_sources(), " ".join(flags), _compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_runtime-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        # One group of sources per CPU, each group one compiler run (a cold cache builds several
        # modes' runtimes), then one relocatable object that links like a single file.
        groups = runtime_units(_build_jobs())
        units = [tmp.with_name(f"{tmp.name}.unit{i}.cpp") for i in range(len(groups))]
        parts = [unit.with_suffix(".o") for unit in units]

        def compile_one(unit: Path, part: Path) -> None:
            _compile([cxx, *flags, "-c", str(unit), "-o", str(part)], f"the runtime ({mode}, {unit.name})")

        try:
            for unit, group in zip(units, groups):
                write_new(unit, _unit_text(group).encode())
            # A cold build takes a minute or more per mode: say which and how far (compiles and link).
            shown = Progress(
                f"simulator: building the runtime ({mode}, {len(groups)} compiles + link)", len(groups) + 1
            )
            with ThreadPoolExecutor(max_workers=len(groups)) as jobs:
                # Each job runs in a copy of this context (the compiler runs' time allowance).
                runs = [
                    jobs.submit(contextvars.copy_context().run, compile_one, unit, part)
                    for unit, part in zip(units, parts)
                ]
                for run in runs:
                    run.add_done_callback(lambda done: done.exception() is None and shown.step())
                for run in runs:  # waits for every compiler and raises the first failure, in group order
                    run.result()
            joined = [cxx, "-r", "-nostdlib", *map(str, parts), "-o", str(tmp)]
            _compile(joined, f"the runtime ({mode}, link)")
            shown.step()
        finally:
            for path in units + parts:
                path.unlink(missing_ok=True)

    return cached_output(out, produce)


CUDA_SUFFIXES = (".cu", ".cuh")
HOST_CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".C", ".c++")
HOST_C_SUFFIXES = (".c",)


def _check_arch(arch: int) -> int:
    if isinstance(arch, bool) or not isinstance(arch, int):
        raise SimBuildError(f"--arch {arch!r}: give __CUDA_ARCH__ as an integer such as 800 (sm_80)")
    if arch < 100 or arch % 10 != 0:
        raise SimBuildError(f"--arch {arch}: not a __CUDA_ARCH__ value; give one such as 700, 800 or 900")
    return arch


def _user_files(pre: str) -> set[str]:
    """The program's own files named by the line markers of ``pre``: the main file and those entered
    without the system flag (no system or runtime header)."""
    found = set()
    for n, m in enumerate(re.finditer(r'(?m)^# \d+ "([^"]+)"((?: \d)*)$', pre)):
        path, flags = m.group(1), m.group(2).split()
        if (
            "3" not in flags
            and ("1" in flags or n == 0)
            and not path.startswith("<")
            and not path.startswith(str(RUNTIME_DIR))
        ):
            found.add(path)
    return found


def _front_end_version() -> str:
    """The front end's sources: a change in any of them rebuilds every object."""
    names = ("device_launches.py", "edits.py", "errors.py", "linemap.py", "refusals.py", "transform.py")
    names += tuple(sorted(p.name for p in PACKAGE_DIR.glob("syntax*.py")))
    names += tuple(sorted(p.name for p in PACKAGE_DIR.glob("ptx*.py")))  # inline PTX's translation
    return "\n".join((PACKAGE_DIR / n).read_text() for n in names)


@cache
def _native_macros(cxx: str) -> str | None:
    """The macros ``cxx -march=native`` defines (the CPU's features); None when it takes no such flag."""
    probe = invoke([cxx, "-march=native", "-dM", "-E", "-x", "c++", "/dev/null"], "a probe of -march=native")
    return probe.stdout if probe.returncode == 0 else None


def host_has_fma(cxx: str) -> bool:
    """Whether the machine's CPU has fused multiply-add instructions (device code contracts into them)."""
    return "#define __FMA__ 1" in (_native_macros(cxx) or "")


def _preprocess(cxx: str, path: str, flags: list[str], arch: int, what: str) -> tuple[str, str | None]:
    """``g++ -E`` of a .cu source for the front end: the host pass, and the device pass
    (``__CUDA_ARCH__`` defined) when the program's files test it (else None)."""
    clang_module()  # the front end's dependency, checked before any work
    pp = [cxx, *flags, *nvcc_macros(arch), "-include", str(RUNTIME_DIR / "cuda_sim.h"), "-x", "c++"]
    host_pre = _preprocess_text([*pp, "-E", path], what)
    for f in sorted(_user_files(host_pre)):
        if not os.path.isfile(f):
            continue  # the working-folder marker that -g adds
        try:
            tested = "__CUDA_ARCH__" in Path(f).read_text(encoding="utf-8", errors="replace")
        except OSError:
            tested = True
        if tested:
            return host_pre, _run_compiler([*pp, f"-D__CUDA_ARCH__={arch}", "-E", path], what)
    return host_pre, None


def translate_source(
    source: str | os.PathLike,
    mode: str = "fast",
    include_dirs: tuple[str, ...] | list[str] = (),
    arch: int = DEFAULT_ARCH,
    unchecked_host: bool = False,
    fmad: bool = True,
) -> str:
    """The C++ that the build compiles for a .cu ``source`` (preprocessed and rewritten; not cached;
    ``unchecked_host`` and ``fmad`` as :func:`kernel_object`)."""
    _check_mode(mode)
    _check_arch(arch)
    src = Path(source).resolve()
    if not src.is_file():
        raise SimBuildError(f"{source}: no such source file")
    includes = ["-I", str(src.parent)]
    for d in include_dirs:
        includes += ["-I", str(Path(d).resolve())]
    includes += toolkit_flags()
    cxx = compiler()
    flags = _common(cxx) + BUILD_NAMED[mode].kernel_flags + includes
    host_pre, device_pre = _preprocess(cxx, str(src), flags, arch, str(src))
    fma = fmad and host_has_fma(cxx)
    return translate_preprocessed(host_pre, lambda _path: True, device_pre, unchecked_host, fma)


_DEFINE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(=.*)?", re.DOTALL)


def check_defines(defines: tuple[str, ...] | list[str]) -> list[str]:
    """``defines`` as given, or :class:`SimBuildError` naming the first that is not ``NAME[=VALUE]``."""
    for d in defines:
        if not isinstance(d, str) or not _DEFINE.fullmatch(d):
            raise SimBuildError(f"-D {d!r}: give a macro as NAME or NAME=VALUE (a C identifier first)")
    return list(defines)


def kernel_object(
    source: str | os.PathLike,
    mode: str,
    include_dirs: tuple[str, ...] | list[str] = (),
    arch: int = DEFAULT_ARCH,
    defines: tuple[str, ...] | list[str] = (),
    unchecked_host: bool = False,
    fmad: bool = True,
    language: str | None = None,
    extra_flags: tuple[str, ...] | list[str] = (),
) -> Path:
    """Preprocess, rewrite and compile one source for ``mode`` (cached by content).

    ``.cu`` sources get the runtime header force-included (as nvcc makes the CUDA built-ins
    visible) and go through the front end, device code seeing ``__CUDA_ARCH__ == arch``; host
    C++ sources (``.cpp``, ...) are compiled as the host compiler would under nvcc, seeing the
    CUDA API only through their own ``#include <cuda_runtime.h>``; C sources are compiled as C.
    ``unchecked_host`` leaves host code out of the sanitizers' instrumentation: a ``.cu`` source's
    host-only functions are marked ``no_sanitize`` (``transform.UNCHECKED_HOST``), and under
    memcheck a host source is compiled as in fast mode. ``fmad`` (nvcc's -fmad, on by default):
    device code contracts multiplies and adds into fused multiply-adds where the CPU has them.
    ``language`` (``"cu"``, ``"c++"`` or ``"c"``, as nvcc's ``-x``) overrides the kind the suffix
    names; ``extra_flags`` (macros, include folders, the host compiler's own options) go to every
    preprocess and compile of the source, after the build's own.
    """
    _check_mode(mode)
    _check_arch(arch)
    src = Path(source)
    if not src.is_file():
        raise SimBuildError(f"{src}: no such source file")
    suffix = {"cu": ".cu", "c++": ".cpp", "c": ".c", None: src.suffix}.get(language, src.suffix)
    if suffix not in CUDA_SUFFIXES + HOST_CXX_SUFFIXES + HOST_C_SUFFIXES:
        raise SimBuildError(
            f"{src}: unknown kind of source '{suffix}': pass .cu files and the host .cpp/.cc/.cxx/.c "
            "files they link with"
        )
    user_dirs = [str(Path(d).resolve()) for d in include_dirs]
    for d in user_dirs:
        if not Path(d).is_dir():
            raise SimBuildError(f"-I {d}: no such folder")
    cxx = compiler()
    path = str(src.resolve())
    includes = ["-I", str(src.resolve().parent)]
    for d in user_dirs:
        includes += ["-I", d]
    includes += toolkit_flags()
    includes += [f"-D{d}" for d in check_defines(defines)] + list(extra_flags)
    stem = _cache_stem(src.stem)
    if suffix not in CUDA_SUFFIXES:
        host_build = BUILD_NAMED[mode]
        if unchecked_host and host_build.unchecked_host_build:
            host_build = BUILD_NAMED[host_build.unchecked_host_build]
        host_flags = host_build.kernel_flags
        if suffix in HOST_C_SUFFIXES:
            lang = ["-x", "c", "-std=gnu11"]
            base = [f for f in _common(cxx) if not f.startswith("-std=")] + host_flags
        else:
            lang = ["-x", "c++"]
            base = _common(cxx) + host_flags
        # Keyed by the preprocessed text, so that a change in an included header makes a new key.
        # The CPU's flags compile, but do not preprocess: the text is the same on every machine.
        pre = _preprocess_text([cxx, *base, *includes, *lang, "-E", path], str(src))
        flags = base + target_flags(cxx) + includes + cccl.compile_flags(mode, pre)
        key = _hash(
            pre, _runtime_sources(), " ".join(flags + lang), _compiler_id(cxx), path, _target_key(cxx)
        )
        out = cache_dir() / f"{stem}-{mode}-{key}.o"
        return cached_output(
            out, lambda tmp: _compile([cxx, *flags, *lang, "-c", path, "-o", str(tmp)], str(src))
        )
    flags = _common(cxx) + BUILD_NAMED[mode].kernel_flags
    if fmad and host_has_fma(cxx):
        includes = [*includes, "-DSIM_DEVICE_FMA"]
    host_pre, device_pre = _preprocess(cxx, path, flags + includes, arch, str(src))
    flags = flags + target_flags(cxx) + cccl.compile_flags(mode, host_pre) + list(extra_flags)
    key = _hash(
        host_pre,
        device_pre or "",
        _runtime_sources(),
        " ".join(flags),
        str(arch),
        _compiler_id(cxx),
        _front_end_version(),
        "unchecked host" if unchecked_host else "",
        "fma" if fmad and host_has_fma(cxx) else "",
        _target_key(cxx),
    )
    out = cache_dir() / f"{stem}-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        fma = fmad and host_has_fma(cxx)
        text = translate_preprocessed(host_pre, lambda _path: True, device_pre, unchecked_host, fma)
        _compile_translated(cxx, [*flags, "-fpermissive"], text, tmp, str(src))

    return cached_output(out, produce)


def _compile_translated(cxx: str, flags: list[str], text: str, out: Path, what: str) -> None:
    """Compile the translated ``text`` into the object ``out``: with the runtime prelude's
    precompiled header when there is one (pch.py), else as a whole. A compile with the header
    that fails is done again as a whole, so that every message is the one the whole text gives."""
    parts = pch.split(text, RUNTIME_DIR / "cuda_sim.h")
    header = _prelude_header(cxx, flags, parts) if parts is not None else None
    if header is not None and parts is not None:
        main = out.with_name(out.name + ".pch.ii")
        # The bytes g++ read, unchanged: a byte that is not UTF-8 was kept as a lone surrogate.
        write_new(main, pch.main_text(parts, header).encode("utf-8", "surrogateescape"))
        try:
            args = [cxx, *flags, "-fpreprocessed", "-x", "c++-cpp-output", "-c", str(main), "-o", str(out)]
            if invoke(args, what).returncode == 0:
                return
        finally:
            main.unlink(missing_ok=True)
    translated = out.with_name(out.name + ".sim.ii")
    write_new(translated, text.encode("utf-8", "surrogateescape"))
    try:
        _compile([cxx, *flags, "-x", "c++-cpp-output", "-c", str(translated), "-o", str(out)], what)
    finally:
        translated.unlink(missing_ok=True)


def _prelude_header(cxx: str, flags: list[str], parts: pch.Split) -> Path | None:
    """The precompiled header of ``parts.prelude`` for a compile with ``flags`` (built once per
    content, flags and compiler, in the cache); None where g++'s precompiled headers cannot be
    used (another compiler, a cache path a pragma cannot name) or the prelude does not compile."""
    if not _is_gcc(cxx):
        return None
    folder = cache_dir()
    if not pch.usable_path(folder):
        return None
    # The flags whole: g++ would load a header built with other optimisation or sanitizer flags.
    out = folder / f"prelude-{_hash(parts.prelude, ' '.join(flags), _compiler_id(cxx))}.gch"

    def produce(tmp: Path) -> None:
        prelude = tmp.with_name(tmp.name + ".ii")
        write_new(prelude, parts.prelude.encode("utf-8", "surrogateescape"))
        try:
            args = [cxx, *flags, "-fpreprocessed", "-x", "c++-header", str(prelude), "-o", str(tmp)]
            _compile(args, "the runtime's precompiled header")
        finally:
            prelude.unlink(missing_ok=True)

    try:
        return cached_output(out, produce)
    except SimBuildError:
        return None  # the whole text's compile says what is wrong, in the program's terms


# The libraries every link takes besides the objects: what they export is never stubbed.
_SYSTEM_LIBRARIES = ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1")


@cache
def system_symbols(cxx: str) -> frozenset[str]:
    """What the C, math and C++ libraries the compiler links with export (cached in the cache folder)."""
    paths = []
    for name in _SYSTEM_LIBRARIES:
        found = invoke([cxx, f"-print-file-name={name}"], f"a search for {name}").stdout.strip()
        if found and os.path.isabs(found) and os.path.isfile(found):
            paths.append(Path(found).resolve())
    key = _hash(*(f"{p}:{p.stat().st_mtime_ns}" for p in paths))
    record = cache_dir() / f"system-symbols-{key}.txt"

    def produce(tmp: Path) -> None:
        names: set[str] = set()
        for p in paths:
            names |= link_stubs.exported(p)
        tmp.write_text("\n".join(sorted(names)))

    return frozenset(cached_output(record, produce).read_text().split())


# NVIDIA's libraries the simulator implements (runtime/libs/): each is its own object per mode,
# built when a program calls into it, from the library's sources (which need its headers: the
# simulator-libs extra's wheels). name -> (sources, symbol prefixes, header its calls are declared in).
LIBRARIES = {
    "cublas": (("libs/cublas.cpp", "libs/cublaslt.cpp"), ("cublas",), "cublas_api.h"),
    "curand": (("libs/curand.cpp",), ("curand",), "curand.h"),
}
LIBRARIES_HINT = (
    'pip install "torchlight[simulator-libs]" (the nvidia-cublas and nvidia-curand wheels\' headers)'
)


def library_object(name: str, mode: str) -> Path:
    """The simulator's implementation of NVIDIA's library ``name`` for ``mode`` (cached)."""
    _check_mode(mode)
    sources, _, header = LIBRARIES[name]
    if not (toolkit_include() / header).is_file():
        raise SimBuildError(
            f"the program calls {name}, whose header <{header}> is not installed: {LIBRARIES_HINT}"
        )
    cxx = compiler()
    flags = runtime_flags(cxx, mode)
    paths = [RUNTIME_DIR / src for src in sources]
    text = "".join(p.read_text() for p in sorted(RUNTIME_DIR.glob("libs/*")))
    key = _hash(_runtime_sources(), text, " ".join(flags), _compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_{name}-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        unit = tmp.with_name(tmp.name + ".cpp")
        unit.write_text(_unit_text(paths))
        try:
            _compile([cxx, *flags, "-c", str(unit), "-o", str(tmp)], f"the simulator's {name} ({mode})")
        finally:
            unit.unlink(missing_ok=True)

    return cached_output(out, produce)


def object_symbols(obj: Path) -> tuple[set[str], set[str]]:
    """(defined, undefined) global symbols of the object ``obj``, as ``link_stubs.symbols`` reads them.

    Reading an object's symbol table costs about 0.1 s a megabyte, and every link reads the
    runtime's (megabytes): an artefact of the cache has its answer kept beside it, keyed by the
    artefact's recorded SHA-256, so that it is read once per content.
    """
    digest = recorded_digest(obj) if obj.parent == cache_dir() else None
    if digest is None:
        return link_stubs.symbols(obj)
    listing = obj.parent / f"symbols-{digest[:32]}.txt"

    def produce(tmp: Path) -> None:
        defined, undefined = link_stubs.symbols(obj)
        if any("\n" in name for name in defined | undefined):
            raise _Unlistable
        rows = [f"D {n}" for n in sorted(defined)] + [f"U {n}" for n in sorted(undefined)]
        tmp.write_bytes("".join(f"{row}\n" for row in rows).encode("utf-8", "surrogatepass"))

    try:
        text = cached_output(listing, produce).read_bytes().decode("utf-8", "surrogatepass")
    except _Unlistable:
        return link_stubs.symbols(obj)
    found: tuple[set[str], set[str]] = (set(), set())
    for row in text.splitlines():
        found[row[0] == "U"].add(row[2:])
    return found


class _Unlistable(Exception):
    """A symbol name that a listing of one name a line cannot hold (a newline in it)."""


def library_objects(objects: list[Path], mode: str) -> list[Path]:
    """The simulator's libraries that ``objects`` call into (cuBLAS, cuRAND)."""
    undefined: set[str] = set()
    for obj in objects:
        undefined |= object_symbols(obj)[1]
    return [
        library_object(name, mode)
        for name, (_, prefixes, _) in LIBRARIES.items()
        if any(sym.startswith(prefixes) for sym in undefined)
    ]


def stub_objects(objects: list[Path]) -> list[Path]:
    """The stubs of what ``objects`` call that NVIDIA's headers declare and nothing defines (one
    cached object, or none; link_stubs.py)."""
    declared = toolkit_index.functions(toolkit_include())
    names = link_stubs.unresolved_declared(objects, declared, system_symbols(compiler()), object_symbols)
    return stub_object(names) if names else []


def stub_object(names: list[str]) -> list[Path]:
    """One cached object of stubs for the functions ``names`` (declared by NVIDIA's headers)."""
    inc = toolkit_include()
    declared = toolkit_index.functions(inc)
    cxx = compiler()
    flags = [*_common(cxx), "-O1", "-fvisibility=hidden"]
    key = _hash(link_stubs.stub_key(names), inc.name, " ".join(flags), _compiler_id(cxx))
    out = cache_dir() / f"stubs-{key}.o"

    def produce(tmp: Path) -> None:
        source = tmp.with_name(tmp.name + ".cpp")
        source.write_text(
            link_stubs.stub_source(names, declared, lambda s: toolkit_index.status_value(inc, s))
        )
        try:
            _compile(
                [cxx, *flags, "-c", str(source), "-o", str(tmp)], "the stubs of unimplemented CUDA functions"
            )
        finally:
            source.unlink(missing_ok=True)

    return [cached_output(out, produce)]


def build_shared(
    source: str | os.PathLike, out_dir: str | os.PathLike, mode: str = "fast", arch: int = DEFAULT_ARCH
) -> Path:
    """Build ``source`` into ``out_dir/<stem>.so`` exporting the same launchers as nvcc's build."""
    obj = kernel_object(source, mode, arch=arch)
    rt = runtime_object(mode)
    libs = library_objects([obj], mode)
    stubs = stub_objects([obj, rt, *libs])
    cxx = compiler()
    key = _hash(obj.name, rt.name, *(s.name for s in libs + stubs), "shared")
    cached = cache_dir() / f"{obj.stem}-{key}.so"
    cached_output(
        cached,
        lambda tmp: _compile(
            # -Bsymbolic: the kernels' calls into the runtime bind to this library's own copy
            # at link time (no PLT stub per barrier, and never another library's runtime).
            [
                cxx,
                "-shared",
                "-pthread",
                "-Wl,-Bsymbolic",
                *BUILD_NAMED[mode].link_flags,
                str(obj),
                str(rt),
                *map(str, libs + stubs),
                "-o",
                str(tmp),
            ],
            f"{source} (link)",
        ),
    )
    return _copy_out(cached, Path(out_dir), Path(source).stem + ".so")


def _copy_out(cached: Path, dest_dir: Path, name: str) -> Path:
    """Copy the cached ``cached`` to ``dest_dir/name`` through a temporary file there, which a
    failure (a full disk) removes; SimBuildError in one line naming the folder."""
    try:
        dest_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise SimBuildError(f"--out {dest_dir}: it is a file, not a folder; pass a folder") from None
    except OSError as exc:
        raise SimBuildError(f"--out {dest_dir}: cannot create it ({exc.strerror}); pass another") from None
    if not dest_dir.is_dir():
        raise SimBuildError(f"--out {dest_dir}: it is a file, not a folder; pass a folder")
    dest = dest_dir / name
    # A short temporary name (the final one may be as long as a name can be), with the umask's mode.
    tmp = dest_dir / f".sim-{secrets.token_hex(6)}.so.tmp"
    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
            with os.fdopen(fd, "wb") as out, open(cached, "rb") as src:
                shutil.copyfileobj(src, out)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise SimBuildError(
            f"cannot write {dest}: {exc.strerror or exc}; free space there or pass another --out"
        ) from None
    return dest


REAPER_SOURCE = PACKAGE_DIR / "reaper.cpp"


def reaper_program() -> Path:
    """The supervisor that runs every program of ``run`` and ``check`` (``reaper.cpp``; Linux),
    compiled once per compiler into the cache."""
    cxx = compiler()
    flags = ["-O2", "-std=gnu++17", "-x", "c++"]
    source = REAPER_SOURCE.read_text()
    out = cache_dir() / f"reaper-{_hash(source, ' '.join(flags), _compiler_id(cxx))}"

    def produce(tmp: Path) -> None:
        _compile([cxx, *flags, str(REAPER_SOURCE), "-o", str(tmp)], "the supervisor of programs (reaper.cpp)")
        os.chmod(tmp, 0o700)

    return cached_output(out, produce)


_MAIN = """
#include <cstdio>
extern "C" int {entry}(void);
int main() {{
    int rc = {entry}();
    if (rc != 0) std::fprintf(stderr, "simulator: entry '{entry}' returned %d\\n", rc);
    return rc == 0 ? 0 : 3;
}}
"""


def build_executable(
    sources: list[str | os.PathLike], entry: str, mode: str, arch: int = DEFAULT_ARCH
) -> Path:
    """Link ``sources`` with a ``main`` that calls ``extern "C" int entry(void)`` (cached)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", entry):
        raise SimBuildError(f"--entry '{entry}' is not a C identifier")
    objs = [kernel_object(s, mode, arch=arch) for s in sources]
    rt = runtime_object(mode)
    libs = library_objects(objs, mode)
    stubs = stub_objects([*objs, rt, *libs])
    cxx = compiler()
    main_src = _MAIN.format(entry=entry)
    key = _hash(*(o.name for o in objs), rt.name, *(s.name for s in libs + stubs), main_src, mode)
    out = cache_dir() / f"check-{_cache_stem(entry)}-{mode}-{key}"

    def produce(tmp: Path) -> None:
        main_path = tmp.with_name(tmp.name + ".main.cpp")
        write_new(main_path, main_src.encode())
        try:
            _compile(
                [
                    cxx,
                    *_common(cxx),
                    "-O1",
                    *BUILD_NAMED[mode].link_flags,
                    str(main_path),
                    *map(str, objs),
                    str(rt),
                    *map(str, libs + stubs),
                    "-o",
                    str(tmp),
                ],
                f"the check executable for entry '{entry}' (is it extern \"C\" int {entry}(void)?)",
            )
            os.chmod(tmp, 0o755)
        finally:
            main_path.unlink(missing_ok=True)

    return cached_output(out, produce)


def build_program(
    sources: list[str | os.PathLike],
    mode: str,
    include_dirs: tuple[str, ...] | list[str] = (),
    arch: int = DEFAULT_ARCH,
    defines: tuple[str, ...] | list[str] = (),
    unchecked_host: bool = False,
    fmad: bool = True,
) -> Path:
    """Link a whole program (its own ``main``) from ``sources`` with the runtime (cached).

    ``defines`` (``NAME`` or ``NAME=VALUE``, as a Makefile's ``-D`` flags) apply to every source;
    ``unchecked_host`` leaves host code uninstrumented (see :func:`kernel_object`).
    """
    if not sources:
        raise SimBuildError("no sources given: pass the program's .cu file (and the files it links with)")
    objs = [kernel_object(s, mode, include_dirs, arch, defines, unchecked_host, fmad) for s in sources]
    rt = runtime_object(mode)
    libs = library_objects(objs, mode)
    stubs = stub_objects([*objs, rt, *libs])
    cxx = compiler()
    key = _hash(*(o.name for o in objs), rt.name, *(s.name for s in libs + stubs), mode, "program")
    stem = _cache_stem(Path(sources[0]).stem)
    out = cache_dir() / f"program-{stem}-{mode}-{key}"

    def produce(tmp: Path) -> None:
        _compile(
            [
                cxx,
                *_common(cxx),
                "-O1",
                *BUILD_NAMED[mode].link_flags,
                *map(str, objs),
                str(rt),
                *map(str, libs + stubs),
                "-o",
                str(tmp),
                "-lm",
            ],
            f"the program {' '.join(map(str, sources))} (link; does exactly one source define main()?)",
        )
        os.chmod(tmp, 0o755)

    return cached_output(out, produce)
