"""The simulator's own objects, compiled into the cache: the runtime (``runtime/*.cpp``), its
implementations of NVIDIA's libraries (``runtime/libs/``) and the supervisor that runs every
program (``reaper.cpp``).

The runtime and the libraries are never instrumented, and most of their sources do not depend on
the build's mode: only the sources marked ``// sim-runtime: per mode`` (those that test the mode's
macro, ``SIM_MEMCHECK``, ...) are compiled once per mode. The others are compiled once for every
build whose runtime flags differ only in that macro (fast, synccheck and the shared-memory race
check share theirs; memcheck and racecheck theirs), in units that start with ``mode_free.h``,
which poisons the mode's macros, so a source whose text would depend on the mode fails to compile
there instead of being shared. Each mode's runtime object links its own part with the shared one.

Of the mode-free sources, those marked ``// sim-runtime: cold`` (code that runs seldom: the driver
API, graphs, environment knobs, launch filters, messages; the mark is their last line, so that no
line number of the runtime moves) are compiled once for every build, with the checkers' runtime
options (``-O1``, frame pointers kept): the checkers' runtimes hold the code they held before, and
the builds that compile the rest at ``-O2`` take this code less optimised rather than compiling it
a second time (``launch_filter.cpp``'s ``std::regex`` alone takes g++ seconds). The shared part of
each set of runtime options links its own units with that object.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable
from dataclasses import dataclass
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
    "COLD_MARK",
    "LIBRARIES",
    "PER_MODE_MARK",
    "cold",
    "cold_object",
    "library_object",
    "mode_free_flags",
    "mode_free_object",
    "per_mode",
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


# The line that marks a source of the runtime or its libraries as compiled once per mode.
PER_MODE_MARK = "// sim-runtime: per mode"
# What the mode-free units include first: it poisons the mode's macros.
_MODE_FREE_HEADER = "mode_free.h"


# The line that marks a mode-free source of the runtime as cold: compiled once for every build.
COLD_MARK = "// sim-runtime: cold"
# The build whose runtime options compile the cold sources for every build. The checkers' runtimes
# are compiled -O1 with frame pointers (their sanitizers' reports unwind through the runtime's
# frames): taking theirs leaves their code as it was, where -O2 would change their reports' stacks.
_COLD_BUILD = "memcheck"


def _marked(src: Path, mark: str) -> bool:
    return any(line.rstrip() == mark for line in src.read_text().splitlines())


def per_mode(src: Path) -> bool:
    """Whether ``src`` is compiled once per mode (it carries :data:`PER_MODE_MARK`)."""
    return _marked(src, PER_MODE_MARK)


def cold(src: Path) -> bool:
    """Whether the mode-free source ``src`` is compiled once for every build (:data:`COLD_MARK`)."""
    return not per_mode(src) and _marked(src, COLD_MARK)


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


def runtime_units(count: int, sources: list[Path] | None = None) -> list[list[Path]]:
    """The runtime's sources (or ``sources``) in ``count`` groups of about equal size (fewer when
    there are fewer sources), each compiled as one translation unit: the headers every source
    includes are parsed once a group, not once a source (the sources keep no file-local name that
    another reuses, so any grouping compiles; a test builds them all as one unit)."""
    sizes = {src: src.stat().st_size for src in (_runtime_cpp() if sources is None else sources)}
    groups: list[list[Path]] = [[] for _ in range(max(1, min(count, len(sizes))))]
    loads = [0] * len(groups)
    for src in sorted(sizes, key=lambda s: (-sizes[s], s.name)):
        least = loads.index(min(loads))
        groups[least].append(src)
        loads[least] += sizes[src]
    return [sorted(g) for g in groups]


def unit_text(group: list[Path], mode_free: bool = False) -> str:
    """One translation unit that includes the runtime sources of ``group`` (``mode_free``: after
    ``mode_free.h``, for sources compiled once for several modes)."""
    first = [f'#include "{_MODE_FREE_HEADER}"\n'] if mode_free else []
    return "".join(first + [f'#include "{src}"\n' for src in group])


def _flags(cxx: str, own: list[str]) -> list[str]:
    # Hidden: a simulated library exports its own launchers only, never the runtime's cuda* calls
    # (which NVIDIA's headers declare with default visibility) nor its internals (SIM_RUNTIME_BUILD:
    # sim_device.h's SIM_API).
    return (
        common_flags(cxx)
        + own
        + ["-fvisibility=hidden", "-DSIM_RUNTIME_BUILD", "-I", str(RUNTIME_DIR), "-I", str(_generated_dir())]
        + toolkit_flags()
    )


def runtime_flags(cxx: str, mode: str) -> list[str]:
    """The flags of every compile of the runtime's per-mode sources for ``mode``."""
    return _flags(cxx, BUILD_NAMED[mode].runtime_flags)


