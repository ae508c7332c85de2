"""``python -m torchlight build-kernels``: build the CUDA C kernel libraries from the installed sources.

With nvcc (``$NVCC``, PATH, ``$CUDA_HOME``/``$CUDA_PATH``, ``/usr/local/cuda`` or the pip
``nvidia-cuda-nvcc`` wheel) it builds GPU libraries; with ``--simulator`` it builds the same
launchers for the CPU with the bundled simulator (needs only a C++ compiler). The default
output is the directory the loader reads, so the next ``device="cuda"`` uses the new libraries.

This file needs only the standard library (the simulator build imports the simulator), so
``ci/build-kernels.sh`` runs it as a script on a machine that has Python and nvcc and nothing else.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import importlib
import importlib.util
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
SOURCE_DIR = PACKAGE_DIR / "cuda_kernels"
# The loader (torchlight.backends.cuda_c.loader) reads $TORCHLIGHT_CUDA_KERNEL_DIR, else SOURCE_DIR.
KERNEL_DIR_ENV = "TORCHLIGHT_CUDA_KERNEL_DIR"
ARCHS_ENV = "TORCHLIGHT_CUDA_ARCHS"
DEFAULT_ARCHS = "80;90"
COMMAND = "python -m torchlight build-kernels"
# Searched after PATH, $CUDA_HOME and $CUDA_PATH.
SYSTEM_CUDA_HOMES = ("/usr/local/cuda",)

# Library name -> the launchers it must export (the loader checks the same names).
LIBRARIES: dict[str, tuple[str, ...]] = {
    "softmax_kernel": (
        "tl_attn_softmax_fw",
        "tl_attn_softmax_fw_strided",
        "tl_attn_softmax_bw",
        "tl_softmax_abi_version",
    ),
    "layernorm_kernel": ("tl_layernorm_fw", "tl_layernorm_bw", "tl_layernorm_abi_version"),
}


class KernelBuildError(Exception):
    """The build cannot run or failed; the message says what to do. ``status`` is the exit code."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


# --- where things are -----------------------------------------------------------------------------


def parse_archs(spec: str, source: str = "--arch") -> list[str]:
    """SM versions from ``"80;90"`` (``,`` works too); ``source`` names where the list came from."""
    archs = []
    for raw in re.split(r"[;,]", spec):
        arch = raw.strip()
        if not arch:
            continue
        if not re.fullmatch(r"[0-9]+[a-z]?", arch):
            raise KernelBuildError(
                f"{source} {spec!r}: entry {arch!r} is not an SM version like 80 or 90 (e.g. '80;90')",
                status=2,
            )
        archs.append(arch)
    if not archs:
        raise KernelBuildError(f"{source} {spec!r} names no SM version; give e.g. '80;90'", status=2)
    return archs


