"""Compile one source into an object for a build mode (cached by content).

A ``.cu`` source is preprocessed by g++ (the runtime header force-included, line markers kept),
parsed and rewritten by the front end (``transform.py``), and the rewritten preprocessed text is
compiled as ``c++-cpp-output``, with the runtime prelude's precompiled header where it can
(``pch.py``). Host C++ and C sources are compiled as nvcc's host compiler would. An object's key
is a hash of its inputs (preprocessed text, runtime sources, flags, ``__CUDA_ARCH__``, compiler
version, the front end's sources): a hit costs one ``g++ -E`` and no parse, and no ``g++ -E``
either when the source's manifest (``source_manifest.py``) shows that nothing it read has changed.
"""

from __future__ import annotations

import os
import re
import time
from functools import lru_cache
from pathlib import Path

from . import cccl, pch, source_manifest
from .build_cache import cache_dir, cache_key, cache_stem, cached_output, write_new
from .compiler_errors import compile_step, compiles, run_compiler
from .compiler_run import invoke
from .errors import SimBuildError, require_clang
from .linemap import marker_matches
from .modes import BUILD_NAMED, check_build_mode
from .runtime_build import runtime_sources
from .toolchain import (
    PACKAGE_DIR,
    RUNTIME_DIR,
    common_flags,
    compiler,
    compiler_id,
    host_has_fma,
    is_gcc,
    nvcc_macros,
    target_flags,
    target_key,
    toolkit_flags,
    vectorizing_flags,
)

__all__ = [
    "CUDA_SUFFIXES",
    "DEFAULT_ARCH",
    "HOST_CXX_SUFFIXES",
    "HOST_C_SUFFIXES",
    "check_arch",
    "check_defines",
    "compile_translated",
    "kernel_object",
    "preprocess",
    "translate_source",
]

DEFAULT_ARCH = 800  # __CUDA_ARCH__ of the modelled sm_80 device

CUDA_SUFFIXES = (".cu", ".cuh")
HOST_CXX_SUFFIXES = (".cpp", ".cc", ".cxx", ".C", ".c++")
HOST_C_SUFFIXES = (".c",)


def translate_preprocessed(*args, **kwargs) -> str:
    """``transform.translate_preprocessed``: the front end, imported on the first translation."""
    # Its modules (the passes, the PTX tables, block loops) take most of the simulator's import
    # time, and a build whose objects are all cached translates nothing.
    from .transform import translate_preprocessed as translate

    return translate(*args, **kwargs)


def check_arch(arch: int) -> int:
    """``arch`` when it is a ``__CUDA_ARCH__`` value (700, 800, ...); else SimBuildError naming it."""
    if isinstance(arch, bool) or not isinstance(arch, int):
        raise SimBuildError(f"--arch {arch!r}: give __CUDA_ARCH__ as an integer such as 800 (sm_80)")
    if arch < 100 or arch % 10 != 0:
        raise SimBuildError(f"--arch {arch}: not a __CUDA_ARCH__ value; give one such as 700, 800 or 900")
    return arch


_USER_MARKER = re.compile(r'(?m)^# \d+ "([^"]++)"((?: \d)*)$')


@lru_cache(maxsize=4)
def _user_files(pre: str) -> frozenset[str]:
    """The program's own files named by the line markers of ``pre``: the main file and those entered
    without the system flag (no system or runtime header)."""
    # A build asks twice for one text (the preprocessor's pass, then its manifest), and the
    # thousands of markers of a library's headers name a few hundred (file, flags) pairs.
    markers = [m.groups() for m in marker_matches(_USER_MARKER, pre)]
    found = set()
    runtime = str(RUNTIME_DIR)
    # The first marker counts as entered by the program whatever its flags: kept apart.
    for i, (path, flag_text) in enumerate([*markers[:1], *dict.fromkeys(markers[1:])]):
        flags = flag_text.split()
        if (
            "3" not in flags
            and ("1" in flags or i == 0)
            and not path.startswith("<")
            and not path.startswith(runtime)
        ):
            found.add(path)
    return frozenset(found)


# The modules whose code decides what the front end writes (transform.py and what it imports,
# test_build_cache.py checks the list against the imports): a change in any rebuilds every object.
FRONT_END_MODULES = ("cuda_headers.py", "device_launches.py", "edits.py", "errors.py", "linemap.py")
FRONT_END_MODULES += ("refusals.py", "transform.py")
# What the precompiled prelude of the parse uses (syntax_pch.py): where the prelude ends, the cache.
FRONT_END_MODULES += ("build_cache.py", "file_lock.py", "pch.py")
FRONT_END_PATTERNS = ("syntax*.py", "ptx*.py", "block_loops*.py")  # passes, inline PTX, block loops


def front_end_modules() -> list[str]:
    """The file names of the front end's modules, sorted."""
    names = set(FRONT_END_MODULES)
    for pattern in FRONT_END_PATTERNS:
        names |= {p.name for p in PACKAGE_DIR.glob(pattern)}
    return sorted(names)