def mode_free_flags(cxx: str, mode: str) -> list[str]:
    """The flags of the runtime's mode-free sources in ``mode``'s runtime: its flags without the
    mode's macro, the same for every mode whose runtime options are the same."""
    return _flags(cxx, list(BUILD_NAMED[mode].runtime_options))


@dataclass(frozen=True)
class _Units:
    """Groups of sources, each compiled as one unit with ``flags``, and linked into one object."""

    name: str  # what it is, as progress lines and errors name it ("the runtime") ...
    detail: str  # ... with which build, in parentheses: "fast", "mode-free part: fast, synccheck, ..."
    flags: list[str]
    groups: list[list[Path]]
    mode_free: bool

    def build(self, cxx: str, tmp: Path, also: Callable[[], list[Path]] = list) -> None:
        """Compile the groups at once and link them, with the objects ``also`` returns (called
        once they are compiled), into the one relocatable object ``tmp``."""
        from concurrent.futures import ThreadPoolExecutor

        units = [tmp.with_name(f"{tmp.name}.unit{i}.cpp") for i in range(len(self.groups))]
        parts = [unit.with_suffix(".o") for unit in units]

        def compile_one(unit: Path, part: Path) -> None:
            compile_step(
                [cxx, *self.flags, "-c", str(unit), "-o", str(part)],
                f"{self.name} ({self.detail}, {unit.name})",
            )

        try:
            for unit, group in zip(units, self.groups):
                write_new(unit, unit_text(group, self.mode_free).encode())
            # A cold build takes a minute or more per mode: say which and how far (compiles and link).
            count = len(self.groups)
            shown = Progress(
                f"simulator: building {self.name} ({self.detail}, {count} compiles + link)", count + 1
            )
            with ThreadPoolExecutor(max_workers=max(1, count)) as jobs:
                # Each job runs in a copy of this context (the compiler runs' time allowance).
                runs = [
                    jobs.submit(contextvars.copy_context().run, compile_one, unit, part)
                    for unit, part in zip(units, parts)
                ]
                for run in runs:
                    run.add_done_callback(lambda done: done.exception() is None and shown.step())
                for run in runs:  # waits for every compiler and raises the first failure, in group order
                    run.result()
            joined = [cxx, "-r", "-nostdlib", *map(str, parts + also()), "-o", str(tmp)]
            compile_step(joined, f"{self.name} ({self.detail}, link)")
            shown.step()
        finally:
            for path in units + parts:
                path.unlink(missing_ok=True)


def _sharing(mode: str) -> list[str]:
    """The builds whose runtimes share ``mode``'s mode-free part (the same runtime options)."""
    options = BUILD_NAMED[mode].runtime_options
    return [name for name, b in BUILD_NAMED.items() if b.runtime_options == options]


def _cold_flags(cxx: str) -> list[str]:
    """The flags of the runtime's cold sources, the same for every build."""
    return mode_free_flags(cxx, _COLD_BUILD)


