"""No process a program starts outlives ``run`` or ``check``: not when the program exits, not when
``run`` is killed with SIGKILL or interrupted with Ctrl-C, not when ``check`` stops it at its
time limit, even when it has left the program's process group (``setsid``); and the wait for a
program gives its status when it ends, or gives up at its time limit while it runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from simulator.check import run_check
from simulator.supervise import wait_for

from .conftest import REPO, sigint_as_from_a_terminal

SLEEPER = """
#include <cstdio>
#include <unistd.h>
// Forks a process that leaves the program's group and sleeps for ever, after writing its pid to PID_FILE.
static void fork_sleeper(const char* pid_file) {
    if (fork() == 0) {
        setsid();
        FILE* f = std::fopen(pid_file, "w");
        std::fprintf(f, "%d\\n", (int)getpid());
        std::fclose(f);
        for (;;) pause();
    }
    while (access(pid_file, F_OK) != 0) usleep(1000);
}
"""
# run: PID_FILE then "exit" (end at once) or "wait" (sleep until stopped).
PROGRAM = (
    SLEEPER
    + """
int main(int argc, char** argv) {
    fork_sleeper(argv[1]);
    std::printf("forked\\n");
    std::fflush(stdout);
    if (argv[2][0] == 'w') for (;;) pause();
    return 0;
}
"""
)
# check: an entry that forks, then never returns.
ENTRY = (
    SLEEPER
    + """
extern "C" int forks_and_hangs(void) {
    fork_sleeper("{pid_file}");
    for (;;) pause();
}
"""
)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            state = fh.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return state != b"Z"


def _gone_soon(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while _alive(pid):
        if time.monotonic() > end:
            os.kill(pid, signal.SIGKILL)  # leave nothing behind, whatever the test found
            return False
        time.sleep(0.02)
    return True


def _sleeper_pid(pid_file) -> int:
    return int(pid_file.read_text())


def _start_run(tmp_path, how: str) -> tuple[subprocess.Popen, object]:
    src = tmp_path / "forks.cpp"
    src.write_text(PROGRAM)
    pid_file = tmp_path / "sleeper.pid"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "simulator", "run", str(src), "--", str(pid_file), how]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, preexec_fn=sigint_as_from_a_terminal, **pipes)
    assert proc.stdout.readline() == b"forked\n"
    return proc, pid_file


def test_a_forked_process_ends_when_the_program_exits(tmp_path):
    proc, pid_file = _start_run(tmp_path, "exit")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert _gone_soon(_sleeper_pid(pid_file), 0.5)


def test_a_forked_process_ends_when_run_is_killed(tmp_path):
    proc, pid_file = _start_run(tmp_path, "wait")
    proc.kill()
    proc.communicate()
    assert _gone_soon(_sleeper_pid(pid_file))


def test_ctrl_c_stops_the_program_and_run_says_so_in_one_line(tmp_path):
    proc, pid_file = _start_run(tmp_path, "wait")
    proc.send_signal(signal.SIGINT)  # what a terminal sends to its foreground process, run
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode() == "simulator: run stopped by SIGINT; the program was stopped with it\n"
    assert _gone_soon(_sleeper_pid(pid_file))


def test_a_forked_process_ends_when_check_stops_the_entry_at_its_time_limit(tmp_path):
    pid_file = tmp_path / "sleeper.pid"
    src = tmp_path / "entry.cpp"
    src.write_text(ENTRY.replace("{pid_file}", str(pid_file)))
    res = run_check([str(src)], "forks_and_hangs", "synccheck", timeout=0.5)
    assert not res.ok and "did not finish within 1 s" in res.findings[0]
    assert _gone_soon(_sleeper_pid(pid_file), 0.5)


def _child(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code])


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling"])
def test_the_wait_for_a_program_gives_its_status_or_times_out_while_it_runs(monkeypatch, pidfd):
    if not pidfd:  # a kernel or platform without pidfd_open: subprocess's own wait
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    assert wait_for(_child("raise SystemExit(7)"), 60) == 7
    assert wait_for(_child("raise SystemExit(5)"), None) == 5
    endless = _child("import time; time.sleep(600)")
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_for(endless, 0.2)
        assert endless.returncode is None  # still running, not reaped
    finally:
        endless.kill()
    assert wait_for(endless, 60) == -signal.SIGKILL
    assert wait_for(endless, 60) == -signal.SIGKILL  # an ended one gives its status again