def _front_end_version() -> str:
    """The front end's sources: a change in any of them rebuilds every object."""
    return "\n".join((PACKAGE_DIR / n).read_text() for n in front_end_modules())


def _listed_preprocess(command: list[str], what: str) -> tuple[str, list[str] | None]:
    """The output of the ``g++ -E`` ``command`` and the include search folders it used, which the
    same run lists with ``-v`` (a manifest needs them: source_manifest.py would run the compiler
    again to ask); None for the folders when the run failed (the message is then that of the
    command as given, without the listing)."""
    run = invoke([command[0], "-v", *command[1:]], what)
    if run.returncode != 0:
        return run_compiler(command, what), None
    return run.stdout, source_manifest.search_list(run.stderr)


def _preprocess(
    cxx: str, path: str, flags: list[str], arch: int, what: str
) -> tuple[str, str | None, list[str] | None]:
    """:func:`preprocess`'s two texts, and the include search folders of its host pass (or None)."""
    require_clang()  # the front end's dependency, checked before any work
    pp = [cxx, *flags, *nvcc_macros(arch), "-include", str(RUNTIME_DIR / "cuda_sim.h"), "-x", "c++"]
    host_pre, search = _listed_preprocess([*pp, "-E", path], what)
    for f in sorted(_user_files(host_pre)):
        if not os.path.isfile(f):
            continue  # the working-folder marker that -g adds
        try:
            tested = "__CUDA_ARCH__" in Path(f).read_text(encoding="utf-8", errors="replace")
        except OSError:
            tested = True
        if tested:
            return host_pre, run_compiler([*pp, f"-D__CUDA_ARCH__={arch}", "-E", path], what), search
    return host_pre, None, search


def preprocess(cxx: str, path: str, flags: list[str], arch: int, what: str) -> tuple[str, str | None]:
    """``g++ -E`` of a .cu source for the front end: the host pass, and the device pass
    (``__CUDA_ARCH__`` defined) when the program's files test it (else None)."""
    host_pre, device_pre, _ = _preprocess(cxx, path, flags, arch, what)
    return host_pre, device_pre


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
    check_build_mode(mode)
    check_arch(arch)
    src = Path(source).resolve()
    if not src.is_file():
        raise SimBuildError(f"{source}: no such source file")
    includes = ["-I", str(src.parent)]
    for d in include_dirs:
        includes += ["-I", str(Path(d).resolve())]
    includes += toolkit_flags()
    cxx = compiler()
    fma = fmad and host_has_fma(cxx)
    # As kernel_object preprocesses: the macro selects the runtime's fused multiply-add code.
    includes += ["-DSIM_DEVICE_FMA"] if fma else []
    flags = common_flags(cxx) + BUILD_NAMED[mode].kernel_flags + includes
    host_pre, device_pre = preprocess(cxx, str(src), flags, arch, str(src))
    unjudged, hoisted = BUILD_NAMED[mode].unjudged_regions, BUILD_NAMED[mode].hoisted_checks
    return translate_preprocessed(
        host_pre, lambda _path: True, device_pre, unchecked_host, fma, unjudged, hoisted=hoisted
    )


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
    check_build_mode(mode)
    check_arch(arch)
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
    stem = cache_stem(src.stem)
    if suffix not in CUDA_SUFFIXES:
        host_build = BUILD_NAMED[mode]
        if unchecked_host and host_build.unchecked_host_build:
            host_build = BUILD_NAMED[host_build.unchecked_host_build]
        host_flags = host_build.kernel_flags
        if suffix in HOST_C_SUFFIXES:
            lang = ["-x", "c", "-std=gnu11"]
            base = [f for f in common_flags(cxx) if not f.startswith("-std=")] + host_flags
        else:
            lang = ["-x", "c++"]
            base = common_flags(cxx) + host_flags
        fixed = (runtime_sources(), compiler_id(cxx), path, target_key(cxx))
        pp = [cxx, *base, *includes, *lang]
        # Named by the build whose flags compile it, not by ``mode``: a host source left unchecked
        # under memcheck is the fast build's object, compiled once for both modes.
        manifest = _manifest(stem, host_build.name, path, pp, fixed)
        if manifest is not None and (hit := source_manifest.lookup(manifest)) is not None:
            return hit
        started = time.time()
        # Keyed by the preprocessed text, so that a change in an included header makes a new key.
        # The CPU's flags compile, but do not preprocess: the text is the same on every machine.
        pre, search = _listed_preprocess([*pp, "-E", path], str(src))
        flags = base + target_flags(cxx) + includes + cccl.compile_flags(host_build.name, pre)
        key = cache_key(pre, fixed[0], " ".join(flags + lang), *fixed[1:])
        out = cache_dir() / f"{stem}-{host_build.name}-{key}.o"
        cached_output(
            out, lambda tmp: compile_step([cxx, *flags, *lang, "-c", path, "-o", str(tmp)], str(src))
        )
        if manifest is not None:
            source_manifest.record(manifest, out, [pre], pp, started, _user_files(pre), search)
        return out
    build = BUILD_NAMED[mode]
    flags = common_flags(cxx) + build.kernel_flags
    # Whether the translation takes them is known once it is made (produce, below); the key holds
    # them and the build's rule, which with the text decide it.
    vector = vectorizing_flags(cxx) if build.vectorize is not None else []
    if fmad and host_has_fma(cxx):
        includes = [*includes, "-DSIM_DEVICE_FMA"]
    # The object's key besides the preprocessed text and the flags.
    fixed = (
        str(arch),
        compiler_id(cxx),
        _front_end_version(),
        "unchecked host" if unchecked_host else "",
        "fma" if fmad and host_has_fma(cxx) else "",
        "unjudged regions" if build.unjudged_regions else "",
        "hoisted checks" if build.hoisted_checks else "",
        f"vectorize {build.vectorize!r}",
        target_key(cxx),
    )
    pp = [cxx, *flags, *includes, "-x", "c++"]
    macros = [*nvcc_macros(arch), "-include", str(RUNTIME_DIR / "cuda_sim.h")]
    manifest = _manifest(stem, mode, path, [*pp, *macros], (runtime_sources(), *fixed))
    require_clang()  # the front end's dependency, named before any build as when nothing is cached
    if manifest is not None and (hit := source_manifest.lookup(manifest)) is not None:
        return hit
    started = time.time()
    host_pre, device_pre, search = _preprocess(cxx, path, flags + includes, arch, str(src))
    after = target_flags(cxx) + cccl.compile_flags(mode, host_pre) + list(extra_flags)
    key = cache_key(host_pre, device_pre or "", runtime_sources(), " ".join(flags + vector + after), *fixed)
    out = cache_dir() / f"{stem}-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        fma = fmad and host_has_fma(cxx)
        text = translate_preprocessed(
            host_pre,
            lambda _path: True,
            device_pre,
            unchecked_host,
            fma,
            build.unjudged_regions,
            hoisted=build.hoisted_checks,
        )
        chosen = vector if build.vectorizes(text) else []
        compile_translated(cxx, [*flags, *chosen, *after, "-fpermissive"], text, tmp, str(src))

    cached_output(out, produce)
    if manifest is not None:
        texts = [host_pre, device_pre or ""]
        source_manifest.record(manifest, out, texts, pp, started, _user_files(host_pre), search)
    return out


