"""The simulator's modes in one table: how each is built, run and judged.

A *build* (:class:`Build`) is one way to compile kernels and the runtime: the compiler and
sanitizer flags, the link flags, and the macro that the runtime's mode code tests
(``runtime/mode_hooks.h`` and the checkers' sources). A *mode* (:class:`Mode`) is what a user
names (``--mode``, ``SIMULATOR_MODE``): the build ``check`` and the builds ``run`` use for it,
the environment of the child in each, the statuses by which its sanitizer stops a program and
the parser of its reports. The build, ``run``, ``check``, the command line and the child's
environment (``sanitizer_env.py``) read these tables; no other module lists mode names. Adding
a mode is a row here plus its own code: its macro's hooks and checks in the runtime, and its
reports in ``findings.py`` when they are of a new kind.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from .errors import SimBuildError
from .findings import parse_findings

__all__ = [
    "BUILDS",
    "BUILD_MODES",
    "Build",
    "CHECK_MODES",
    "DEFAULT_MODE",
    "MODES",
    "Mode",
    "TABLE",
    "UNCHECKED_COPY",
    "build_for_run",
    "check_build_mode",
    "mode_named",
    "racecheck_memory_mb",
]


@dataclass(frozen=True)
class Build:
    """One way to compile the kernels and the runtime, cached apart from every other."""

    name: str
    kernel_options: tuple[str, ...]  # the translated kernel source's, besides the macro
    runtime_options: tuple[str, ...]  # the runtime's (never instrumented), besides the macro
    link_flags: tuple[str, ...]  # what a link of its objects needs: the sanitizer's runtime
    macro: str | None = None  # what the runtime's code for this build tests (-D)
    kernel_macro: bool = False  # whether the kernels' own source is compiled with the macro too
    # The build whose flags compile a host source (.cpp, .c) whose code is left unchecked
    # (source_compile.kernel_object's unchecked_host); None: this build's own.
    unchecked_host_build: str | None = None
    # Which of its translated sources take toolchain.vectorizing_flags (thread loops as SIMD):
    # None, none; "", every one; other text, those whose translation holds it (vectorizes()).
    vectorize: str | None = None
    # Whether block-loop regions that no shared-memory hazard can involve run uninstrumented
    # (block_loops_epochs.py): the shared-memory race check only, whose judgement they cannot change.
    unjudged_regions: bool = False
    # Whether a block-loop region whose accesses the front end can bound gets a copy without the
    # sanitizers' checks, run for a block whose values keep them from firing (block_loops_hoist.py).
    hoisted_checks: bool = False

    def vectorizes(self, translation: str) -> bool:
        """Whether the translated source ``translation`` takes the vectorising flags in this build."""
        return self.vectorize is not None and self.vectorize in translation

    @property
    def kernel_flags(self) -> list[str]:
        """The flags of a translated kernel source (and of host sources) in this build."""
        return [*self.kernel_options, *([f"-D{self.macro}"] if self.macro and self.kernel_macro else [])]

    @property
    def runtime_flags(self) -> list[str]:
        """The flags of the runtime's sources in this build (besides the common ones)."""
        return [*self.runtime_options, *([f"-D{self.macro}"] if self.macro else [])]


# What the front end writes for a block-loop region's copy without memcheck's checks
# (block_loops.py, block_loops_hoist.py): the only code of a memcheck object the vectorising flags act on.
UNCHECKED_COPY = "::__sim::for_each_unchecked_thread("

