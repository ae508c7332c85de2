"""A folder laid out as a CUDA installation, whose compiler and libraries are the simulator's.

``bin/nvcc`` runs this Python's ``-m <package> nvcc`` (``nvcc.py``); ``include/`` holds the headers
every simulated build compiles against (links to the simulator's own, then NVIDIA's and CCCL's);
``lib64/`` the runtime: ``libcudart_sim.a`` (the runtime, the simulator's cuBLAS and cuRAND
when their headers are installed, and stubs of what the headers declare and the runtime lacks),
``libcudart_static.a`` a linker script naming that archive, a checker build's sanitizer runtime and
the C++ and system libraries the runtime uses (so that gcc links a C program with it),
``libcudart.so`` a linker script naming ``libcudart_static.a`` (so ``-lcudart`` and CMake's
``CUDA::cudart`` link it), and ``libcublas.so``/``libcurand.so``/... naming it too;
``libcuda.so`` (and ``stubs/libcuda.so``, where an installation keeps the driver's stub) names it
and what makes a program linked with it export the runtime (``toolkit_exports.py``). A checker build
(``SIMULATOR_MODE``) links ``lib64/<mode>/`` instead, built the first time a link asks for it, and
sees the toolkit as ``checkers/<mode>/`` (:func:`mode_root`).
Each program or shared library linked this way holds its own copy of the runtime; a driver API
module (``nvcc -fatbin``/``-cubin``) holds none and calls the loading program's (``modules.py``).

The folder belongs to one install: its name carries the package's version and Python and a key of
where the package and that Python are (:func:`install`), so installs that share a build cache (two
virtual environments, one ``SIMULATOR_CACHE``) each get their own and never rewrite another's
``bin/nvcc``. The shared ``toolkit`` folder of earlier versions is left as it is and not used.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import build, cuda_headers, link_stubs, modules, toolkit_exports, toolkit_index
from .build_cache import cache_key, lock
from .compiler_run import run_tool
from .errors import SimBuildError
from .modes import DEFAULT_MODE, MODES, build_for_run

__all__ = [
    "MODE_ENV",
    "Install",
    "build_mode",
    "include_dir",
    "install",
    "location",
    "library_dir",
    "mode_root",
    "root",
]

MODE_ENV = "SIMULATOR_MODE"
# The names the toolkit's libraries go by; each is the same archive (cuBLAS and cuRAND live in it).
_LIBRARY_ALIASES = ("cudart", "cudadevrt", "cublas", "cublasLt", "curand", "culibos")
# A file whose presence marks a toolkit root (CMake looks for nvvm/libdevice).
_MARKERS = ("nvvm/libdevice/README", "bin/crt/link.stub")
# g++'s runtime library for each -fsanitize= name a checker build links with.
_SANITIZER_LIBRARIES = {"address": "asan", "undefined": "ubsan", "thread": "tsan"}
# What the runtime's archive calls besides itself (libstdc++, and libm/libdl/librt/libpthread, which
# are parts of libc from glibc 2.34 on).
_RUNTIME_NEEDS = ("stdc++", "m", "dl", "rt", "pthread")
# Changes when lib64's layout does, so that a folder made by an older layout is remade.
_LAYOUT = (
    "layout 5: libcudart_static.a names libcudart_sim.a (the runtime exported), its sanitizer and libstdc++;"
    " libcuda.so and stubs/libcuda.so name the exports library too"
)


def build_mode() -> str:
    """The build mode ``$SIMULATOR_MODE`` asks for (``fast`` when unset), as a build mode name."""
    mode = os.environ.get(MODE_ENV, "") or DEFAULT_MODE
    if mode not in MODES:
        raise SimBuildError(
            f"{MODE_ENV}={mode!r} is not a mode: choose one of {', '.join(MODES)} (unset: {DEFAULT_MODE})"
        )
    return build_for_run(mode)


@dataclass(frozen=True)
class Install:
    """What a toolkit folder's ``bin/nvcc`` runs: the Python, the folder holding the package, its
    version; one folder per distinct value."""

    python: str
    top: str
    version: str

    def folder_name(self) -> str:
        """``toolkit-VERSION-pyX.Y-KEY``: readable, and different for every install."""
        key = cache_key(self.python, self.top, self.version)[:12]
        version = re.sub(r"[^A-Za-z0-9_.+-]", "_", self.version)[:32]
        return f"toolkit-{version}-py{sys.version_info[0]}.{sys.version_info[1]}-{key}"


def install() -> Install:
    """This install: this Python, the folder its package is imported from, and its version."""
    package = package_name()
    top = Path(__file__).resolve().parents[package.count(".") + 1]
    return Install(python=sys.executable, top=str(top), version=_version())


@functools.cache
def _version() -> str:
    try:
        return importlib.metadata.version("torchlight")
    except importlib.metadata.PackageNotFoundError:
        return "unversioned"  # a checkout used without installing it


def _nvcc_script(owner: Install) -> str:
    package = package_name()
    code = (
        f"import sys; sys.path.insert(0, {owner.top!r}); "
        f"from {package}.nvcc import main; sys.exit(main(sys.argv[1:]))"
    )
    # The build cache is the one this folder lives in, whatever the caller's environment says, so
    # that objects, the runtime's libraries and this folder's lib64 are always the same ones.
    cache = shlex.quote(str(build.cache_dir().resolve()))
    return (
        "#!/bin/sh\n"
        "# nvcc for the CPU: the CUDA simulator's compiler driver.\n"
        f"# torchlight {owner.version}, {owner.top}\n"
        f"SIMULATOR_CACHE={cache}\n"
        "export SIMULATOR_CACHE\n"
        f'exec {shlex.quote(owner.python)} -c {shlex.quote(code)} "$@"\n'
    )


def _version_json(version: int) -> str:
    text = f"{version // 1000}.{version % 1000 // 10}.0"
    return json.dumps(
        {
            "cuda": {"name": "CUDA SDK", "version": text},
            "cuda_cudart": {"name": "CUDA Runtime (cudart), CPU simulator", "version": text},
            "cuda_nvcc": {"name": "CUDA NVCC, CPU simulator", "version": text},
            "simulator": {"name": "torchlight CUDA-on-CPU simulator", "package": package_name()},
        },
        indent=2,
    )


def package_name() -> str:
    """The import name of the simulator package (``simulator`` or ``torchlight.simulator``)."""
    return __package__ or "simulator"


def _link_include(dest: Path) -> None:
    """``dest`` filled with links to the headers a build sees, in its order of search."""
    inc = build.toolkit_include()
    sources = [build.RUNTIME_DIR / "include", inc]
    cccl = cuda_headers.cccl_dir(inc)
    if cccl is not None:
        sources.append(cccl)
    dest.mkdir(parents=True)
    for folder in sources:
        for entry in sorted(folder.iterdir()):
            target = dest / entry.name
            if not target.exists() and not target.is_symlink():
                target.symlink_to(entry.resolve() if entry.is_symlink() else entry)


def location() -> Path:
    """This install's toolkit folder in the build cache (named here; :func:`root` makes it)."""
    return build.cache_dir() / install().folder_name()


