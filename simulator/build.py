"""Compile translated CUDA sources with g++ into shared objects or check executables.

Every artefact is cached by a hash of its inputs (translated source, runtime sources, flags,
compiler version) under ``build/simulator-cache`` (or ``$SIMULATOR_CACHE``), so repeated
builds and test runs on a busy machine cost one compile each.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from .transform import SimBuildError, find_unsupported, translate

__all__ = ["MODES", "SimBuildError", "build_shared", "build_executable", "cache_dir", "compiler"]

PACKAGE_DIR = Path(__file__).resolve().parent
RUNTIME_DIR = PACKAGE_DIR / "runtime"
REPO_ROOT = PACKAGE_DIR.parent

MODES = ("fast", "memcheck", "racecheck", "synccheck")

# Flags for the translated kernel source (instrumented) and for the runtime (never instrumented:
# its scheduler state is shared between fibers by design).
_KERNEL_FLAGS = {
    "fast": ["-O2"],
    "synccheck": ["-O1", "-DSIM_SYNCCHECK"],
    "memcheck": [
        "-O1",
        "-fno-omit-frame-pointer",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=undefined",
    ],
    "racecheck": ["-O1", "-fno-omit-frame-pointer", "-fsanitize=thread"],
}
_RUNTIME_FLAGS = {
    "fast": ["-O2"],
    "synccheck": ["-O2", "-DSIM_SYNCCHECK"],
    "memcheck": ["-O1", "-fno-omit-frame-pointer", "-DSIM_MEMCHECK"],
    "racecheck": ["-O1", "-fno-omit-frame-pointer", "-DSIM_RACECHECK"],
}
_LINK_FLAGS = {
    "fast": [],
    "synccheck": [],
    "memcheck": ["-fsanitize=address,undefined"],
    "racecheck": ["-fsanitize=thread"],
}
_COMMON = ["-std=gnu++17", "-g", "-fPIC", "-pthread"]


def compiler() -> str:
    """The C++ compiler: ``$CXX`` when set, else the first of g++, c++, clang++ on PATH."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not cxx:
        raise SimBuildError("no C++ compiler: install g++ (apt-get install g++) or set CXX to one")
    return cxx


