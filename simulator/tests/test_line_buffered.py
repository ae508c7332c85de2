"""``run`` line-buffers the program's stdout where the program would have had a line-buffered
one (a terminal), when asked (``--line-buffered``, ``SIMULATOR_LINE_BUFFERED=1``), and not
otherwise; a line printed while the program goes on running then reaches the reader at once."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time

import pytest

from .conftest import REPO

# Prints whether its stdout is line-buffered (glibc's __flbf), runs a kernel, prints the first
# line and then waits, up to 50 s (within the run's time limit), for the file named by its first argument.
PROGRAM = r"""
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <unistd.h>
__global__ void twice(int* d) { d[threadIdx.x] *= 2; }
int main(int argc, char** argv) {
    int h[4] = {1, 2, 3, 4};
    int* d = nullptr;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaFree(d);
    printf("line_buffered=%d sum=%d\n", __flbf(stdout) != 0, h[0] + h[1] + h[2] + h[3]);
    for (int i = 0; argc > 1 && i < 500 && access(argv[1], F_OK) != 0; ++i) usleep(100000);
    printf("done\n");
    return 0;
}
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    src = tmp_path_factory.mktemp("line-buffered") / "waits.cu"
    src.write_text(PROGRAM)
    return src


def _start(source, *options: str, env_extra: dict[str, str] | None = None, go=None) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("SIMULATOR_LINE_BUFFERED", None)
    env.update(env_extra or {})
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    extra = ["--", str(go)] if go is not None else []
    return subprocess.Popen(
        [sys.executable, "-m", "simulator", "run", str(source), *options, *extra],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _first_line_within(proc: subprocess.Popen, seconds: float) -> str | None:
    """The program's first stdout line if it arrives within ``seconds``, else None."""
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    return got[0] if got else None


def test_a_line_reaches_the_reader_while_the_program_still_runs(source, tmp_path):
    # In fast mode; the checker modes are covered by the real-programs runner's test, whose
    # program would loop forever after its check line in memcheck, racecheck and synccheck.
    go = tmp_path / "go"
    proc = _start(source, "--line-buffered", go=go)
    try:
        # Building may take a while; the line must come before the program is let go.
        line = _first_line_within(proc, 240)
        assert line == "line_buffered=1 sum=20\n", (line, proc.poll())
        assert proc.poll() is None  # still waiting for `go`: the line was not flushed at exit
    finally:
        go.touch()
    out, err = proc.communicate(timeout=120)
    assert (proc.returncode, out) == (0, "done\n"), err


def test_a_pipe_keeps_full_buffering_unless_asked(source, tmp_path):
    # Without the switch, both lines come at exit: the program's stdout is fully buffered, as
    # it would be when written to a pipe without the simulator.
    proc = _start(source)
    out, err = proc.communicate(timeout=280)
    assert (proc.returncode, out) == (0, "line_buffered=0 sum=20\ndone\n"), err


def test_the_variable_asks_for_it_too(source):
    proc = _start(source, env_extra={"SIMULATOR_LINE_BUFFERED": "1"})
    out, err = proc.communicate(timeout=280)
    assert (proc.returncode, out) == (0, "line_buffered=1 sum=20\ndone\n"), err


def test_a_terminal_gets_a_line_buffered_program(source):
    from simulator.run import run_program

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def read_all() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the slave side closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    with open(slave, "wb", buffering=0, closefd=True) as terminal:
        res = run_program([str(source)], stdout=terminal)
    deadline = time.monotonic() + 10
    while b"done" not in b"".join(chunks) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.close(master)
    assert res.status == 0, res.findings
    assert b"".join(chunks).replace(b"\r\n", b"\n") == b"line_buffered=1 sum=20\ndone\n"


def test_a_bad_value_is_named_and_changes_nothing(source, tmp_path):
    from simulator.build import build_program

    exe = build_program([str(source)], "fast", [])
    env = dict(os.environ, SIMULATOR_LINE_BUFFERED="yes")
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert (proc.returncode, proc.stdout) == (0, "line_buffered=0 sum=20\ndone\n")
    assert proc.stderr == (
        "simulator: SIMULATOR_LINE_BUFFERED='yes' is not 0 or 1 (1 line-buffers the program's stdout); "
        "stdout keeps its usual buffering\n"
    )