def _make_folder() -> Path:
    """This install's toolkit folder without its libraries, made or remade when its ``bin/nvcc``
    is not this install's; a lock keeps builds starting together from making it twice."""
    top = location()
    nvcc = top / "bin" / "nvcc"
    script = _nvcc_script(install())
    if nvcc.is_file() and nvcc.read_text() == script:
        return top
    with lock(top.with_name(top.name + ".lock")):
        if nvcc.is_file() and nvcc.read_text() == script:
            return top  # made by a build that held the lock before this one
        tmp = Path(tempfile.mkdtemp(prefix=f".{top.name}.", dir=top.parent))
        try:
            (tmp / "bin").mkdir()
            (tmp / "bin" / "nvcc").write_text(script)
            (tmp / "bin" / "nvcc").chmod(0o755)
            _link_include(tmp / "include")
            for marker in _MARKERS:
                (tmp / marker).parent.mkdir(parents=True, exist_ok=True)
                (tmp / marker).write_text("Device code runs on the CPU under the simulator: nothing here.\n")
            version = cuda_headers.toolkit_version(build.toolkit_include())
            (tmp / "version.json").write_text(_version_json(version) + "\n")
            (tmp / "lib64").mkdir()
            if top.exists():
                # Made by an older version of this install: moved aside in one step, then removed.
                old = Path(tempfile.mkdtemp(prefix=f".{top.name}.old.", dir=top.parent))
                os.rename(top, old / "folder")
                shutil.rmtree(old, ignore_errors=True)
            os.rename(tmp, top)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return top


def root() -> Path:
    """This install's toolkit folder (made on first use in the build cache); its libraries for
    ``fast`` built."""
    top = _make_folder()
    library_dir(DEFAULT_MODE)
    return top


def include_dir() -> Path:
    """The toolkit folder's ``include`` (made by :func:`root`; named here without making it)."""
    return location() / "include"


def mode_root(mode: str) -> Path:
    """The toolkit folder as a build for ``mode`` sees it: ``root()`` for ``fast``, else
    ``root()/checkers/MODE``, whose ``lib64`` is the mode's libraries and whose other entries are
    ``root()``'s. nvcc names it as its installation (``TOP`` in ``-v``), so that CMake's
    ``find_package(CUDAToolkit)`` and ``CUDA::cudart`` link the checker's runtime."""
    top = root()
    if mode == DEFAULT_MODE:
        return top
    libs = library_dir(mode)
    folder = top / "checkers" / mode
    folder.mkdir(parents=True, exist_ok=True)
    links = {name: Path("..", "..", name) for name in ("bin", "include", "nvvm", "version.json")}
    links["lib64"] = libs
    for name, target in links.items():
        try:
            (folder / name).symlink_to(target)
        except FileExistsError:
            pass  # made before, or by a build running beside this one
    return folder


