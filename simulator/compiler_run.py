"""Every run of the C++ compiler, bounded in time and memory.

``$CXX`` is a command, split as a shell splits it (``CXX='g++ -w'`` or ``CXX='ccache g++'``, as
make takes it). Each run (``g++ -E``, a compile, a link) starts in a session of its own under
the supervisor of ``supervise.start_tree`` (``reaper.cpp``), so that one request ends the driver
and every process it started (``cc1plus``, ``as``, ``ld``) and none of them outlives the Python
process however it ends (SIGKILL too), with its standard input closed, under an address-space
limit (``SIMULATOR_BUILD_MEMORY_MB``, default half the machine's memory, at most 4 GiB) and a
CPU-time and wall-clock limit (``SIMULATOR_BUILD_TIMEOUT`` seconds; unset, 600, or
``run``/``check``'s ``--timeout S`` when S is larger, and none with ``--timeout 0``): a source
that includes ``/dev/zero``, a FIFO or ``/dev/stdin`` ends with one line instead of filling the
machine's memory or waiting for ever.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

from .errors import SimBuildError
from .supervise import end_tree, start_tree

__all__ = [
    "CompilerRun",
    "compiler_command",
    "build_memory_limit",
    "build_time_limit",
    "invoke",
    "launch_time_allowed",
    "run_tool",
]

TIME_VARIABLE = "SIMULATOR_BUILD_TIMEOUT"
MEMORY_VARIABLE = "SIMULATOR_BUILD_MEMORY_MB"
DEFAULT_TIME_S = 600.0
_MIB = 1 << 20
# The per-launch limit of the run or check that asked for this build (None: none asked).
_LAUNCH_LIMIT: contextvars.ContextVar[float | None] = contextvars.ContextVar("launch_limit", default=None)


@dataclass
class CompilerRun:
    """How one compiler run ended: its status, standard output (bytes as text, each byte that is
    not UTF-8 kept as a lone surrogate so that it encodes back unchanged) and its messages."""

    returncode: int
    stdout: str
    stderr: str


def compiler_command(cxx: str) -> list[str]:
    """``cxx`` (``$CXX`` or a found compiler) as a command line; SimBuildError naming it and the fix."""
    try:
        words = shlex.split(cxx)
    except ValueError as exc:
        problem = f"CXX={cxx!r} is not a command ({exc})"
        raise SimBuildError(f"{problem}; set CXX to a C++ compiler such as g++") from None
    if not words:
        raise SimBuildError("CXX is set but empty; set it to a C++ compiler such as g++, or unset it")
    if shutil.which(words[0]) is None:
        raise SimBuildError(
            f"CXX={cxx!r}: {words[0]!r} is not an executable program; set CXX to a C++ compiler "
            "(e.g. CXX=g++ or CXX='g++ -w'), or unset it to use g++ from PATH"
        )
    return words


def _positive_number(name: str, raw: str, what: str, example: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1e9:
        raise SimBuildError(f"{name}={raw[:80]!r} is not {what}; set e.g. {name}={example}, or unset it")
    return value


def build_time_limit() -> float | None:
    """Seconds one compiler run may take (None: no limit); see the module's docstring."""
    raw = os.environ.get(TIME_VARIABLE, "")
    if raw != "":
        seconds = _positive_number(TIME_VARIABLE, raw, "a number of seconds", "600")
        return seconds or None
    launch = _LAUNCH_LIMIT.get()
    if launch == 0:
        return None
    return max(DEFAULT_TIME_S, launch or 0.0)