def cold_object() -> Path:
    """The runtime's cold sources (:func:`cold`) compiled once for every build (cached)."""
    cxx = compiler()
    flags = _cold_flags(cxx)
    key = cache_key(runtime_sources(), " ".join(flags), compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_runtime-cold-{key}.o"

    def produce(tmp: Path) -> None:
        sources = [src for src in _runtime_cpp() if cold(src)]
        groups = runtime_units(_build_jobs(), sources)
        _Units("the runtime", "cold part: every mode", flags, groups, True).build(cxx, tmp)

    return cached_output(out, produce)


def mode_free_object(mode: str) -> Path:
    """The runtime's mode-free sources compiled for ``mode``'s runtime (cached; the same object
    for every mode whose :func:`mode_free_flags` are the same): its own units, linked with
    :func:`cold_object`."""
    check_build_mode(mode)
    cxx = compiler()
    flags = mode_free_flags(cxx, mode)
    parts = (runtime_sources(), " ".join(flags), " ".join(_cold_flags(cxx)))
    key = cache_key(*parts, compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_runtime-mode-free-{key}.o"

    def produce(tmp: Path) -> None:
        from concurrent.futures import ThreadPoolExecutor

        sources = [src for src in _runtime_cpp() if not per_mode(src) and not cold(src)]

        # The cold part (often cached by the other set of options) builds beside these units; they
        # come first in the link, so that where both hold a copy of an inline function, the one
        # compiled with these options is the one kept.
        with ThreadPoolExecutor(max_workers=1) as job:
            shared = job.submit(contextvars.copy_context().run, cold_object)
            detail = f"mode-free part: {', '.join(_sharing(mode))}"
            own = _Units("the runtime", detail, flags, runtime_units(_build_jobs(), sources), True)
            own.build(cxx, tmp, also=lambda: [shared.result()])

    return cached_output(out, produce)


def runtime_object(mode: str) -> Path:
    """The runtime compiled for ``mode`` (cached): its per-mode sources and the mode-free ones."""
    check_build_mode(mode)
    cxx = compiler()
    flags = runtime_flags(cxx, mode)
    parts = (runtime_sources(), " ".join(flags), " ".join(_cold_flags(cxx)))
    key = cache_key(*parts, compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / f"sim_runtime-{mode}-{key}.o"

    def produce(tmp: Path) -> None:
        from concurrent.futures import ThreadPoolExecutor

        # The mode-free part (often cached by another mode) builds beside this mode's own groups,
        # one group of sources per CPU each, each group one compiler run (a cold cache builds
        # several modes' runtimes); then one relocatable object that links like a single file.
        with ThreadPoolExecutor(max_workers=1) as job:
            shared = job.submit(contextvars.copy_context().run, mode_free_object, mode)
            groups = runtime_units(_build_jobs(), [src for src in _runtime_cpp() if per_mode(src)])
            own = _Units("the runtime", mode, flags, groups, False)
            own.build(cxx, tmp, also=lambda: [shared.result()])

    return cached_output(out, produce)


# NVIDIA's libraries the simulator implements (runtime/libs/): each is its own object per mode
# (shared by modes as the runtime's mode-free part is, unless a source is marked per mode), built
# when a program calls into it, from the library's sources (which need its headers: the
# simulator-libs extra's wheels). name -> (sources, symbol prefixes, header its calls are declared in).
LIBRARIES = {
    "cublas": (("libs/cublas.cpp", "libs/cublaslt.cpp"), ("cublas",), "cublas_api.h"),
    "curand": (("libs/curand.cpp",), ("curand",), "curand.h"),
}


def library_object(name: str, mode: str) -> Path:
    """The simulator's implementation of NVIDIA's library ``name`` for ``mode`` (cached; unless a
    source of it is marked per mode, the same object for every mode whose runtime options are the
    same, as the runtime's mode-free part)."""
    check_build_mode(mode)
    sources, _, header = LIBRARIES[name]
    if not (toolkit_include() / header).is_file():
        raise SimBuildError(
            f"the program calls {name}, whose header <{header}> is not installed: {LIBRARIES_HINT}"
        )
    cxx = compiler()
    paths = [RUNTIME_DIR / src for src in sources]
    mode_free = not any(per_mode(p) for p in paths)
    flags = mode_free_flags(cxx, mode) if mode_free else runtime_flags(cxx, mode)
    text = "".join(p.read_text() for p in sorted(RUNTIME_DIR.glob("libs/*")))
    key = cache_key(runtime_sources(), text, " ".join(flags), compiler_id(cxx), toolkit_include().name)
    out = cache_dir() / (f"sim_{name}-mode-free-{key}.o" if mode_free else f"sim_{name}-{mode}-{key}.o")

    def produce(tmp: Path) -> None:
        unit = tmp.with_name(tmp.name + ".cpp")
        unit.write_text(unit_text(paths, mode_free))
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
