"""A statement that updates a thread's own array from its other elements (``call[j] = pu *
call[j + 1] + pd * call[j]``, hecbench's binomial) is not routed through ``lockstep_assign``: no
other lane sees such an array, so the kernel keeps no fibers for it and runs as block loops in a
fast build, with the fibers' results; memcheck and synccheck find the same either way. A
``__shared__`` array's such statement is still rewritten (test_lockstep.py runs those).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from .conftest import KERNELS, launch_ways, line_of, mode_args, once_per_arguments, run_cli, run_findings

PROGRAM = KERNELS / "program_private_arrays.cu"
THREADS, ELEMS, BLOCKS = 64, 4, 3


@once_per_arguments
def _run(mode: str, fibers: str, *args: str):
    """(process, {kernel: how it ran}) of the program in ``mode`` (one worker: a fault's order)."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), "--", *args, env=env)
    return proc, launch_ways(proc.stderr, mode)


def _values(stdout: str) -> np.ndarray:
    line = next(ln for ln in stdout.splitlines() if ln.startswith("out "))
    return np.array([float(v) for v in line.split()[1:]], dtype=np.float32)


def _lattice() -> np.ndarray:
    """The kernel's lattice in float32, each block's values stepped back as its threads do."""
    steps = THREADS * ELEMS
    start = (np.arange(BLOCKS * steps + 1) * 7 % 13).astype(np.float32) * np.float32(0.125)
    out = []
    half = np.float32(0.5)
    for b in range(BLOCKS):
        v = start[b * steps : b * steps + steps + 1].copy()
        for i in range(steps, 0, -1):
            # Thread t updates its elements 4t..4t+3 while i > 4t - 1, from the old values.
            live = min(steps, ELEMS * ((i + ELEMS) // ELEMS))
            v[:live] = half * v[1 : live + 1] + half * v[:live]
        out.append(v[:steps:ELEMS])
    return np.concatenate(out)


def test_fast_runs_the_kernel_as_block_loops_with_the_fibers_results():
    loops, ways = _run("fast", "0")
    fibers, fiber_ways = _run("fast", "1")
    assert loops.returncode == fibers.returncode == 0, loops.stderr[-3000:]
    assert ways == {"lattice": "as block loops"}, loops.stderr[-3000:]
    assert fiber_ways == {"lattice": "with fibers"}
    assert loops.stdout == fibers.stdout
    assert "status cudaSuccess" in loops.stdout
    # Each step rounds once or twice (a product and a sum, or one fused multiply-add): within a
    # few units in the last place of the float32 model after 256 steps.
    np.testing.assert_allclose(_values(loops.stdout), _lattice(), rtol=1e-5)


def test_memcheck_finds_the_shared_read_past_the_end_the_same_both_ways():
    loops, ways = _run("memcheck", "0", "oob")
    fibers, _ = _run("memcheck", "1", "oob")
    found = [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(loops.stderr)]
    assert found, loops.stderr[-3000:]
    assert found == [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(fibers.stderr)]
    assert (loops.returncode, loops.stdout) == (fibers.returncode, fibers.stdout)
    assert "status cudaErrorLaunchFailure" in loops.stdout
    where = f"{PROGRAM}:{line_of(PROGRAM, 'PLANT-OOB')}"
    assert all(where in f for f in found if f.startswith("memcheck: ")), found
    assert ways == {"lattice": "with fibers"}  # an array lives across a barrier (block_loops_order.py)


@pytest.mark.parametrize("mode", ["memcheck", "synccheck"])
def test_the_checkers_run_the_correct_kernel_clean_with_the_fast_results(mode):
    fast, _ = _run("fast", "0")
    for fibers in ("0", "1"):
        proc, _ = _run(mode, fibers)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout == fast.stdout
        assert run_findings(proc.stderr) == []


_TRANSLATED = """\
__global__ void k(float* x, float up) {
    __shared__ float s[65];
    float own[5];
    for (int j = 0; j < 5; ++j) own[j] = x[threadIdx.x + j];
    for (int j = 0; j < 4; ++j) own[j] = up * own[j + 1] + own[j];
    s[threadIdx.x] = own[0];
    __syncthreads();
    if (threadIdx.x < 32) s[threadIdx.x] += s[threadIdx.x + 16];
    x[threadIdx.x] = s[threadIdx.x];
}
"""


def test_only_the_shared_arrays_statement_is_routed_through_lockstep(tmp_path):
    from simulator.build import translate_source

    src = tmp_path / "k.cu"
    src.write_text(_TRANSLATED)
    out = translate_source(src)
    assert out.count("::__sim::lockstep_assign(") == 1, out
    assert re.search(r"lockstep_assign\(\s*s\[threadIdx\.x\]", out), out
    assert re.search(r"own\[j\] = up \* own\[j \+ 1\] \+ own\[j\];", out), out