def build_memory_limit() -> int:
    """Bytes of address space one compiler run may use."""
    raw = os.environ.get(MEMORY_VARIABLE, "")
    if raw:
        mib = _positive_number(MEMORY_VARIABLE, raw, "a whole number of MiB", "4096")
        if mib != int(mib) or mib < 64:
            raise SimBuildError(f"{MEMORY_VARIABLE}={raw!r}: give at least 64 (MiB), e.g. 4096, or unset it")
        return int(mib) * _MIB
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        physical = 8 << 30
    return min(4 << 30, max(1 << 30, physical // 2))


@contextlib.contextmanager
def launch_time_allowed(limit: float) -> Iterator[None]:
    """While inside, a compiler run may take as long as one launch may (``limit`` s; 0: no limit)."""
    token = _LAUNCH_LIMIT.set(limit)
    try:
        yield
    finally:
        _LAUNCH_LIMIT.reset(token)


def _limits(memory: int, seconds: float | None):
    """A ``preexec_fn`` setting the limits (its values made here: the child only calls setrlimit)."""
    settings = [(resource.RLIMIT_AS, (memory, memory)), (resource.RLIMIT_CORE, (0, 0))]
    if seconds is not None:
        settings.append((resource.RLIMIT_CPU, (int(seconds) + 1, int(seconds) + 6)))

    def apply() -> None:
        for which, values in settings:
            resource.setrlimit(which, values)

    return apply


_OUT_OF_MEMORY = re.compile(r"out of memory|memory exhausted|Cannot allocate memory|std::bad_alloc")


def invoke(args: list[str], what: str) -> CompilerRun:
    """Run the compiler command ``args`` (``args[0]`` a ``$CXX`` value) within the build's limits.

    SimBuildError in one line when it cannot start, runs past its time or ran out of its memory.
    """
    argv = [*compiler_command(args[0]), *args[1:]]
    argv[0] = shutil.which(argv[0]) or argv[0]  # a path: the supervisor starts it without a search
    seconds = build_time_limit()
    memory = build_memory_limit()
    env = dict(os.environ, LC_ALL="C")  # plain ASCII quotes in diagnostics
    try:
        proc = start_tree(
            argv,
            before_exec=_limits(memory, seconds),
            fallback=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    except OSError as exc:
        problem = f"cannot run the C++ compiler {argv[0]!r} ({exc.strerror})"
        raise SimBuildError(f"{problem}; set CXX to a C++ compiler such as g++") from None
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        _end(proc)
        raise SimBuildError(
            f"the C++ compiler did not finish {what} within {seconds:g} s and was stopped (does the "
            f"source include a FIFO, a device or standard input?); {TIME_VARIABLE}=S gives it longer"
        ) from None
    except BaseException:
        _end(proc)
        raise
    messages = err.decode("utf-8", "replace")
    if proc.returncode != 0 and _OUT_OF_MEMORY.search(messages):
        raise SimBuildError(
            f"the C++ compiler ran out of memory on {what} (its limit is {memory // _MIB} MiB; does the "
            f"source include /dev/zero or a huge file?); {MEMORY_VARIABLE}=N raises it"
        )
    if proc.returncode == -signal.SIGXCPU or "CPU time limit exceeded" in messages:
        raise SimBuildError(
            f"the C++ compiler used more than {seconds:g} s of CPU time on {what} and was stopped; "
            f"{TIME_VARIABLE}=S gives it longer"
        )
    return CompilerRun(proc.returncode, out.decode("utf-8", "surrogateescape"), messages)


def run_tool(args: list[str], env: dict[str, str] | None = None) -> CompilerRun:
    """Run the tool ``args`` (a compiler, linker or ``ar`` command of nvcc's driver) without the
    build's limits, its standard input this process's, so that neither it nor any process it
    starts outlives this process; how it ended, its output as :func:`invoke` gives it."""
    argv = [shutil.which(args[0]) or args[0], *args[1:]]
    proc = start_tree(argv, fallback=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        out, err = proc.communicate()
    except BaseException:
        _end(proc)
        raise
    return CompilerRun(
        proc.returncode, out.decode("utf-8", "surrogateescape"), err.decode("utf-8", "replace")
    )


def _end(proc: subprocess.Popen) -> None:
    """Kill the compiler run ``proc`` and every process it started, and reap it."""
    end_tree(proc)
    proc.communicate()
