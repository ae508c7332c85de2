"""A call that records its call site (``__syncthreads_count``, ``__shfl_down_sync``) as the operand
of a shift the front end rewrites builds and computes as on a GPU, in block loops and in fibers."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_site_call_operand.cu"


@pytest.mark.parametrize("fibers", ["0", "1"])
def test_a_site_call_inside_a_rewritten_shift_builds_and_counts(fibers):
    proc = run_cli("run", str(PROGRAM), "--mode", "fast", env={"SIMULATOR_FIBERS": fibers})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert v["sum"] == v["expected"] == str(sum((i * 37) & 0xFF for i in range(256)))
    assert v["left"] == str(1 << 3)
    assert v["shuffled"] == str(1 << 4)  # lane 0 reads lane 1's value
    assert v["error"] == "cudaSuccess"
