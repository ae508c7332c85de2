"""The tensor-core samples' async-copy shapes as block loops (simulator/block_loops.py): a
thread-scope ``cuda::pipeline`` and a ``cuda::aligned_size_t`` living across barriers (kept in
per-thread slots, runtime/launch.h's ``per_thread``), ``cuda::memcpy_async`` into shared memory
waited on before a barrier, and a parameter written by a block statement among the thread's own
statements run as loops in a fast build, with the output fibers give (``SIMULATOR_FIBERS=1``) and
the host's; a parameter written after a statement that reads it, which one write for the block
would change, is each thread's own (a per-thread slot) and runs as loops too, still right;
the checkers keep their findings.

The program (kernels/pipeline_loops.cu) checks each result against the host's and prints it.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, nvcc_compile, run_apart

PROGRAM = KERNELS / "pipeline_loops.cu"
KERNEL_NAMES = ("pipe_tiles", "param_between", "param_read_first")


@pytest.fixture(scope="module")
def fast_runs():
    """The program in a fast build: block loops allowed, then fibers forced."""
    return run_apart(PROGRAM, "fast", "0"), run_apart(PROGRAM, "fast", "1")


def test_pipeline_and_written_parameters_run_as_block_loops(fast_runs):
    (_, _, ways), (_, _, forced) = fast_runs
    assert ways == dict.fromkeys(KERNEL_NAMES, "as block loops")
    assert forced == dict.fromkeys(KERNEL_NAMES, "with fibers")


def test_results_are_the_hosts_and_bit_identical_to_fibers(fast_runs):
    (loops_out, loops_err, _), (fibers_out, fibers_err, _) = fast_runs
    assert re.findall(r"^(\w+) (ok|WRONG) ", loops_out, re.M) == [(k, "ok") for k in KERNEL_NAMES]
    assert loops_out.splitlines()[-1] == "no error"
    assert loops_out == fibers_out
    assert loops_err == fibers_err == ""


@pytest.mark.parametrize("mode", ["memcheck", "synccheck"])
def test_the_checkers_report_nothing_and_keep_the_results(mode, fast_runs):
    (_, _, _), (fibers_out, _, _) = fast_runs
    out, err, _ = run_apart(PROGRAM, mode, "0")
    assert out == fibers_out
    assert err == ""


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
