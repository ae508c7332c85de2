"""Run a whole CUDA program (its own ``main``) under the simulator, in one mode.

The program's sources are translated and linked with the runtime into an executable (cached
like every other build), which runs as a child process in the caller's working folder with
the given arguments. Its standard output and error pass straight through; standard error is
also read for the checkers' reports. The exit status is the program's own, except that a
checker's finding (memcheck, racecheck, synccheck) makes a zero status 1, and a run stopped by
the time limit exits 124. In ``fast`` mode the runtime's reports (a deadlock, a refused copy,
...) are shown but the program's status stands: the program saw them as CUDA errors, as it
would on a GPU.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field

from .build import DEFAULT_ARCH, SimBuildError, build_program
from .compiler_run import launch_time_allowed
from .findings import death_by_signal, unprinted_errors
from .launch_filter import LaunchFilter
from .limits import (
    TIMEOUT_GRACE_S,
    check_environment,
    environment_for_devices,
    grace_after,
    resolve_devices,
    resolve_timeout,
    wall_limit,
)
from .modes import MODES, build_for_run, mode_named
from .sanitizer_env import run_child_env
from .supervise import (
    ProgramInterrupted,
    ProgramKeyboardInterrupt,
    end_tree,
    forward_stop_signals,
    start_tree,
    stop_grace,
    stop_group,
    wait_for,
)

__all__ = [
    "LEAK_CHECKS",
    "ProgramInterrupted",
    "RunResult",
    "run_program",
    "TIMEOUT_GRACE_S",
    "TIMEOUT_STATUS",
]

TIMEOUT_STATUS = 124  # as timeout(1)
_KEEP_STDERR = 16 * 1024 * 1024  # bytes of the program's stderr kept for the findings

LEAK_CHECKS = ("no", "full")  # compute-sanitizer's --leak-check values
# What racecheck judges (run --racecheck-memory); the first is the default.
RACECHECK_MEMORY = tuple(mode_named("racecheck").run_variants)


def build_mode_for(mode: str, racecheck_memory: str | None = None) -> str:
    """The build (``simulator.modes.BUILD_MODES``) that runs ``mode`` with ``racecheck_memory``
    (``None``: the default, ``RACECHECK_MEMORY[0]``)."""
    return build_for_run(mode, racecheck_memory)


# Runtime reports of CUDA-defined outcomes (cudaErrorAssert, cudaErrorLaunchTimeout).
_PROGRAM_VISIBLE = re.compile(r"returns cudaErrorAssert|launch timeout: kernel")
_MEMORY_SIGNALS = (signal.SIGSEGV, signal.SIGBUS)


@dataclass
class RunResult:
    """How a program run ended: its exit status, the findings, and the status ``run`` exits with."""

    mode: str
    returncode: int
    findings: list[str] = field(default_factory=list)
    timed_out: bool = False
    status: int = 0
    stopped_by_checker: bool = False  # the sanitizer ended the program with its own status
    reports: list[str] = field(default_factory=list)  # runtime reports the program saw as CUDA errors
    unprinted: int = 0  # memcheck: errors past the print limit, counted but not listed


def _pump(src, dst, keep: bytearray) -> None:
    """Copy ``src`` to ``dst`` as it arrives, keeping up to ``_KEEP_STDERR`` bytes."""
    while True:
        chunk = src.read1(65536) if hasattr(src, "read1") else src.read(65536)
        if not chunk:
            return
        try:
            dst.write(chunk)
            dst.flush()
        except (BrokenPipeError, ValueError):
            pass
        if len(keep) < _KEEP_STDERR:
            keep.extend(chunk[: _KEEP_STDERR - len(keep)])


def _is_terminal(stream) -> bool:
    """Whether ``stream`` writes to a terminal (False for a stream without a file descriptor)."""
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def run_program(
    sources: list[str],
    mode: str = "fast",
    include_dirs: list[str] | tuple[str, ...] = (),
    args: list[str] | tuple[str, ...] = (),
    timeout: float | None = None,
    stdout=None,
    stderr=None,
    arch: int = DEFAULT_ARCH,
    leak_check: str = "no",
    check_host: bool = False,
    defines: list[str] | tuple[str, ...] = (),
    devices: int | None = None,
    line_buffered: bool | None = None,
    launches: LaunchFilter | None = None,
    racecheck_memory: str | None = None,
    verbose: bool = False,
    stop_on_error: bool = False,
    print_limit: int | None = None,
) -> RunResult:
    """Build ``sources`` as one program for ``mode`` and run it with ``args``.

    ``timeout`` (default: ``SIMULATOR_TIMEOUT``, see ``simulator.limits``; 0: none) is the
    limit per launch, passed to the program as ``SIMULATOR_TIMEOUT``; the run as a whole is stopped
    up to ``TIMEOUT_GRACE_S`` seconds after that. ``stdout``/``stderr`` are binary streams
    (default: this process's); the program's output is copied to them as it comes. Device code
    is compiled with ``__CUDA_ARCH__ == arch``.
    ``leak_check="full"`` makes device memory still allocated at exit a memcheck finding (named by
    the program's ``cudaMalloc`` line); ``check_host`` makes sanitizer reports from host code
    memcheck findings too (labelled ``host code``). Both are memcheck options, off by default.
    ``defines`` (``NAME`` or ``NAME=VALUE``) are macros for every source, as ``-D`` flags.
    ``devices`` is the number of modelled GPUs the program sees (1 to 16; default:
    ``SIMULATOR_DEVICES``, else 1), passed to it as ``SIMULATOR_DEVICES``.
    ``line_buffered`` makes the program's stdout line-buffered, so that each line is copied on as
    soon as it is printed (default: when ``stdout`` is a terminal, where the program would have
    had a line-buffered stdout, or ``SIMULATOR_LINE_BUFFERED=1`` is set; otherwise fully
    buffered, as in a pipe).
    ``launches`` picks the launches a checker checks (:class:`simulator.launch_filter.LaunchFilter`;
    default: all); ``ValueError`` in ``fast`` mode, which checks none, or for a bad filter.
    ``racecheck_memory`` is what racecheck judges: ``"shared"`` (the default: ``__shared__``
    memory only, as compute-sanitizer's racecheck, by the simulator's own detector: fast on big
    blocks) or ``"all"`` (every access, global memory too, by ThreadSanitizer); ``ValueError``
    for another value, or for any value in another mode.
    ``verbose`` (memcheck) prints AddressSanitizer's whole report of a device fault beside the
    runtime's compute-sanitizer-shaped one; ``stop_on_error`` (memcheck) stops the program at its
    first device fault instead of failing the launch with cudaErrorLaunchFailure and going on;
    ``print_limit`` (memcheck) is how many errors are printed, each faulting thread one (default
    100, as compute-sanitizer; 0: all); the rest are counted in ``RunResult.unprinted``.
    ``ValueError`` for a bad ``SIMULATOR_THREADS``/``SIMULATOR_STACK_KB``/``SIMULATOR_DEVICES`` or
    ``devices`` (``simulator.limits``; ``TypeError`` for a ``devices`` that is not an int) or
    ``SIMULATOR_STOP_GRACE`` (:func:`simulator.supervise.stop_grace`);
    :class:`ProgramInterrupted` when SIGTERM or SIGHUP arrived while the program ran (in the
    main thread): the program's process group was sent the same signal and has ended;
    :class:`simulator.supervise.ProgramKeyboardInterrupt` (a KeyboardInterrupt) for Ctrl-C, which
    the program got as SIGINT.
    """
    if mode not in MODES:
        raise SimBuildError(f"unknown mode '{mode}': choose one of {', '.join(MODES)}")
    if leak_check not in LEAK_CHECKS:
        raise ValueError(f"leak_check={leak_check!r}: give 'full' (report device leaks) or 'no'")
    if (
        leak_check == "full" or check_host or stop_on_error or print_limit is not None
    ) and mode != "memcheck":
        raise ValueError(
            "--leak-check full, --check-host, --stop-on-error and --print-limit are memcheck options, "
            f"not for --mode {mode}"
        )
    if print_limit is not None and (not isinstance(print_limit, int) or print_limit < 0):
        raise ValueError(f"print_limit={print_limit!r}: give a count of errors to print, 0 for all")
    if racecheck_memory is not None and racecheck_memory not in RACECHECK_MEMORY:
        raise ValueError(f"racecheck_memory={racecheck_memory!r}: give 'shared' or 'all'")
    if racecheck_memory is not None and mode != "racecheck":
        raise ValueError(f"--racecheck-memory is a racecheck option, not for --mode {mode}")
    row = mode_named(mode)
    filter_env = (launches or LaunchFilter()).env_for(mode)
    environ = environment_for_devices(devices)
    check_environment(environ)
    ndevices = resolve_devices(devices, environ)
    limit = resolve_timeout(timeout)
    stop_after = stop_grace(environ)  # read now: a bad value stops the run before it builds
    # As compute-sanitizer, memcheck judges device code unless asked (--check-host), and
    # racecheck device code only: the program's host code is then built without the sanitizers'
    # instrumentation.
    unchecked_host = not (row.run_checks_host or check_host)
    build_mode = build_mode_for(mode, racecheck_memory)
    with launch_time_allowed(limit):  # a compiler run may take as long as a launch
        exe = build_program(list(sources), build_mode, include_dirs, arch, defines, unchecked_host)
    grace = grace_after(limit)
    out = stdout if stdout is not None else sys.stdout.buffer
    err = stderr if stderr is not None else sys.stderr.buffer
    if line_buffered is None:
        line_buffered = _is_terminal(out) or environ.get("SIMULATOR_LINE_BUFFERED") == "1"
    env = {
        **run_child_env(
            mode, limit, leak_check, check_host, ndevices, line_buffered, verbose, stop_on_error, print_limit
        ),
        **filter_env,
    }
    for stream in (out, err):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    kept_err = bytearray()
    timed_out = False
    # The program runs in its own session, so nothing sent to this process reaches it unless
    # passed on: SIGTERM/SIGHUP (and Ctrl-C) stop its group too; it, and every process it starts,
    # ends with the run, however the run ends (supervise.start_tree).
    with forward_stop_signals():
        proc = start_tree(
            [str(exe), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        pumps = [
            threading.Thread(target=_pump, args=(proc.stdout, out, bytearray()), daemon=True),
            threading.Thread(target=_pump, args=(proc.stderr, err, kept_err), daemon=True),
        ]
        # The program may print (and be signalled) before the second pump has started: a stop
        # that comes then is handled as one that comes while it runs.
        try:
            for t in pumps:
                t.start()
            rc = wait_for(proc, wall_limit(limit))
        except subprocess.TimeoutExpired:
            timed_out = True
            rc = end_tree(proc)
        except (ProgramInterrupted, KeyboardInterrupt) as exc:
            # Ctrl-C reaches this process only (the program has a session of its own): pass it on.
            stop_group(proc, exc.signum if isinstance(exc, ProgramInterrupted) else signal.SIGINT, stop_after)
            for t in pumps:
                if t.is_alive():
                    t.join(timeout=5)
            if isinstance(exc, ProgramInterrupted):
                raise
            raise ProgramKeyboardInterrupt() from None
    for t in pumps:
        t.join(timeout=5)
    findings, reports = [], []
    err_text = kept_err.decode(errors="replace")
    for f in row.findings(err_text):
        # In `fast` mode the program runs as on a GPU: what the runtime reports it also returns
        # to the program as a CUDA error, so the program's own status decides. A failed device
        # assert or a launch past the time limit is CUDA behaviour (710, 702) in every mode.
        if not row.checker or _PROGRAM_VISIBLE.search(f):
            reports.append(f)
        else:
            findings.append(f)
    if timed_out:
        findings.append(
            f"{mode}: the program did not finish within {limit + grace:g} s "
            f"(--timeout {limit:g} per launch, plus {grace:g} s) and was stopped"
        )
        status = TIMEOUT_STATUS
    elif rc < 0:
        # A wild host pointer, or a device write past an allocation that broke the C heap.
        hint = "; --mode memcheck names the access" if mode != "memcheck" and -rc in _MEMORY_SIGNALS else ""
        findings.append(f"{mode}: the program died with {death_by_signal(-rc)}{hint}")
        status = 128 - rc
    elif findings:
        status = rc if rc != 0 else 1
    else:
        status = rc
    return RunResult(
        mode, rc, findings, timed_out, status, rc in row.stop_statuses, reports, unprinted_errors(err_text)
    )