# Every translated source is compiled -fpermissive (source_compile.py); the runtime is never instrumented:
# its scheduler state is shared between fibers by design.
BUILDS: tuple[Build, ...] = (
    Build("fast", ("-O2",), ("-O2",), (), vectorize=""),
    Build(
        "memcheck",
        (
            "-O2",
            "-fno-omit-frame-pointer",
            "-fsanitize=address,undefined",
            # Reports return, so a host-code report can let the program go on; the runtime stops
            # the program at a device fault (simulator/runtime/memcheck_reports.cpp).
            "-fsanitize-recover=address",
        ),
        ("-O1", "-fno-omit-frame-pointer"),
        ("-fsanitize=address,undefined",),
        "SIM_MEMCHECK",
        unchecked_host_build="fast",
        hoisted_checks=True,
        # The copies of a region without checks (block_loops_hoist.py) vectorise as fast mode's
        # loops do; an instrumented statement stays scalar whatever the flags, so a translation
        # without such a copy is compiled without them (where they would only lengthen the compile).
        vectorize=UNCHECKED_COPY,
    ),
    # Its host sources stay instrumented even where host code is not judged: racecheck must
    # still see host threads that order launches by atomics.
    Build(
        "racecheck",
        ("-O1", "-fno-omit-frame-pointer", "-fsanitize=thread"),
        ("-O1", "-fno-omit-frame-pointer"),
        ("-fsanitize=thread",),
        "SIM_RACECHECK",
    ),
    Build("synccheck", ("-O1",), ("-O2",), (), "SIM_SYNCCHECK", kernel_macro=True),
    # racecheck of __shared__ memory only (racecheck's default; --racecheck-memory all builds
    # "racecheck"): g++'s ThreadSanitizer instrumentation calls the runtime's own detector
    # (runtime/shared_races.cpp), not libtsan, so nothing of libtsan is linked. -O2 as fast mode:
    # a block-loop region's body is inlined into its thread loop (runtime/block_loops.h) and loads that
    # do not change from thread to thread leave the loop before the instrumentation puts a call at
    # each; the detector names code by the caller's address alone, so no frame pointer is kept.
    Build(
        "racecheck-shared",
        ("-O2", "-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0"),
        ("-O2",),
        (),
        "SIM_SHARED_RACES",
        kernel_macro=True,
        unjudged_regions=True,
    ),
)


def racecheck_memory_mb() -> int:
    """Half the memory this machine (or its cgroup) gives the program, in MiB; 0 when unknown.

    racecheck's ThreadSanitizer keeps 4 bytes of shadow per byte of memory the program's threads
    touch: a program with gigabytes of device buffers (llm.c's 1.6 GB logits) would take 20 GB
    and more. Past this much resident memory it forgets the accesses it has recorded
    (``memory_limit_mb``) instead of being killed by the kernel: a race between an access before
    that moment and one after it is not seen, and nothing is reported that is not a race.
    """
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    return total // 2 // (1 << 20)


def _env(**values: str) -> Mapping[str, str]:
    return MappingProxyType(values)


Parser = Callable[[str, str], list[str]]


@dataclass(frozen=True)
class Mode:
    """A mode as ``--mode`` names it: the builds ``check`` and ``run`` use, and how a child runs."""

    name: str
    checker: bool  # whether it judges the program (fast runs it as a GPU would, checking nothing)
    check_build: str | None  # the build ``check`` runs an entry in; None: ``check`` does not offer it
    run_build: str  # the build ``run`` runs a program in by default
    # ``run``'s other choices of build for this mode, by the value of its option (racecheck's
    # --racecheck-memory); a value not listed runs the build named as the mode.
    run_variants: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # Whether ``run`` instruments the program's host code: as compute-sanitizer, memcheck and
    # racecheck judge device code only (memcheck's --check-host asks for host code too).
    run_checks_host: bool = True
    check_env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    run_env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    stop_statuses: tuple[int, ...] = ()  # the exit statuses its sanitizer is told to use (above)
    parser: Parser = parse_findings  # reads the child's output into findings, one line each

    def findings(self, output: str) -> list[str]:
        """The findings in a child's ``output`` run in this mode."""
        return self.parser(self.name, output)


