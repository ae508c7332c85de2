"""Run one program so that no process it starts outlives it (Linux; the standard library only).

``python reaper.py PARENT_PID PROGRAM [ARGS...]`` is what ``run`` and ``check`` start instead of
the program itself (``supervise.start_tree``). It makes itself a child subreaper, so that every
process the program starts and leaves behind (even one that calls ``setsid``) becomes its child
instead of init's, and starts the program in a process group of its own. Then:

* SIGTERM, SIGHUP and SIGINT sent to it are passed on to the program's group;
* SIGUSR1 (also what it gets when PARENT_PID dies, even by SIGKILL) kills the program and every
  process it started, at once;
* when the program ends, whatever it left running is killed, and this process ends as the
  program did: with its exit status, or by its signal.
"""

from __future__ import annotations

# Only what starts fast: this runs before every program (the signal module's enums cost more
# than the rest of the start-up together, so the C module is used as it is).
import _signal as signal
import ctypes
import os
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_FORWARDED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_END_ALL = signal.SIGUSR1


def _quietly(call, *args) -> None:
    """``call(*args)``, where a process that has already gone is no error."""
    try:
        call(*args)
    except OSError:
        pass


def _children() -> list[int]:
    """The processes whose parent is this one (the program, and what it left behind)."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(entry))
    return found


def _reap_all(program: int) -> int | None:
    """Reap every finished child without waiting; the program's wait status if it was among them."""
    status = None
    while True:
        try:
            pid, raw = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == program:
            status = raw


def _end_all(program: int) -> int | None:
    """SIGKILL the program's group and every child, until none is left; the program's status if reaped."""
    status = None
    _quietly(os.killpg, program, signal.SIGKILL)
    while True:
        left = _children()
        if not left:
            return status
        for pid in left:
            _quietly(os.kill, pid, signal.SIGKILL)
        for pid in left:  # their own children are ours now: the next round finds them
            try:
                _, raw = os.waitpid(pid, 0)
            except ChildProcessError:
                continue
            if pid == program:
                status = raw


def main(argv: list[str]) -> int:
    """Start ``argv[2:]`` with ``argv[1]`` as the parent to watch; end as the program ended."""
    parent, command = int(argv[1]), argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, int(_END_ALL), 0, 0, 0)
    state = {"program": 0, "ending": False}

    def forward(signum: int, _frame) -> None:
        if state["program"]:
            _quietly(os.killpg, state["program"], signum)

    def end_all(_signum: int, _frame) -> None:
        state["ending"] = True
        if state["program"]:
            _quietly(os.killpg, state["program"], signal.SIGKILL)

    for s in _FORWARDED:
        signal.signal(s, forward)
    signal.signal(_END_ALL, end_all)
    if os.getppid() != parent:  # the parent died before the request took effect
        return 128 + int(signal.SIGKILL)
    me = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            if os.getppid() != me:
                os._exit(128 + int(signal.SIGKILL))
            for s in (*_FORWARDED, _END_ALL, signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(s, signal.SIG_DFL)  # as the program would have them (Python ignores two)
            os.execv(command[0], command)
        except OSError as exc:
            os.write(2, f"simulator: cannot start {command[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    state["program"] = pid
    _quietly(os.setpgid, pid, pid)  # also here, so that a signal forwarded at once finds the group
    if state["ending"]:
        end_all(int(_END_ALL), None)
    status = None
    while status is None:
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:
            break
    leftover = _end_all(pid)
    status = status if status is not None else leftover
    _reap_all(pid)
    if status is None:
        return 128 + int(signal.SIGKILL)
    if os.WIFSIGNALED(status):
        import resource

        signum = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the program's own core, if any, is written
        try:
            signal.signal(signum, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL's cannot be changed, nor needs to be
            pass
        os.kill(os.getpid(), signum)
        return 128 + signum
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
