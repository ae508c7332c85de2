"""Every compiler run of a build is bounded: a source that includes a FIFO, ``/dev/zero`` or
standard input ends with one line instead of waiting for ever or filling the machine's memory;
``$CXX`` is a command with arguments, as make takes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from simulator import compiler_run
from simulator.errors import SimBuildError

from .conftest import REPO, processes_naming, run_cli, sigint_as_from_a_terminal

HOST_MAIN = 'int main() { std::printf("ran\\n"); return 0; }\n'


def _source(tmp_path, include: str):
    src = tmp_path / "prog.cpp"
    src.write_text(f'#include <cstdio>\n#include "{include}"\n{HOST_MAIN}')
    return src


def test_including_a_fifo_ends_at_the_time_limit(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    src = _source(tmp_path, str(fifo))
    proc = run_cli("run", str(src), env={"SIMULATOR_BUILD_TIMEOUT": "1"}, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "within 1 s and was stopped" in proc.stderr and "SIMULATOR_BUILD_TIMEOUT" in proc.stderr
    assert processes_naming(str(src)) == []  # the compiler it started was stopped with it


def test_ctrl_c_while_building_is_one_line_and_stops_the_compiler(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    src = _source(tmp_path, str(fifo))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "simulator", "run", str(src)]
    start = {"cwd": REPO, "env": env, "preexec_fn": sigint_as_from_a_terminal}
    with subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, **start) as proc:
        deadline = time.monotonic() + 60
        while not processes_naming(f"-E {src}") and time.monotonic() < deadline:
            time.sleep(0.05)  # until the compiler waits on the FIFO
        proc.send_signal(signal.SIGINT)  # what a terminal sends to its foreground process, run
        _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, "simulator: interrupted\n")
    assert processes_naming(str(src)) == []


def test_including_dev_zero_ends_at_the_memory_limit(tmp_path):
    src = _source(tmp_path, "/dev/zero")
    proc = run_cli("run", str(src), env={"SIMULATOR_BUILD_MEMORY_MB": "256"}, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "ran out of memory" in proc.stderr and "its limit is 256 MiB" in proc.stderr


def test_including_standard_input_does_not_wait_for_it(tmp_path):
    src = _source(tmp_path, "/dev/stdin")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "simulator", "run", str(src)]
    # Standard input an open pipe that never ends: the compiler reads none of it.
    with subprocess.Popen(cmd, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env) as proc:
        try:
            out, _ = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 0 and out == b"ran\n"


def test_cxx_may_be_a_command_with_arguments(tmp_path):
    src = tmp_path / "warns.cpp"
    src.write_text('#include <cstdio>\nint main() { int unused; std::printf("ran\\n"); }\n')
    proc = run_cli("run", str(src), env={"CXX": "g++ -w"})
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ran\n", "")


@pytest.mark.parametrize("cxx", ["no-such-compiler", "'g++", "/nonexistent/g++ -w"])
def test_a_cxx_that_cannot_run_is_one_line(tmp_path, cxx):
    src = _source(tmp_path, "cstdlib")
    proc = run_cli("run", str(src), env={"CXX": cxx})
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "set CXX to" in proc.stderr, proc.stderr


def test_the_launch_limit_raises_the_compiler_time_limit(monkeypatch):
    monkeypatch.delenv("SIMULATOR_BUILD_TIMEOUT", raising=False)
    assert compiler_run.build_time_limit() == compiler_run.DEFAULT_TIME_S
    with compiler_run.launch_time_allowed(5000):
        assert compiler_run.build_time_limit() == 5000
    with compiler_run.launch_time_allowed(5):
        assert compiler_run.build_time_limit() == compiler_run.DEFAULT_TIME_S
    with compiler_run.launch_time_allowed(0):
        assert compiler_run.build_time_limit() is None
    monkeypatch.setenv("SIMULATOR_BUILD_TIMEOUT", "7")
    with compiler_run.launch_time_allowed(5000):
        assert compiler_run.build_time_limit() == 7  # the variable, when set, is the limit
    monkeypatch.setenv("SIMULATOR_BUILD_TIMEOUT", "soon")
    with pytest.raises(SimBuildError, match="SIMULATOR_BUILD_TIMEOUT='soon' is not a number of seconds"):
        compiler_run.build_time_limit()