@cache
def _compiler_id(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SimBuildError(f"cannot run the C++ compiler '{cxx}': {exc}") from exc
    return out.splitlines()[0] if out else cxx


def cache_dir() -> Path:
    """Where built objects are cached (``$SIMULATOR_CACHE`` or ``build/simulator-cache``)."""
    d = Path(os.environ.get("SIMULATOR_CACHE") or REPO_ROOT / "build" / "simulator-cache")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise SimBuildError(f"unknown mode '{mode}': choose one of {', '.join(MODES)}")


def _hash(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def _runtime_cpp() -> list[Path]:
    """The runtime's sources, compiled into one object per mode."""
    return sorted(RUNTIME_DIR.glob("*.cpp"))


def _runtime_sources() -> str:
    paths = sorted(RUNTIME_DIR.glob("*.h")) + _runtime_cpp() + sorted(RUNTIME_DIR.glob("include/**/*.h*"))
    return "\n".join(f"{p.relative_to(RUNTIME_DIR)}\n{p.read_text()}" for p in paths)


def _run_compiler(args: list[str], what: str) -> str:
    env = dict(os.environ, LC_ALL="C")  # plain ASCII quotes in diagnostics
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SimBuildError(_explain_compiler_error(what, proc.stderr))
    return proc.stdout


def _compile(args: list[str], what: str) -> None:
    _run_compiler(args, what)


def _explain_compiler_error(what: str, stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.search(r"\berror\b", ln)]
    hint = ""
    for ln in errors:
        m = re.search(r"(\S+?):(\d+):\d+: fatal error: (\S+): No such file or directory", ln)
        if m:
            hint = (
                f"\n{m.group(1)}:{m.group(2)}: unsupported header <{m.group(3)}>: the simulator does not "
                "provide it (see simulator/README.md)"
            )
            break
        m = re.search(r"['\u2018]([A-Za-z_]\w*)['\u2019] was not declared in this scope", ln) or re.search(
            r"['\u2018]([A-Za-z_]\w*)['\u2019] (?:does not name a type|has not been declared)", ln
        )
        if m:
            hint = (
                f"\n'{m.group(1)}' is not provided by the simulator (unsupported CUDA API or a missing "
                "declaration); see simulator/README.md for what is supported"
            )
            break
    shown = "\n".join(lines[:40])
    return f"g++ could not compile {what}:{hint}\n{shown}"


def _atomic_output(final: Path, produce) -> Path:
    """Run ``produce(tmp_path)`` and move the result to ``final`` (safe with parallel builders).

    A lock file makes a second builder of the same artefact (another pytest worker) wait for
    the first instead of compiling it again; the rename keeps readers from seeing half a file.
    """
    if final.exists():
        return final
    with open(final.with_name(final.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if final.exists():
            return final
        fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=final.name + ".", suffix=final.suffix)
        os.close(fd)
        try:
            produce(Path(tmp))
            os.replace(tmp, final)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return final


def runtime_object(mode: str) -> Path:
    """The runtime compiled for ``mode`` (cached)."""
    _check_mode(mode)
    cxx = compiler()
    flags = _COMMON + _RUNTIME_FLAGS[mode] + ["-I", str(RUNTIME_DIR)]
    key = _hash(_runtime_sources(), " ".join(flags), _compiler_id(cxx))
    out = cache_dir() / f"sim_runtime-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        # Each source to its own object, then one relocatable object that links like a single file.
        parts = []
        try:
            for src in _runtime_cpp():
                part = tmp.with_name(f"{tmp.name}.{src.stem}.o")
                parts.append(part)
                _compile([cxx, *flags, "-c", str(src), "-o", str(part)], f"the runtime ({mode}, {src.name})")
            joined = [cxx, "-r", "-nostdlib", *map(str, parts), "-o", str(tmp)]
            _compile(joined, f"the runtime ({mode}, link)")
        finally:
            for part in parts:
                part.unlink(missing_ok=True)

    return _atomic_output(out, produce)


def kernel_object(source: str | os.PathLike, mode: str) -> Path:
    """Translate and compile one ``.cu`` source for ``mode`` (cached by content)."""
    _check_mode(mode)
    src = Path(source)
    if not src.is_file():
        raise SimBuildError(f"{src}: no such source file")
    text, files = translate(str(src))
    cxx = compiler()
    flags = (
        _COMMON
        + _KERNEL_FLAGS[mode]
        + ["-I", str(RUNTIME_DIR / "include"), "-I", str(src.resolve().parent), "-include", "cuda_sim.h"]
        + ["-I", str(RUNTIME_DIR)]
    )
    key = _hash(text, _runtime_sources(), " ".join(flags), _compiler_id(cxx))
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", src.stem)
    translated = cache_dir() / f"{stem}-{key}.sim.cpp"
    if not translated.exists():
        _atomic_output(translated, lambda tmp: tmp.write_text(text))
    out = cache_dir() / f"{stem}-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        pre = _run_compiler([cxx, *flags, "-x", "c++", "-E", str(translated)], str(src))
        problem = find_unsupported(pre, set(files))
        if problem is not None:
            raise problem
        _compile([cxx, *flags, "-x", "c++", "-c", str(translated), "-o", str(tmp)], str(src))

    return _atomic_output(out, produce)


def build_shared(source: str | os.PathLike, out_dir: str | os.PathLike, mode: str = "fast") -> Path:
    """Build ``source`` into ``out_dir/<stem>.so`` exporting the same launchers as nvcc's build."""
    obj = kernel_object(source, mode)
    rt = runtime_object(mode)
    cxx = compiler()
    key = _hash(obj.name, rt.name, "shared")
    cached = cache_dir() / f"{obj.stem}-{key}.so"
    _atomic_output(
        cached,
        lambda tmp: _compile(
            [cxx, "-shared", "-pthread", *_LINK_FLAGS[mode], str(obj), str(rt), "-o", str(tmp)],
            f"{source} (link)",
        ),
    )
    dest_dir = Path(out_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / (Path(source).stem + ".so")
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.copyfile(cached, tmp)
    os.replace(tmp, dest)
    return dest


_MAIN = """
#include <cstdio>
extern "C" int {entry}(void);
int main() {{
    int rc = {entry}();
    if (rc != 0) std::fprintf(stderr, "simulator: entry '{entry}' returned %d\\n", rc);
    return rc == 0 ? 0 : 3;
}}
"""


def build_executable(sources: list[str | os.PathLike], entry: str, mode: str) -> Path:
    """Link ``sources`` with a ``main`` that calls ``extern "C" int entry(void)`` (cached)."""
    if not re.fullmatch(r"[A-Za-z_]\w*", entry):
        raise SimBuildError(f"--entry '{entry}' is not a C identifier")
    objs = [kernel_object(s, mode) for s in sources]
    rt = runtime_object(mode)
    cxx = compiler()
    main_src = _MAIN.format(entry=entry)
    key = _hash(*(o.name for o in objs), rt.name, main_src, mode)
    out = cache_dir() / f"check-{entry}-{mode}-{key}"

    def produce(tmp: Path) -> None:
        main_path = cache_dir() / f"main-{key}.cpp"
        main_path.write_text(main_src)
        try:
            _compile(
                [
                    cxx,
                    *_COMMON,
                    "-O1",
                    *_LINK_FLAGS[mode],
                    str(main_path),
                    *map(str, objs),
                    str(rt),
                    "-o",
                    str(tmp),
                ],
                f"the check executable for entry '{entry}' (is it extern \"C\" int {entry}(void)?)",
            )
            os.chmod(tmp, 0o755)
        finally:
            main_path.unlink(missing_ok=True)

    return _atomic_output(out, produce)
