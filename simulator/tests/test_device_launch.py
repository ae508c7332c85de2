"""Dynamic parallelism: kernels launched from device code (CUDA 12/13's CDP2, and CUDA 11's
device-side cudaDeviceSynchronize), in every mode."""

from __future__ import annotations

import random

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, int_values, mode_args, nvcc_compile, run_cli

SORT_SUM = KERNELS / "cdp_sort_sum.cu"
# The semantics and the child-grid errors are cases of the sort-and-sum program ("semantics",
# "errors CASE"): one build per mode for all three.
SEMANTICS = ERRORS = SORT_SUM
CDP1 = KERNELS / "cdp1_device_sync.cu"  # CUDA 11's device-side wait: nvcc 13 refuses it

# CUDA's codes, from its documentation (driver_types.h).
INVALID_CONFIGURATION = 9
LAUNCH_MAX_DEPTH_EXCEEDED = 65
ILLEGAL_ADDRESS = 700
LAUNCH_TIMEOUT = 702
ASSERT = 710
LAUNCH_FAILURE = 719


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_recursive_quicksort_and_tree_sum_match_python(tmp_path, mode):
    rng = random.Random(20 + len(mode))
    values = [rng.randrange(2**32) for _ in range(1500)] + [7] * 40  # duplicates too
    rng.shuffle(values)
    src, out = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("\n".join(map(str, values)) + "\n")
    proc = run_cli("run", str(SORT_SUM), *mode_args(mode), "--", str(src), str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["status"] == 0
    assert got["sum"] == int(np.array(values, dtype=np.uint64).sum())
    assert [int(v) for v in out.read_text().split()] == sorted(values)


def test_device_launch_semantics():
    proc = run_cli("run", str(SEMANTICS), "--", "semantics")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["set_limit"] == 0  # cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount) accepted
    # A tail launch runs after the parent's other children, whatever the launch order.
    assert got["tail"] == 2
    assert {got["default"], got["fire_and_forget"]} == {0, 1}
    # Arguments are converted and copied at the launch.
    assert got["arg_int"] == 5 and got["arg_float_x4"] == 11 and got["parent_after"] == 99
    # Nesting: a host launch is depth 0 and CUDA allows 24 levels, so the grid at depth 24
    # cannot launch; its launch error is its own, and the depth-25 grid never runs.
    assert got["nest_status"] == 0
    assert got["deepest_ok_launcher"] == 23
    assert got["depth_error"] == LAUNCH_MAX_DEPTH_EXCEEDED
    assert got["beyond"] == -1
    # A bad configuration fails only the launching thread's launch, non-sticky.
    assert got["bad_config_status"] == 0
    assert got["peek0"] == INVALID_CONFIGURATION and got["peek1"] == 0
    assert got["get0"] == INVALID_CONFIGURATION and got["get1"] == 0
    assert got["again0"] == 0
    # Dynamic shared memory, barriers and a grandchild: 1 + 2 + ... + 32.
    assert got["shared_sum"] == sum(range(1, 33))
    # A copy issued after a child launch in the same stream sees the child's write.
    assert got["copied"] == 7
    assert got["get_device"] == 0 and got["device"] == 0
    assert got["attr_status"] == 0 and got["max_threads"] == 1024
    assert got["heap"] == 42
    assert got["malloc_status"] == 0 and got["malloc_value"] == 17 and got["free_status"] == 0
    assert got["last"] == 0


@pytest.mark.parametrize(
    "case,code,report",
    [
        ("trap", LAUNCH_FAILURE, "called __trap() (kernel 'grandchild_trap')"),
        ("assert", ASSERT, "(kernel 'child_assert')"),
    ],
)
def test_an_error_in_a_child_grid_fails_the_host_launch_sticky(case, code, report):
    proc = run_cli("run", str(ERRORS), "--", "errors", case)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["sync"] == code
    assert got["after"] == code  # sticky
    assert report in proc.stderr


def test_memcheck_names_the_child_kernel_that_writes_out_of_bounds():
    proc = run_cli("run", str(ERRORS), "--mode", "memcheck", "--", "errors", "oob")
    # The fault fails the launch and the program goes on (its own status 0, made 1 by the finding).
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(i for i, s in enumerate(ERRORS.read_text().splitlines(), 1) if "p[n + threadIdx.x] = 1" in s)
    assert f"{ERRORS.name}:{line}" in proc.stderr
    assert "kernel 'child_oob'" in proc.stderr
    # The child runs the call by name of its definition's registration (launch_by_name): like a
    # launch's own lambda, that call is no frame of the report, whose host frames follow it.
    block = proc.stderr[proc.stderr.index("kernel 'child_oob'") :].split("=========\n")[0]
    assert "=========     Host frames of the launch:" in block, block
    assert "called from operator()" not in block, block


def test_a_parent_spinning_on_its_child_times_out_and_says_why():
    proc = run_cli("run", str(ERRORS), "--timeout", "2", "--", "errors", "spin", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["sync"] == LAUNCH_TIMEOUT
    assert "kernel 'parent_spin' had launched 1 child grid(s) from device code" in proc.stderr


def _cdp1(case: str, mode: str = "fast") -> dict[str, int]:
    proc = run_cli("run", str(CDP1), *mode_args(mode), "--", case, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    note = (
        "cudaDeviceSynchronize() in device code (CUDA 11's dynamic parallelism) is gone from current CUDA; "
        "it runs as in CUDA 11"
    )
    assert note in proc.stderr
    return int_values(proc.stdout)


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_cdp1_device_synchronize_lets_a_block_read_its_childrens_results(mode):
    # 8 blocks wait for their own children, then all 64 threads of each read what they wrote.
    got = _cdp1("squares", mode)
    assert got == {"status": 0, "squares_total": sum(i * i for i in range(512))}


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_cdp1_recursive_tree_sum_waits_level_by_level(mode):
    got = _cdp1("tree", mode)
    values = (np.arange(1000, dtype=np.int64) * 7919) % 1013 - 500
    assert got == {"status": 0, "tree_sum": int(values.sum())}


def test_cdp1_device_synchronize_waits_for_a_device_side_copy_too():
    assert _cdp1("copy") == {"status": 0, "seen": 41}


def test_cdp1_device_synchronize_with_nothing_launched_returns_success():
    assert _cdp1("nothing") == {"status": 0, "device_status": 0}


def test_cdp1_device_synchronize_returns_a_childs_failure():
    proc = run_cli("run", str(CDP1), "--", "fault")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert int_values(proc.stdout) == {"status": ASSERT, "device_status": ASSERT}
    assert "(kernel 'failing_child')" in proc.stderr


def test_device_launch_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(SORT_SUM, tmp_path, rdc=True)
    assert proc.returncode == 0, proc.stderr