# memcheck: reports do not stop the program by themselves (halt_on_error=0, kernels built with
# -fsanitize-recover=address): at a device fault the runtime fails the launch
# (cudaErrorLaunchFailure) and the program goes on, or stops it with status 86 when
# SIMULATOR_STOP_ON_ERROR=1; host-code reports pass unless host checks are on
# (runtime/memcheck_reports.cpp). suppress_equal_pcs=0: every faulting thread is reported, as
# compute-sanitizer does, not only the first at each instruction.
_MEMCHECK_CHECK_ENV = _env(
    ASAN_OPTIONS="detect_leaks=1:halt_on_error=0:detect_stack_use_after_return=0:exitcode=86"
    ":allocator_may_return_null=1:strict_string_checks=1:suppress_equal_pcs=0",
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=0:exitcode=87",
    LSAN_OPTIONS="exitcode=88",
    # check's entry is a test driver: its device buffers must be freed, and its own host
    # code is judged too (run leaves both off unless asked).
    SIMULATOR_LEAK_CHECK="full",
    SIMULATOR_CHECK_HOST="1",
    # check stops a driver at its first device fault; both check and run show the sanitizers'
    # own reports of device code beside the runtime's only when asked (--verbose:
    # sanitizer_env.check_child_env, run_child_env); run goes on after a fault.
    SIMULATOR_STOP_ON_ERROR="1",
    SIMULATOR_MEMCHECK_RAW="0",
)
# As compute-sanitizer does, run's memcheck judges device code and reports device memory left
# allocated at exit only when asked (sanitizer_env.run_child_env); host memory leaks are the
# program's own affair (LeakSanitizer off).
_MEMCHECK_RUN_ENV = _env(
    **{
        **_MEMCHECK_CHECK_ENV,
        "ASAN_OPTIONS": _MEMCHECK_CHECK_ENV["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0"),
        "SIMULATOR_LEAK_CHECK": "no",
        "SIMULATOR_CHECK_HOST": "0",
        "SIMULATOR_STOP_ON_ERROR": "0",
    }
)
_TSAN_MEMORY = f":memory_limit_mb={mb}" if (mb := racecheck_memory_mb()) > 0 else ""
_RACECHECK_ENV = _env(
    TSAN_OPTIONS="halt_on_error=0:exitcode=66:report_signal_unsafe=0:history_size=4" + _TSAN_MEMORY
)

# In the order the command line lists them.
TABLE: tuple[Mode, ...] = (
    Mode("fast", checker=False, check_build=None, run_build="fast"),
    Mode(
        "memcheck",
        checker=True,
        check_build="memcheck",
        run_build="memcheck",
        run_checks_host=False,
        check_env=_MEMCHECK_CHECK_ENV,
        run_env=_MEMCHECK_RUN_ENV,
        stop_statuses=(86, 87, 88),
    ),
    # check judges every access (ThreadSanitizer); run judges __shared__ memory only unless
    # --racecheck-memory all, as compute-sanitizer's racecheck (the runtime's own detector).
    Mode(
        "racecheck",
        checker=True,
        check_build="racecheck",
        run_build="racecheck-shared",
        run_variants=MappingProxyType({"shared": "racecheck-shared", "all": "racecheck"}),
        run_checks_host=False,
        check_env=_RACECHECK_ENV,
        run_env=_RACECHECK_ENV,
        stop_statuses=(66,),
    ),
    Mode("synccheck", checker=True, check_build="synccheck", run_build="synccheck"),
)

MODES: tuple[str, ...] = tuple(m.name for m in TABLE)
CHECK_MODES: tuple[str, ...] = tuple(m.name for m in TABLE if m.check_build is not None)
BUILD_MODES: tuple[str, ...] = tuple(b.name for b in BUILDS)
DEFAULT_MODE = TABLE[0].name
_BY_NAME = {m.name: m for m in TABLE}
BUILD_NAMED = MappingProxyType({b.name: b for b in BUILDS})


def mode_named(name: str) -> Mode:
    """The row of mode ``name``; ValueError naming the modes for another name."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown mode '{name}': choose one of {', '.join(MODES)}") from None


def build_for_run(mode: str, variant: str | None = None) -> str:
    """The build (:data:`BUILD_MODES`) that ``run`` runs ``mode`` in, for its option ``variant``
    (racecheck's ``--racecheck-memory``; ``None``: the default)."""
    row = mode_named(mode)
    if variant is None:
        return row.run_build
    return row.run_variants.get(variant, row.name)


def check_build_mode(mode: str) -> None:
    """:class:`SimBuildError` naming the modes when ``mode`` is not a build of :data:`BUILD_MODES`."""
    if mode not in BUILD_MODES:
        raise SimBuildError(f"unknown mode '{mode}': choose one of {', '.join(MODES)}")
