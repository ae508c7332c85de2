"""memcheck, synccheck and racecheck (of __shared__ memory, its default) run barrier-free launches
as plain loops, as fast mode does: what they find is the same as with fibers (SIMULATOR_FIBERS=1),
and each finding still names the kernel's own line, block and thread. racecheck over all memory
(ThreadSanitizer) keeps a fiber per CUDA thread.

The program (kernels/program_plain_checkers.cu) plants one bug per argument in a barrier-free
kernel; "wait" launches a kernel that reaches a barrier with the barrier-free flag set, which
only a plain loop refuses, so it shows which way a mode ran.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, line_of, mode_args, run_cli

PROGRAM = KERNELS / "program_plain_checkers.cu"


def _summary(stderr: str) -> list[str]:
    """The findings ``run`` lists after the program's output (addresses left out: a thread's
    stack lies elsewhere in a plain loop)."""
    out, inside = [], False
    for ln in stderr.splitlines():
        if re.match(r"simulator: run \(\w+\): \d+ finding\(s\):", ln):
            inside = True
            continue
        if inside and ln.startswith("  "):
            out.append(re.sub(r"0x[0-9a-f]+", "0x?", ln.strip()))
        elif inside:
            break
    return out


def _run_both_ways(monkeypatch, mode: str, case: str, *options: str):
    """(plain-loop run, fiber run) of the program with argument ``case`` in ``mode``."""
    runs = []
    # One worker: with several, which block faults first depends on how the OS schedules them.
    monkeypatch.setenv("SIMULATOR_THREADS", "1")
    for fibers in ("0", "1"):
        monkeypatch.setenv("SIMULATOR_FIBERS", fibers)
        runs.append(run_cli("run", str(PROGRAM), *mode_args(mode), *options, "--", case))
    return runs


# case -> (the finding's kind as run lists it, the planted line's marker, block, the threads that
# fault, in order, what the program's cudaDeviceSynchronize returned). A memory fault fails its
# launch, as under compute-sanitizer; the program goes on and run exits 1 for the finding. Each
# faulting thread of the first faulting warp is one finding (the rest of a warp runs on after a
# fault, as its lanes would in lockstep); UBSan reports a source location once.
MEMCHECK_FINDINGS = {
    # n - 40 past the start of an n-float buffer: block 1's threads from 40 - 32 = 8 on.
    "oob": (
        "heap-buffer-overflow: write_past_end",
        "PLANT-OOB",
        "(1,0,0)",
        range(8, 32),
        "cudaErrorLaunchFailure",
    ),
    # Every thread of block 0 (one warp) reads the freed buffer.
    "uaf": ("heap-use-after-free: read_freed", "PLANT-UAF", "(0,0,0)", range(32), "cudaErrorLaunchFailure"),
    # tile[threadIdx.x + 8] in 32 floats: threads 24 to 31.
    "shared_oob": (
        "heap-buffer-overflow: shared_past_end",
        "PLANT-SHARED-OOB",
        "(0,0,0)",
        range(24, 32),
        "cudaErrorLaunchFailure",
    ),
    # local[threadIdx.x] in 4 ints, 8 threads: threads 4 to 7.
    "stack_oob": (
        "stack-buffer-overflow: local_past_end",
        "PLANT-STACK-OOB",
        "(0,0,0)",
        range(4, 8),
        "cudaErrorLaunchFailure",
    ),
    # (threadIdx.x + 2) * 429496730 passes INT_MAX from thread 3 on; 4 threads.
    "ub": ("undefined behaviour: signed integer overflow", "PLANT-UB", "(0,0,0)", range(3, 4), "cudaSuccess"),
}


@pytest.mark.parametrize("case", sorted(MEMCHECK_FINDINGS))
def test_memcheck_finds_the_same_in_a_plain_loop_as_with_fibers(monkeypatch, case):
    kind, marker, block, threads, synced = MEMCHECK_FINDINGS[case]
    plain, fibers = _run_both_ways(monkeypatch, "memcheck", case)
    assert plain.returncode == fibers.returncode == 1, plain.stderr
    assert plain.stdout == fibers.stdout == f"{case}: {synced}\n"
    found = _summary(plain.stderr)
    assert found == _summary(fibers.stderr)
    hits = [f for f in found if f.startswith(f"memcheck: {kind}")]
    assert len(hits) == len(threads), found
    for hit, thread in zip(hits, threads):
        assert f"{PROGRAM}:{line_of(PROGRAM, marker)}; in kernel " in hit, hit
        assert f" block {block} " in hit and hit.endswith(f"thread ({thread},0,0)"), hit


def test_memcheck_leak_check_is_the_same_in_a_plain_loop(monkeypatch):
    plain, fibers = _run_both_ways(monkeypatch, "memcheck", "leak", "--leak-check", "full")
    assert plain.returncode == fibers.returncode == 1, plain.stderr
    found = _summary(plain.stderr)
    assert found == _summary(fibers.stderr)
    line = line_of(PROGRAM, "PLANT-LEAK")
    want = f"memcheck: device memory leak: 1024 bytes from cudaMalloc in main at {PROGRAM}:{line}"
    assert len(found) == 1 and found[0].startswith(want), found


@pytest.mark.parametrize("mode", ["memcheck", "synccheck"])
def test_a_launch_timeout_is_reported_the_same_in_a_plain_loop(monkeypatch, mode):
    # The launch computes for hours, so any limit stops it; the run as a whole may take twice the
    # limit, and the program's start and its end after the stop take under 0.1 s at a load of 11
    # on two cores.
    plain, fibers = _run_both_ways(monkeypatch, mode, "timeout", "--timeout", "1")
    assert plain.returncode == fibers.returncode == 0, plain.stderr
    assert plain.stdout == fibers.stdout == "timeout: cudaErrorLaunchTimeout\n"
    assert _summary(plain.stderr) == _summary(fibers.stderr) == []
    for proc in (plain, fibers):
        assert f"launch timeout: kernel 'busy' (launched at {PROGRAM}:" in proc.stderr
        assert "AddressSanitizer" not in proc.stderr and "WARNING" not in proc.stderr


@pytest.mark.parametrize("mode", ["memcheck", "synccheck"])
def test_correct_barrier_free_launches_run_clean_both_ways(monkeypatch, mode):
    for proc in _run_both_ways(monkeypatch, mode, "clean"):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "clean: cudaSuccess"
        assert "finding" not in proc.stderr


@pytest.mark.parametrize("mode", ["memcheck", "synccheck", "racecheck"])
def test_the_checkers_run_barrier_free_launches_as_plain_loops(monkeypatch, mode):
    # Only a plain loop refuses a wait in a launch marked barrier-free; SIMULATOR_FIBERS=1 runs
    # the same launch with fibers, where the barrier works.
    plain, fibers = _run_both_ways(monkeypatch, mode, "wait")
    assert plain.stdout.strip() == "wait: cudaErrorLaunchFailure", plain.stderr
    refusal = f"reached __syncthreads at {PROGRAM}:{line_of(PROGRAM, 'PLANT-WAIT')}, but the launch"
    assert refusal in plain.stderr and "plain loop" in plain.stderr
    assert fibers.returncode == 0, fibers.stderr
    assert fibers.stdout.strip() == "wait: cudaSuccess"


def test_racecheck_of_all_memory_keeps_fibers_for_barrier_free_launches(monkeypatch):
    # Each CUDA thread is a ThreadSanitizer fiber with a stack of its own there.
    for proc in _run_both_ways(monkeypatch, "racecheck-all", "wait"):
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == "wait: cudaSuccess"
