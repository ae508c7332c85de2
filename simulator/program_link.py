"""Link a program or library from its objects, the runtime, the simulator's libraries it calls
and stubs of the CUDA functions nothing defines (each link cached): ``build_shared`` (a library
with the launchers nvcc's build exports), ``build_executable`` (``check``'s driver of an entry)
and ``build_program`` (``run``'s whole program)."""

from __future__ import annotations

import os
import re
import shutil
from functools import cache
from pathlib import Path

from . import link_stubs, modules, toolkit_index
from .build_cache import cache_dir, cache_key, cache_stem, cached_output, recorded_digest, write_new
from .compiler_errors import compile_step
from .compiler_probe import probe
from .errors import SimBuildError
from .linker_probe import fast_linker_flags, link_step
from .modes import BUILD_NAMED, check_build_mode
from .runtime_build import LIBRARIES, library_object, runtime_object
from .source_compile import DEFAULT_ARCH, kernel_object
from .toolchain import common_flags, compiler, compiler_id, toolkit_include

__all__ = [
    "build_executable",
    "build_program",
    "build_shared",
    "link_flags",
    "library_objects",
    "object_symbols",
    "stub_object",
    "stub_objects",
    "system_symbols",
]


def link_flags(mode: str) -> list[str]:
    """The flags a link of objects built for ``mode`` needs (the sanitizer's runtime)."""
    check_build_mode(mode)
    return list(BUILD_NAMED[mode].link_flags)


# The libraries every link takes besides the objects: what they export is never stubbed.
_SYSTEM_LIBRARIES = ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1")


@cache
def system_symbols(cxx: str) -> frozenset[str]:
    """What the C, math and C++ libraries the compiler links with export (cached in the cache folder)."""
    paths = []
    for name in _SYSTEM_LIBRARIES:
        found = probe([cxx, f"-print-file-name={name}"], f"a search for {name}").stdout.strip()
        if found and os.path.isabs(found) and os.path.isfile(found):
            paths.append(Path(found).resolve())
    key = cache_key(*(f"{p}:{p.stat().st_mtime_ns}" for p in paths))
    record = cache_dir() / f"system-symbols-{key}.txt"

    def produce(tmp: Path) -> None:
        names: set[str] = set()
        for p in paths:
            names |= link_stubs.exported(p)
        tmp.write_text("\n".join(sorted(names)))

    return frozenset(cached_output(record, produce).read_text().split())


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
    flags = [*common_flags(cxx), "-O1", "-fvisibility=hidden"]
    key = cache_key(link_stubs.stub_key(names), inc.name, " ".join(flags), compiler_id(cxx))
    out = cache_dir() / f"stubs-{key}.o"

    def produce(tmp: Path) -> None:
        source = tmp.with_name(tmp.name + ".cpp")
        source.write_text(
            link_stubs.stub_source(names, declared, lambda s: toolkit_index.status_value(inc, s))
        )
        try:
            compile_step(
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
    key = cache_key(obj.name, rt.name, *(s.name for s in libs + stubs), "shared", *fast_linker_flags(cxx))
    cached = cache_dir() / f"{obj.stem}-{key}.so"
    cached_output(
        cached,
        lambda tmp: link_step(
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
    tmp = dest_dir / f".sim-{os.urandom(6).hex()}.so.tmp"
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
    key = cache_key(
        *(o.name for o in objs),
        rt.name,
        *(s.name for s in libs + stubs),
        main_src,
        mode,
        *fast_linker_flags(cxx),
    )
    out = cache_dir() / f"check-{cache_stem(entry)}-{mode}-{key}"

    def produce(tmp: Path) -> None:
        main_path = tmp.with_name(tmp.name + ".main.cpp")
        write_new(main_path, main_src.encode())
        try:
            link_step(
                [
                    cxx,
                    *common_flags(cxx),
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
    # A program that loads driver API modules exports its runtime, which the modules' kernels call.
    rt, export = modules.runtime_link(rt, set().union(*(object_symbols(o)[1] for o in objs)))
    cxx = compiler()
    key = cache_key(
        *(o.name for o in objs),
        rt.name,
        *(s.name for s in libs + stubs),
        mode,
        "program",
        *fast_linker_flags(cxx),
    )
    stem = cache_stem(Path(sources[0]).stem)
    out = cache_dir() / f"program-{stem}-{mode}-{key}"

    def produce(tmp: Path) -> None:
        link_step(
            [
                cxx,
                *common_flags(cxx),
                "-O1",
                *BUILD_NAMED[mode].link_flags,
                *export,
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
