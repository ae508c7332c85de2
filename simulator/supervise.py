"""Keep a child program, and every process it starts, from outliving the Python process that
started it.

``run`` and ``check`` start the program, and builds every compiler they run
(``compiler_run.py``, nvcc's driver), through ``reaper.cpp`` (:func:`start_tree`, Linux; the
build compiles it once into its cache): a small process in a session of its own that starts the
program, becomes the parent of every process the program leaves behind, and kills them all when
the program ends, when it is told to (:func:`end_tree`: a timeout) or when the Python process
dies, even by SIGKILL. A terminal's
Ctrl-C reaches only Python, and a ``kill`` of the Python process nothing else, so Python passes
these on: SIGTERM and SIGHUP (:func:`forward_stop_signals`) and Ctrl-C are sent to the program's
group (:func:`stop_group`), which ends them all if the program has not ended within
``STOP_GRACE_S`` (``SIMULATOR_STOP_GRACE`` seconds when set: :func:`stop_grace`). Every wait for
the program blocks until it ends or the time is up (:func:`wait_for`), so a run ends as soon as
its program does.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping

from .errors import SimBuildError
from .limits import seconds_setting

__all__ = [
    "FORWARDED_SIGNALS",
    "STOP_GRACE_S",
    "STOP_GRACE_VARIABLE",
    "ProgramInterrupted",
    "ProgramKeyboardInterrupt",
    "die_with_parent",
    "end_tree",
    "forward_stop_signals",
    "start_tree",
    "stop_grace",
    "stop_group",
    "wait_for",
]

FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# How long the program may take to end after the forwarded signal before its group is killed.
STOP_GRACE_S = 5.0
STOP_GRACE_VARIABLE = "SIMULATOR_STOP_GRACE"
# poll(2) takes a C int of milliseconds: a longer wait is made of waits this long.
_LONGEST_POLL_S = 86400.0
_PR_SET_PDEATHSIG = 1
_WITH_REAPER = sys.platform.startswith("linux")


class ProgramInterrupted(Exception):
    """This process got ``signum`` while the program ran; the program's group was stopped too."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}; the program was stopped with it")

    @property
    def status(self) -> int:
        """The conventional exit status for a process stopped by ``signum`` (128 + N)."""
        return 128 + self.signum


