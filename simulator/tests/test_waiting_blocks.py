"""Blocks that wait for one another: a block that only spins lets a block not yet started run
beside it, as a GPU keeps a small grid's blocks resident (runtime/scheduler.cpp, take_turns),
up to what the modelled device holds at once; a wait nothing ends still stops at the launch limit.

Two workers (SIMULATOR_THREADS=2) run 16 blocks in which block b waits for block b + 1, so the
blocks cannot finish one after another as the workers take them."""

from __future__ import annotations

import re

import pytest

from .conftest import EVERY_MODE, KERNELS, int_values, mode_args, nvcc_compile, run_cli

PROGRAM = KERNELS / "program_waiting_blocks.cu"
GRID = 16  # the chain's blocks (program_waiting_blocks.cu)
STARTED = re.compile(r"launch log \(\w+\): kernel '\w+' .* started (\d+) block\(s\) beside blocks that spin")


def _run(mode: str, case: str, threads: int = 2, timeout: int = 120):
    env = {"SIMULATOR_THREADS": str(threads), "SIMULATOR_LAUNCH_LOG": "1"}
    return run_cli("run", str(PROGRAM), *mode_args(mode), "--timeout", str(timeout), "--", case, env=env)


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_block_zero_waits_for_the_last_block_of_the_grid(mode):
    # ThreadSanitizer over every access reports the volatile poll against the atomic store, the
    # race C++ makes of it: that build runs the atomic and __nanosleep polls only.
    case = "atomics" if mode == "racecheck-all" else "chain"
    proc = _run(mode, case)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    got = int_values(proc.stdout)
    kinds = ["atomic", "sleep"] + (["volatile"] if case == "chain" else [])
    for kind in kinds:
        assert f"{kind}_error=cudaSuccess" in proc.stdout, proc.stdout + proc.stderr[-3000:]
        assert got[f"{kind}_token0"] == GRID
        assert got[f"{kind}_bad"] == 0
    assert got["ok"] == 1
    # Two workers held two blocks; the others ran beside the spinning ones, every launch.
    started = [int(n) for n in STARTED.findall(proc.stderr)]
    assert len(started) == len(kinds)
    assert all(GRID - 2 <= n <= GRID - 1 for n in started), started
    assert "finding" not in proc.stderr


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_look_back_scan_over_4096_blocks(mode):
    proc = _run(mode, "lookback")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    got = int_values(proc.stdout)
    assert "lookback_error=cudaSuccess" in proc.stdout
    assert got["lookback_bad"] == 0 and got["ok"] == 1


def test_as_many_waiting_blocks_as_the_device_holds_finish():
    # One worker: every block but its own runs beside it, up to the occupancy bound.
    proc = _run("fast", "fits", threads=1)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    got = int_values(proc.stdout)
    assert got["atomic_bad"] == 0 and got["ok"] == 1
    assert got["atomic_token0"] == got["most"]
    if got["most"] > 1:
        assert [int(n) for n in STARTED.findall(proc.stderr)] == [got["most"] - 1]


def test_one_block_beyond_what_the_device_holds_times_out():
    # On a GPU the last block would never become resident while the others spin: a hang there,
    # the launch limit here.
    proc = _run("fast", "beyond", threads=1, timeout=2)
    assert "atomic_error=cudaErrorLaunchTimeout" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "launch timeout: kernel" in proc.stderr
    started = [int(n) for n in STARTED.findall(proc.stderr)]
    assert started == [int_values(proc.stdout)["most"] - 1]


@pytest.mark.parametrize("mode", ["fast", "memcheck", "racecheck", "synccheck"])
def test_a_wait_no_block_ends_still_stops_at_the_launch_limit(mode):
    proc = _run(mode, "stuck", timeout=2)
    assert "stuck_error=cudaErrorLaunchTimeout" in proc.stdout, proc.stdout + proc.stderr[-3000:]
    assert "launch timeout: kernel 'stuck'" in proc.stderr


def test_spinning_loops_are_wrapped_and_others_are_not(tmp_path):
    from simulator.build import translate_source

    src = tmp_path / "spins.cu"
    src.write_text(
        "__global__ void k(int* f, volatile int* v, int n) {\n"
        "    while (atomicAdd(&f[0], 0) == 0) { }\n"
        "    do { } while (v[1] == 0);\n"
        "    for (int i = 0; atomicOr(&f[2], 0) == 0; ++i) { }\n"
        "    for (int i = 0; i < n; ++i) f[i + 3] = i;\n"
        "}\n"
    )
    text = translate_source(src)
    assert text.count("::__sim::spinning(static_cast<bool>(") == 3
    assert "(::__sim::spinning(static_cast<bool>(atomicAdd(&f[0], 0) == 0)))" in text
    assert "(::__sim::spinning(static_cast<bool>(v[1] == 0)))" in text
    assert ";::__sim::spinning(static_cast<bool>( atomicOr(&f[2], 0) == 0));" in text
    assert "for (int i = 0; i < n; ++i)" in text


def test_waiting_blocks_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
