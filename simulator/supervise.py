"""Keep a child program's process group from outliving the Python process that started it.

``run`` starts the program in its own session (so a timeout can stop it and everything it
started with one ``killpg``). A terminal's Ctrl-C then reaches only Python, and a ``kill`` of the
Python process nothing else, so Python passes these on: SIGTERM and SIGHUP are forwarded to the
program's group (:func:`forward_stop_signals`), and a Python process that dies without running
any handler (SIGKILL) takes the program with it through the kernel's parent-death signal
(:func:`die_with_parent`, Linux).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

__all__ = [
    "FORWARDED_SIGNALS",
    "STOP_GRACE_S",
    "ProgramInterrupted",
    "die_with_parent",
    "forward_stop_signals",
    "stop_group",
]

FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
# How long the program may take to end after the forwarded signal before its group is killed.
STOP_GRACE_S = 5.0
_PR_SET_PDEATHSIG = 1


class ProgramInterrupted(Exception):
    """This process got ``signum`` while the program ran; the program's group was stopped too."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}; the program was stopped with it")

    @property
    def status(self) -> int:
        """The conventional exit status for a process stopped by ``signum`` (128 + N)."""
        return 128 + self.signum


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


def stop_group(proc: subprocess.Popen, signum: int, grace: float = STOP_GRACE_S) -> int:
    """Send ``signum`` to ``proc``'s process group, wait up to ``grace`` s, then SIGKILL it; its status."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)
    try:
        return proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


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