class ProgramKeyboardInterrupt(KeyboardInterrupt):
    """Ctrl-C (SIGINT) reached this process while the program ran; the program got SIGINT too and
    has ended. A KeyboardInterrupt, so that a caller's handling of Ctrl-C stays as it was."""

    status = 128 + signal.SIGINT

    def __str__(self) -> str:
        return "stopped by SIGINT; the program was stopped with it"


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when this process dies (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved here: the child only calls it
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def _child() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(128 + int(signal.SIGKILL))

    return _child


def start_tree(
    command: list[str],
    before_exec: Callable[[], None] | None = None,
    fallback: bool = False,
    **popen_args,
) -> subprocess.Popen:
    """Start ``command`` so that no process it starts outlives it, this process, or :func:`end_tree`.

    ``command[0]`` is a path (the reaper does not search ``PATH``). ``before_exec`` runs in the
    child before it starts anything (it may set resource limits, which the program inherits).
    With ``fallback``, a reaper that cannot be built (a ``$CXX`` that fails) is done without:
    ``command`` itself then dies with this process, and the failure it meets is the one reported.
    ``popen_args`` go to :class:`subprocess.Popen` (not ``start_new_session``/``preexec_fn``).
    The Popen ends as the program does (its status, or its signal as a negative one).
    """
    try:
        reaper = _reaper_command()
    except SimBuildError:
        if not fallback:
            raise
        reaper = None
    if reaper is not None:
        return subprocess.Popen(
            [*reaper, *command], start_new_session=True, preexec_fn=before_exec, **popen_args
        )
    return subprocess.Popen(
        command, start_new_session=True, preexec_fn=_both(die_with_parent(), before_exec), **popen_args
    )


# True while the reaper itself is being compiled: the compiler runs of that build (and its probes)
# cannot be started through it, and get the parent-death signal only.
_MAKING_REAPER: contextvars.ContextVar[bool] = contextvars.ContextVar("making_reaper", default=False)


def _reaper_command() -> list[str] | None:
    """``reaper PARENT_PID`` to put before a command, or None where there is none (off Linux, or
    while the reaper is being made)."""
    if not _WITH_REAPER or _MAKING_REAPER.get():
        return None
    from .build import reaper_program  # compiled into the build cache, once

    token = _MAKING_REAPER.set(True)
    try:
        program = reaper_program()
    finally:
        _MAKING_REAPER.reset(token)
    return [str(program), str(os.getpid())]


def _both(first: Callable[[], None] | None, second: Callable[[], None] | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` running ``first`` then ``second`` (either may be None)."""
    if first is None or second is None:
        return first or second

    def _child() -> None:
        first()
        second()

    return _child


def stop_grace(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a stopped program may take to end before its group is killed: ``SIMULATOR_STOP_GRACE``,
    else ``STOP_GRACE_S``; ValueError naming the value and the fix for one that is not 0 to 3600."""
    return seconds_setting(
        STOP_GRACE_VARIABLE,
        STOP_GRACE_S,
        3600,
        "a number of seconds from 0 to 3600",
        f"set e.g. {STOP_GRACE_VARIABLE}={STOP_GRACE_S:g}, or unset it",
        environ,
    )


def wait_for(proc: subprocess.Popen, timeout: float | None) -> int:
    """``proc.wait(timeout)`` that wakes when ``proc`` ends, not at subprocess's next poll.

    Popen.wait with a timeout sleeps in steps of up to 50 ms between checks, which every run
    pays after its program has ended; a pidfd (Linux 5.3) is readable the moment it ends.
    ``subprocess.TimeoutExpired`` when ``timeout`` seconds pass first, as from Popen.wait.
    """
    if timeout is None or proc.returncode is not None:
        return proc.wait(timeout)
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # off Linux, or an older kernel: subprocess's own polling
        return proc.wait(timeout)
    try:
        ended = select.poll()
        ended.register(pidfd, select.POLLIN)
        deadline = time.monotonic() + timeout
        # A signal handler that raises (a forwarded stop) ends the wait; others let it go on.
        while not ended.poll(1000 * min(max(deadline - time.monotonic(), 0.0), _LONGEST_POLL_S)):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(proc.args, timeout)
    finally:
        os.close(pidfd)
    return proc.wait()


def end_tree(proc: subprocess.Popen, grace: float = STOP_GRACE_S) -> int:
    """Kill the program ``proc`` runs (:func:`start_tree`) and every process it started; its status."""
    if _WITH_REAPER:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGUSR1)
        try:
            return wait_for(proc, grace)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


def stop_group(proc: subprocess.Popen, signum: int, grace: float = STOP_GRACE_S) -> int:
    """Send ``signum`` to the program ``proc`` runs, wait up to ``grace`` s, then :func:`end_tree`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)  # with the reaper: its group, which passes the signal on
    try:
        return wait_for(proc, grace)
    except subprocess.TimeoutExpired:
        return end_tree(proc)


@contextlib.contextmanager
def forward_stop_signals() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise :class:`ProgramInterrupted` (main thread only).

    The caller stops the program's group when it sees the exception. Outside the main thread
    signal handlers cannot be set, and the handlers in place stay.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, _frame) -> None:
        for s in previous:  # one stop is enough: a second signal must not cut the cleanup short
            signal.signal(s, signal.SIG_IGN)
        raise ProgramInterrupted(signum)

    previous = {}
    for s in FORWARDED_SIGNALS:
        current = signal.getsignal(s)
        if current is signal.SIG_IGN:  # e.g. SIGHUP under nohup: ignored on purpose, left so
            continue
        previous[s] = current if current is not None else signal.SIG_DFL
        signal.signal(s, _raise)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