def _wheel_nvcc_candidates() -> list[Path]:
    """nvcc inside the pip ``nvidia-cuda-nvcc`` wheel (``nvidia/cu13/bin``, ``nvidia/cuda_nvcc/bin``)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    found = []
    for root in spec.submodule_search_locations:
        found += sorted(Path(root).glob("*/bin/nvcc"), reverse=True)  # cu13 before cu12
    return found


def find_nvcc(include_wheel: bool = True) -> tuple[Path | None, list[str]]:
    """The nvcc to run and the places looked at (for the error when there is none).

    ``include_wheel=False`` looks for a CUDA toolkit only, not the pip wheel's nvcc.
    """
    looked = []
    explicit = os.environ.get("NVCC", "")
    if explicit:
        path = shutil.which(explicit)
        if path is None:
            raise KernelBuildError(
                f"NVCC={explicit!r} is not an executable: point NVCC at nvcc, or unset it to search PATH, "
                f"CUDA_HOME and the nvidia-cuda-nvcc wheel. Without nvcc, build the CPU version instead: "
                f"{COMMAND} --simulator"
            )
        return Path(path), [f"NVCC={explicit}"]
    on_path = shutil.which("nvcc")
    looked.append("PATH")
    if on_path:
        return Path(on_path), looked
    homes = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), *SYSTEM_CUDA_HOMES]
    for home in filter(None, homes):
        looked.append(f"{home}/bin")
        if (Path(home) / "bin" / "nvcc").is_file():
            return Path(home) / "bin" / "nvcc", looked
    if not include_wheel:
        return None, looked
    looked.append("the nvidia-cuda-nvcc wheel")
    wheel = _wheel_nvcc_candidates()
    if wheel:
        return wheel[0], looked
    return None, looked


def nvcc_origin(nvcc: Path) -> str:
    """Where ``nvcc`` (a find_nvcc answer) comes from: $NVCC, the pip wheel or a CUDA toolkit."""
    if os.environ.get("NVCC"):
        return "$NVCC"
    if any(nvcc == candidate for candidate in _wheel_nvcc_candidates()):
        return "the pip cuda-toolkit wheel"
    return "the system CUDA toolkit"


def user_cache_dir() -> Path:
    """The user's cache folder for torchlight (platformdirs': ``$XDG_CACHE_HOME/torchlight`` on Linux)."""
    try:
        import platformdirs
    except ImportError:  # this file runs as a bare script too: the same folder on Linux
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "torchlight"
    return Path(platformdirs.user_cache_dir("torchlight"))


def _writable(directory: Path) -> bool:
    return directory.is_dir() and os.access(directory, os.W_OK | os.X_OK)


def loader_dir() -> Path:
    """The directory the kernel loader reads: ``$TORCHLIGHT_CUDA_KERNEL_DIR``, else the package's own."""
    configured = os.environ.get(KERNEL_DIR_ENV, "")
    return Path(configured).expanduser() if configured else SOURCE_DIR


def default_out_dir() -> Path:
    """Where a build goes without ``--out``: the loader's directory when writable, else the user cache."""
    target = loader_dir()
    if os.environ.get(KERNEL_DIR_ENV) or _writable(target):
        return target
    return user_cache_dir() / "cuda_kernels"