# Flags that make the preprocessor read a file its output does not name (a response file, -imacros):
# a source compiled with one is always preprocessed.
_UNNAMED_READS = ("@", "-imacros", "-specs", "--specs")


def _manifest(stem: str, mode: str, path: str, command: list[str], fixed: tuple[str, ...]) -> Path | None:
    """The manifest (source_manifest.py) of the source ``path`` preprocessed by ``command`` (``fixed``:
    the object key's parts besides the text and the flags), or None when it cannot have one."""
    if any(arg.startswith(_UNNAMED_READS) for arg in command[1:]):
        return None
    key = source_manifest.manifest_key(path, " ".join(command), *fixed)
    return cache_dir() / f"{stem}-{mode}-{key}.deps"


def compile_translated(cxx: str, flags: list[str], text: str, out: Path, what: str) -> None:
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
            if compiles(args, what):
                return
        finally:
            main.unlink(missing_ok=True)
    translated = out.with_name(out.name + ".sim.ii")
    write_new(translated, text.encode("utf-8", "surrogateescape"))
    try:
        compile_step([cxx, *flags, "-x", "c++-cpp-output", "-c", str(translated), "-o", str(out)], what)
    finally:
        translated.unlink(missing_ok=True)


def _prelude_header(cxx: str, flags: list[str], parts: pch.Split) -> Path | None:
    """The precompiled header of ``parts.prelude`` for a compile with ``flags`` (built once per
    content, flags and compiler, in the cache); None where g++'s precompiled headers cannot be
    used (another compiler, a cache path a pragma cannot name) or the prelude does not compile."""
    if not is_gcc(cxx):
        return None
    folder = cache_dir()
    if not pch.usable_path(folder):
        return None
    # The flags whole: g++ would load a header built with other optimisation or sanitizer flags.
    out = folder / f"prelude-{cache_key(parts.prelude, ' '.join(flags), compiler_id(cxx))}.gch"

    def produce(tmp: Path) -> None:
        prelude = tmp.with_name(tmp.name + ".ii")
        write_new(prelude, parts.prelude.encode("utf-8", "surrogateescape"))
        try:
            args = [cxx, *flags, "-fpreprocessed", "-x", "c++-header", str(prelude), "-o", str(tmp)]
            compile_step(args, "the runtime's precompiled header")
        finally:
            prelude.unlink(missing_ok=True)

    try:
        return cached_output(out, produce)
    except SimBuildError:
        return None  # the whole text's compile says what is wrong, in the program's terms
