"""A simulated program never outlives ``python -m simulator run``, and ``exit()`` from host code
ends it at once with that status even while a kernel runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import KERNELS, REPO, run_cli

EXIT_DURING_LAUNCH = KERNELS / "program_exit_during_launch.cu"

# How long a process may take to disappear (a bound on a hang, not a speed check).
GONE_WITHIN_S = 60.0
# The stopped program's grace before its group is killed (SIMULATOR_STOP_GRACE): a program that
# ignores the signal waits it out, and one that does not is killed the same way when it has not
# ended by then, so any value proves the same; the default (5 s) would only be waited for.
STOP_GRACE = "0.5"

SLEEPER = r"""
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "ignore") == 0) signal(SIGTERM, SIG_IGN);
    printf("pid=%d\n", (int)getpid());
    fflush(stdout);
    for (;;) sleep(1);
}
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def _wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(
    not Path("/proc/self/stat").is_file(), reason="needs Linux /proc to see the program's process"
)
@pytest.mark.parametrize(
    "signum,program_args",
    [(signal.SIGTERM, []), (signal.SIGHUP, []), (signal.SIGTERM, ["ignore"])],
    ids=["sigterm", "sighup", "sigterm-ignored-by-the-program"],
)
def test_a_stop_signal_to_run_stops_the_program(tmp_path, signum, program_args):
    src = tmp_path / "sleeper.cu"
    src.write_text(SLEEPER)
    env = dict(os.environ, SIMULATOR_STOP_GRACE=STOP_GRACE)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    front = subprocess.Popen(
        [sys.executable, "-m", "simulator", "run", str(src), "--timeout", "0", "--", *program_args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        # Under nohup (or any runner that ignores SIGHUP) `run` leaves an ignored SIGHUP ignored,
        # on purpose; this test is about a front end that gets the signal.
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    program = None
    try:
        first = front.stdout.readline()  # after the build, the program's own first line
        assert first.startswith("pid="), first + front.stderr.read()
        program = int(first.strip().split("=", 1)[1])
        assert _alive(program)
        front.send_signal(signum)
        rc = front.wait(timeout=GONE_WITHIN_S)
        assert _wait_gone(program), f"the program (pid {program}) still runs after run got {signum!r}"
        assert rc == 128 + signum, front.stderr.read()
        assert f"stopped by {signal.Signals(signum).name}" in front.stderr.read()
    finally:
        if front.poll() is None:
            front.kill()
            front.wait()
        if program is not None and _alive(program):
            os.kill(program, signal.SIGKILL)


@pytest.mark.parametrize("timeout", ["300", "0"], ids=["with-a-launch-limit", "no-launch-limit"])
@pytest.mark.parametrize("caller", ["thread", "main"])
def test_exit_from_host_code_during_a_launch_ends_the_process_with_its_status(monkeypatch, timeout, caller):
    # Several workers, so that pool threads are running the kernel when exit() comes.
    monkeypatch.setenv("SIMULATOR_THREADS", "4")
    args = ["run", str(EXIT_DURING_LAUNCH), "--timeout", timeout]
    if caller == "main":
        args += ["--", "main"]
    # The launch never ends by itself: a run that waited for it would end only at the
    # per-launch limit (300 s) or never, past this bound.
    proc = run_cli(*args, timeout=GONE_WITHIN_S + 120)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "main went on" not in proc.stdout
    assert "launch timeout" not in proc.stderr


@pytest.mark.parametrize("value", ["soon", "-1", "3601", "nan"])
def test_a_bad_stop_grace_is_one_line_before_building(tmp_path, value):
    src = tmp_path / "never_built.cu"
    src.write_text("this is not C++\n")
    proc = run_cli("run", str(src), env={"SIMULATOR_STOP_GRACE": value})
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == (
        f"simulator: SIMULATOR_STOP_GRACE={value!r} is not a number of seconds from 0 to 3600; "
        "set e.g. SIMULATOR_STOP_GRACE=5, or unset it\n"
    )