def _same_dir(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _usage_line(out: Path) -> str:
    """How the loader finds the libraries in ``out``: already, or with one export line."""
    if _same_dir(out, loader_dir()):
        source = f"{KERNEL_DIR_ENV} points there" if os.environ.get(KERNEL_DIR_ENV) else "its default"
        return f"the loader reads {out} ({source}); device='cuda' uses them"
    return f"to use them, point the loader at them:\n  export {KERNEL_DIR_ENV}={out}"


# --- checks ---------------------------------------------------------------------------------------


def _defined_symbols(lib: Path) -> set[str] | None:
    """The symbols ``lib``'s dynamic symbol table defines, or None without pyelftools."""
    # Imported here: this file runs as a script with the standard library alone (ci/build-kernels.sh).
    try:
        from elftools.common.exceptions import ELFError
        from elftools.elf.elffile import ELFFile
    except ImportError:
        return None
    try:
        with open(lib, "rb") as handle:
            return {
                symbol.name
                for table in ELFFile(handle).iter_sections("SHT_DYNSYM")
                for symbol in table.iter_symbols()
                if symbol.name and symbol["st_shndx"] != "SHN_UNDEF"
            }
    except (OSError, ELFError) as err:
        raise KernelBuildError(f"could not read the dynamic symbols of the built {lib.name}: {err}") from None


def check_exports(lib: Path, name: str, shown: Path | None = None) -> None:
    """Raise KernelBuildError unless ``lib`` exports every launcher of library ``name``.

    ``shown`` is the path the error names (the final one when ``lib`` is a temporary file).
    """
    shown = shown or lib
    symbols = _defined_symbols(lib)
    if symbols is not None:
        missing = [s for s in LIBRARIES[name] if s not in symbols]
    else:  # no pyelftools: ask the dynamic loader instead
        try:
            handle = ctypes.CDLL(str(lib))
        except OSError as err:
            raise KernelBuildError(f"the built {shown} does not load: {err}") from None
        missing = [s for s in LIBRARIES[name] if not hasattr(handle, s)]
    if missing:
        raise KernelBuildError(f"{shown} does not export {', '.join(missing)}; the build is incomplete")


def _prepare_out(out: Path) -> Path:
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise KernelBuildError(f"cannot create the output directory {out}: {err}; pass --out DIR") from None
    if not _writable(out):
        raise KernelBuildError(f"the output directory {out} is not writable; pass --out DIR")
    return out


def _sources() -> dict[str, Path]:
    sources = {name: SOURCE_DIR / f"{name}.cu" for name in LIBRARIES}
    missing = [str(p) for p in sources.values() if not p.is_file()]
    if missing:
        raise KernelBuildError(
            f"the kernel sources {', '.join(missing)} are missing from this install; "
            'reinstall it: pip install --force-reinstall "torchlight[cuda]"'
        )
    return sources


# --- the two builds -------------------------------------------------------------------------------


def build_nvcc(out: Path, archs: list[str], nvcc: Path | None = None, log=print) -> list[Path]:
    """Build both libraries with nvcc for ``archs`` (SASS each, PTX of the highest) into ``out``."""
    if nvcc is None:
        nvcc, looked = find_nvcc()
        if nvcc is None:
            raise KernelBuildError(
                f"nvcc not found (looked at {', '.join(looked)}). Install the CUDA toolkit or its "
                'wheels (pip install "cuda-toolkit[nvcc]"), or set NVCC=/path/to/nvcc. Without nvcc, '
                f"build the CPU version instead: {COMMAND} --simulator"
            )
    sources = _sources()
    out = _prepare_out(out)
    highest = max(archs, key=lambda a: int(re.sub(r"[a-z]", "", a)))
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    gencode.append(f"-gencode=arch=compute_{highest},code=compute_{highest}")
    built = []
    for index, (name, src) in enumerate(sources.items(), 1):
        lib = out / f"{name}.so"
        log(
            f"build-kernels: [{index}/{len(sources)}] {src} -> {lib} "
            f"(nvcc {nvcc}, archs {';'.join(archs)}, PTX compute_{highest})"
        )
        fd, tmp_name = tempfile.mkstemp(dir=out, prefix=f".{name}.", suffix=".so")
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            cmd = [str(nvcc), "-O3", "-std=c++17", *gencode, "-cudart", "static"]
            cmd += ["-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden", "-shared"]
            cmd += ["-I", str(SOURCE_DIR), "-o", str(tmp), str(src)]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as err:
                raise KernelBuildError(f"cannot run {nvcc}: {err}") from None
            if proc.returncode != 0:
                detail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[:40])
                raise KernelBuildError(f"nvcc failed on {src} (exit {proc.returncode}):\n{detail}")
            check_exports(tmp, name, shown=lib)
            _sync(tmp)
            os.replace(tmp, lib)
        finally:
            tmp.unlink(missing_ok=True)
        built.append(lib)
    return built