def _all_stubs(objects: list[Path]) -> list[Path]:
    """One object of stubs for every function the headers declare that ``objects`` do not define."""
    inc = build.toolkit_include()
    declared = toolkit_index.functions(inc)
    defined: set[str] = set()
    for obj in objects:
        defined |= link_stubs.symbols(obj)[0]
    provided = build.system_symbols(build.compiler())
    names = sorted(n for n in declared if n not in defined and n not in provided)
    return build.stub_object(names) if names else []


def _libraries(mode: str) -> list[Path]:
    """The simulator's cuBLAS and cuRAND for ``mode``, those whose headers are installed."""
    found = []
    for name in build.LIBRARIES:
        try:
            found.append(build.library_object(name, mode))
        except SimBuildError:
            continue  # its headers are not installed: the library is left out, as its stubs are
    return found


def library_dir(mode: str) -> Path:
    """The folder of the runtime's libraries for build ``mode`` (built on first use)."""
    folder = _make_folder() / "lib64"
    if mode != DEFAULT_MODE:
        folder = folder / mode
    # The copy with default visibility, so that the driver library can export it (toolkit_exports.py).
    runtime = modules.exported_runtime(build.runtime_object(mode))
    libs = _libraries(mode)
    members = [runtime, *libs]
    members += _all_stubs(members)
    sanitizers = _sanitizer_libraries(mode)
    stamp = "\n".join([_LAYOUT, *(p.name for p in members), *sanitizers])
    if not _current(folder, stamp):
        folder.mkdir(parents=True, exist_ok=True)
        with lock(folder / ".lock"):
            if not _current(folder, stamp):  # else made by a build that held the lock first
                _write_libraries(folder, members, sanitizers, stamp)
    return folder


def _current(folder: Path, stamp: str) -> bool:
    """Whether ``folder``'s libraries were made from the members ``stamp`` lists."""
    members = folder / "members.txt"
    return members.is_file() and members.read_text() == stamp


def _write_libraries(folder: Path, members: list[Path], sanitizers: list[str], stamp: str) -> None:
    """The runtime's archive of ``members`` in ``folder`` and the linker scripts naming it."""
    archive = folder / "libcudart_sim.a"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="libcudart_sim.", suffix=".a")
    os.close(fd)
    os.unlink(tmp)
    made = run_tool(["ar", "rcs", tmp, *map(str, members)])
    if made.returncode != 0:
        raise SimBuildError(f"ar could not make the runtime's archive: {made.stderr.strip()}")
    os.replace(tmp, archive)
    # libcudart_static.a is a linker script: the archive, then the sanitizer's runtime a checker
    # build's objects call, so that a link by a build system's own g++ (CMake links CUDA programs
    # so, without -fsanitize) links a memcheck or racecheck program as nvcc's link does.
    # The C++ and system libraries the runtime uses, for a link by gcc (Rodinia links C objects
    # with -lcudart so) or one that names no -pthread.
    needs = "".join(f" -l{lib}" for lib in [*sanitizers, *_RUNTIME_NEEDS])
    _write_script(folder / "libcudart_static.a", f"INPUT({archive}{needs})")
    for alias in _LIBRARY_ALIASES:
        _write_script(folder / f"lib{alias}.so", f"INPUT({folder / 'libcudart_static.a'})")
    # The driver library also exports the runtime, for the modules a program loads. A CUDA
    # installation keeps a stub of it in lib64/stubs (nvcc's profile puts it on the link line);
    # build files that link the driver API with g++ name that folder.
    anchor, exports = toolkit_exports.write_exports(folder, members[0])
    (folder / "stubs").mkdir(exist_ok=True)
    for driver in (folder / "libcuda.so", folder / "stubs" / "libcuda.so"):
        _write_script(driver, f"INPUT({anchor} {exports} {folder / 'libcudart_static.a'})")
    _write_script(folder / "members.txt", stamp, comment=False)


def _write_script(path: Path, body: str, comment: bool = True) -> None:
    """A linker script at ``path`` (replacing what is there at once, for a link that reads it now)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(f"/* the simulator's runtime, linked statically */\n{body}\n" if comment else body)
    os.replace(tmp, path)


def _sanitizer_libraries(mode: str) -> list[str]:
    """The sanitizer runtimes (``asan``, ...) that g++'s ``-fsanitize=`` links for ``mode``."""
    found: list[str] = []
    for flag in build.link_flags(mode):
        if flag.startswith("-fsanitize="):
            found += [_SANITIZER_LIBRARIES[name] for name in flag.split("=", 1)[1].split(",")]
    return found
