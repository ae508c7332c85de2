"""The simulator's own objects, compiled once per build mode into the cache: the runtime
(``runtime/*.cpp``), its implementations of NVIDIA's libraries (``runtime/libs/``) and the
supervisor that runs every program (``reaper.cpp``)."""

from __future__ import annotations

import contextvars
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import toolkit_index
from .build_cache import cache_dir, cache_key, cached_output, write_new
from .compiler_errors import LIBRARIES_HINT, compile_step
from .errors import SimBuildError
from .host import cpu_count
from .modes import BUILD_NAMED, check_build_mode
from .progress import Progress
from .toolchain import (
    PACKAGE_DIR,
    RUNTIME_DIR,
    common_flags,
    compiler,
    compiler_id,
    toolkit_flags,
    toolkit_include,
)

__all__ = [
    "LIBRARIES",
    "library_object",
    "reaper_program",
    "runtime_flags",
    "runtime_object",
    "runtime_sources",
    "runtime_units",
    "unit_text",
]


def _build_jobs() -> int:
    """How many compilers a runtime build runs at once: the CPUs this process may use."""
    return cpu_count()


def _runtime_cpp() -> list[Path]:
    """The runtime's sources, compiled into one object per mode."""
    return sorted(RUNTIME_DIR.glob("*.cpp"))


def runtime_sources() -> str:
    """The runtime's sources and headers, named and whole: a part of every cached object's key."""
    paths = sorted(RUNTIME_DIR.glob("*.h")) + _runtime_cpp() + sorted(RUNTIME_DIR.glob("include/**/*.h*"))
    return "\n".join(f"{p.relative_to(RUNTIME_DIR)}\n{p.read_text()}" for p in paths)


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


def unit_text(group: list[Path]) -> str:
    """One translation unit that includes the runtime sources of ``group``."""
    return "".join(f'#include "{src}"\n' for src in group)


def runtime_flags(cxx: str, mode: str) -> list[str]:
    """The flags of every compile of the runtime's sources for ``mode``."""
    # Hidden: a simulated library exports its own launchers only, never the runtime's cuda* calls
    # (which NVIDIA's headers declare with default visibility).
    return (
        common_flags(cxx)
        + BUILD_NAMED[mode].runtime_flags
        + ["-fvisibility=hidden", "-I", str(RUNTIME_DIR), "-I", str(_generated_dir())]
        + toolkit_flags()
    )


def runtime_object(mode: str) -> Path:
    """The runtime compiled for ``mode`` (cached)."""
    check_build_mode(mode)
    cxx = compiler()
    flags = runtime_flags(cxx, mode)
    key = cache_key(runtime_sources(), " ".join(flags), compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_runtime-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        # One group of sources per CPU, each group one compiler run (a cold cache builds several
        # modes' runtimes), then one relocatable object that links like a single file.
        groups = runtime_units(_build_jobs())
        units = [tmp.with_name(f"{tmp.name}.unit{i}.cpp") for i in range(len(groups))]
        parts = [unit.with_suffix(".o") for unit in units]

        def compile_one(unit: Path, part: Path) -> None:
            compile_step(
                [cxx, *flags, "-c", str(unit), "-o", str(part)], f"the runtime ({mode}, {unit.name})"
            )

        try:
            for unit, group in zip(units, groups):
                write_new(unit, unit_text(group).encode())
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
            compile_step(joined, f"the runtime ({mode}, link)")
            shown.step()
        finally:
            for path in units + parts:
                path.unlink(missing_ok=True)

    return cached_output(out, produce)


# NVIDIA's libraries the simulator implements (runtime/libs/): each is its own object per mode,
# built when a program calls into it, from the library's sources (which need its headers: the
# simulator-libs extra's wheels). name -> (sources, symbol prefixes, header its calls are declared in).
LIBRARIES = {
    "cublas": (("libs/cublas.cpp", "libs/cublaslt.cpp"), ("cublas",), "cublas_api.h"),
    "curand": (("libs/curand.cpp",), ("curand",), "curand.h"),
}


def library_object(name: str, mode: str) -> Path:
    """The simulator's implementation of NVIDIA's library ``name`` for ``mode`` (cached)."""
    check_build_mode(mode)
    sources, _, header = LIBRARIES[name]
    if not (toolkit_include() / header).is_file():
        raise SimBuildError(
            f"the program calls {name}, whose header <{header}> is not installed: {LIBRARIES_HINT}"
        )
    cxx = compiler()
    flags = runtime_flags(cxx, mode)
    paths = [RUNTIME_DIR / src for src in sources]
    text = "".join(p.read_text() for p in sorted(RUNTIME_DIR.glob("libs/*")))
    key = cache_key(runtime_sources(), text, " ".join(flags), compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_{name}-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        unit = tmp.with_name(tmp.name + ".cpp")
        unit.write_text(unit_text(paths))
        try:
            compile_step([cxx, *flags, "-c", str(unit), "-o", str(tmp)], f"the simulator's {name} ({mode})")
        finally:
            unit.unlink(missing_ok=True)

    return cached_output(out, produce)


REAPER_SOURCE = PACKAGE_DIR / "reaper.cpp"


def reaper_program() -> Path:
    """The supervisor that runs every program of ``run`` and ``check`` and every compiler run
    (``reaper.cpp``; Linux), compiled once per compiler into the cache."""
    cxx = compiler()
    flags = ["-O2", "-std=gnu++17", "-x", "c++"]
    source = REAPER_SOURCE.read_text()
    out = cache_dir() / f"reaper-{cache_key(source, ' '.join(flags), compiler_id(cxx))}"

    def produce(tmp: Path) -> None:
        compile_step(
            [cxx, *flags, str(REAPER_SOURCE), "-o", str(tmp)], "the supervisor of programs (reaper.cpp)"
        )
        os.chmod(tmp, 0o700)

    return cached_output(out, produce)