def _sync(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def simulator_package():
    """The bundled simulator (``torchlight.simulator``); in a source checkout, its ``simulator/``."""
    try:
        return importlib.import_module("torchlight.simulator")
    except ModuleNotFoundError as err:
        if err.name not in ("torchlight", "torchlight.simulator"):
            raise
    name = "torchlight.simulator"
    if name in sys.modules:
        return sys.modules[name]
    checkout = PACKAGE_DIR.parent / "simulator"
    init = checkout / "__init__.py"
    if not init.is_file():
        raise KernelBuildError(
            "this install has no simulator (torchlight.simulator); reinstall torchlight: "
            "pip install --force-reinstall torchlight"
        )
    # A source checkout run without installing: load simulator/ under the installed name.
    spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(checkout)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


@contextlib.contextmanager
def _simulator_cache(sim) -> Iterator[None]:
    """Keep the simulator's object cache out of site-packages: a user cache unless one is set."""
    in_checkout = Path(sim.__file__).resolve().parent.name == "simulator"
    if os.environ.get("SIMULATOR_CACHE") or in_checkout:
        yield
        return
    os.environ["SIMULATOR_CACHE"] = str(user_cache_dir() / "simulator-cache")
    try:
        yield
    finally:
        del os.environ["SIMULATOR_CACHE"]


def build_simulator(out: Path, log=print) -> list[Path]:
    """Build both libraries for the CPU with the simulator (same launchers, run by fibers)."""
    sources = _sources()
    out = _prepare_out(out)
    sim = simulator_package()
    built = []
    with _simulator_cache(sim):
        for index, (name, src) in enumerate(sources.items(), 1):
            log(
                f"build-kernels: [{index}/{len(sources)}] {src} -> {out / (name + '.so')} "
                "(simulator, C++ compiler on the CPU)"
            )
            try:
                lib = Path(sim.build_shared(src, out, "fast"))
            except sim.SimBuildError as err:
                raise KernelBuildError(f"the simulator build of {src} failed: {err}") from None
            check_exports(lib, name)
            built.append(lib)
    return built


# --- command line ---------------------------------------------------------------------------------


DESCRIPTION = (
    "Build softmax_kernel.so and layernorm_kernel.so from the installed CUDA C sources: with "
    "nvcc for a GPU, or with --simulator for the CPU. Without --out they go where the loader "
    f"looks (${KERNEL_DIR_ENV}, else the package's cuda_kernels/ when writable)."
)


def package_version() -> str:
    """torchlight's version from ``_version.py`` (this file may run as a script, without the package)."""
    return runpy.run_path(str(PACKAGE_DIR / "_version.py"))["__version__"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The command's options, on its own parser or on ``torchlight build-kernels``."""
    p.add_argument("--out", metavar="DIR", help="output directory (default: where the loader looks)")
    p.add_argument(
        "--arch",
        metavar="LIST",
        help=f"SM versions for nvcc, e.g. '80;90' (default ${ARCHS_ENV}, else {DEFAULT_ARCHS})",
    )
    p.add_argument(
        "--simulator", action="store_true", help="build for the CPU with the simulator instead of nvcc"
    )
    p.add_argument(
        "-q", "--quiet", action="store_true", help="no progress lines (the result and the export line stay)"
    )


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=COMMAND, description=DESCRIPTION)
    p.add_argument("--version", action="version", version=f"%(prog)s (torchlight {package_version()})")
    add_arguments(p)
    return p


def main(argv: list[str] | None = None) -> int:
    """Run the build; returns the exit status (0 built, 1 failed, 2 bad arguments)."""
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Build as ``args`` (from ``add_arguments``) say; returns the exit status."""
    try:
        if args.simulator and args.arch:
            raise KernelBuildError("--arch applies to the nvcc build only; drop it with --simulator", 2)
        out = Path(args.out).expanduser() if args.out else default_out_dir()
        if not args.out and not _same_dir(out, loader_dir()):
            print(f"build-kernels: {loader_dir()} is not writable; building into {out} instead")
        start = time.monotonic()
        log = (lambda line: None) if args.quiet else print
        if args.quiet:
            os.environ["SIMULATOR_PROGRESS"] = "0"  # the simulator runtime's build lines too
        if args.simulator:
            build_simulator(out, log)
            kind = "for the CPU (simulator)"
        else:
            if args.arch is not None:
                archs = parse_archs(args.arch, "--arch")
            else:
                archs = parse_archs(os.environ.get(ARCHS_ENV) or DEFAULT_ARCHS, ARCHS_ENV)
            build_nvcc(out, archs, log=log)
            kind = f"with nvcc for sm_{', sm_'.join(archs)}"
        names = " and ".join(f"{name}.so" for name in LIBRARIES)
        print(f"build-kernels: built {names} {kind} in {out} ({time.monotonic() - start:.1f} s)")
        print(f"build-kernels: {_usage_line(out)}")
        return 0
    except KernelBuildError as err:
        print(f"build-kernels: {err}", file=sys.stderr)
        return err.status
    except OSError as err:  # the machine's fault, not named above: a full disk, a folder gone
        print(f"build-kernels: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("build-kernels: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # ci/build-kernels.sh runs this file directly (no numpy needed)
    sys.exit(main())
