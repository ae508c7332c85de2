"""The runtime's error paths through ctypes and host programs: launch timeouts, sticky and
non-sticky errors, race reports that name their own launch, and wild pointers, stack overflow and
device asserts as sticky errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from .conftest import ptr

CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_INVALID_CONFIGURATION = 9
CUDA_ERROR_LAUNCH_FAILURE = 719


# ---- launch timeout ----------------------------------------------------------------------------

CUDA_ERROR_LAUNCH_TIMEOUT = 702
_TIMEOUT_CODES = [CUDA_ERROR_LAUNCH_TIMEOUT] * 5 + [CUDA_SUCCESS, CUDA_SUCCESS, 0]


_TIMEOUT_CHILD = """
import ctypes, json, sys, time
import numpy as np
sem, lib, other = (ctypes.CDLL(p) for p in sys.argv[1:4])
kind = int(sys.argv[4])
# A launch in another library first: its copy of the runtime installs its own timeout handler.
out = np.zeros(3, dtype=np.int32)
assert sem.sem_sync_count(ctypes.c_void_p(out.ctypes.data), 32, 5) == 0
codes = np.full(8, -1, dtype=np.int32)
start = time.monotonic()
rc = lib.timeout_run(kind, 6, ctypes.c_void_p(codes.ctypes.data))
elapsed = time.monotonic() - start
data = np.arange(10.0)
copies = np.zeros((10, 6))
ok = other.cache_hints(ctypes.c_void_p(data.ctypes.data), ctypes.c_void_p(copies.ctypes.data), 10)
print(json.dumps({"rc": rc, "codes": codes.tolist(), "elapsed": elapsed,
                  "other": ok == 0 and bool((copies == data[:, None]).all())}))
"""


@pytest.mark.parametrize("kind", ["spin without barriers", "loop over barriers"])
def test_endless_launch_times_out_from_python(feature_lib, sim_lib_dir, kind):
    # In a child Python process, so that a launch that is not stopped fails the test, not hangs it.
    paths = [str(sim_lib_dir / "semantics.so"), feature_lib("timeout")._name, feature_lib("fp16")._name]
    env = dict(os.environ, SIMULATOR_TIMEOUT="0.5")
    env.pop("SIMULATOR_QUIET", None)
    proc = subprocess.run(
        [sys.executable, "-c", _TIMEOUT_CHILD, *paths, "0" if kind.startswith("spin") else "1"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["rc"] == CUDA_SUCCESS
    assert result["codes"] == _TIMEOUT_CODES
    assert 0.4 < result["elapsed"] < 20, result
    assert "launch timeout: kernel '" in proc.stderr and "SIMULATOR_TIMEOUT=0.5 s" in proc.stderr
    # The process stays usable: another library's launches still run.
    assert result["other"]


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_endless_launch_times_out_in_a_host_program(mode, tmp_path):
    from simulator.build import build_executable

    from .conftest import KERNELS

    exe = build_executable([KERNELS / "timeout.cu"], "timeout_selfcheck", mode)
    env = dict(os.environ, SIMULATOR_TIMEOUT="0.5", ASAN_OPTIONS="detect_leaks=1")
    env.pop("SIMULATOR_QUIET", None)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.count("launch timeout: kernel 'spin_kernel'") == 1, proc.stderr
    assert proc.stderr.count("launch timeout: kernel 'barrier_loop_kernel'") == 1, proc.stderr


def test_launch_timeout_default_is_shared_with_the_front_end():
    from simulator.limits import DEFAULT_LAUNCH_TIMEOUT_S, launch_timeout

    from .conftest import REPO

    header = (REPO / "simulator" / "runtime" / "sim_internal.h").read_text()
    assert f"kDefaultLaunchTimeoutS = {DEFAULT_LAUNCH_TIMEOUT_S!r};" in header
    assert launch_timeout({}) == DEFAULT_LAUNCH_TIMEOUT_S
    assert launch_timeout({"SIMULATOR_TIMEOUT": "2.5"}) == 2.5
    assert launch_timeout({"SIMULATOR_TIMEOUT": "0"}) == 0.0
    with pytest.raises(ValueError, match="SIMULATOR_TIMEOUT='soon'"):
        launch_timeout({"SIMULATOR_TIMEOUT": "soon"})


# ---- sticky and non-sticky errors ----------------------------------------------------------------

CUDA_ERROR_MEMORY_ALLOCATION = 2


def test_non_sticky_errors_are_reported_once_and_leave_the_device_usable(feature_lib, capfd):
    lib = feature_lib("errors")
    codes = np.full(16, -1, dtype=np.int32)
    assert lib.errors_nonsticky(ptr(codes)) == CUDA_SUCCESS
    oom, inval, config = (
        CUDA_ERROR_MEMORY_ALLOCATION,
        CUDA_ERROR_INVALID_VALUE,
        CUDA_ERROR_INVALID_CONFIGURATION,
    )
    want = [oom, oom, oom, CUDA_SUCCESS, oom, 1, oom, CUDA_SUCCESS, config, CUDA_SUCCESS, inval, inval, 1]
    want += [oom, CUDA_SUCCESS, CUDA_SUCCESS]
    assert codes.tolist() == want
    assert "not inside one live device allocation" in capfd.readouterr().err


def test_sticky_error_fails_every_later_call_until_reset(feature_lib, capfd):
    lib = feature_lib("errors")
    codes = np.full(14, -1, dtype=np.int32)
    assert lib.errors_sticky(ptr(codes)) == CUDA_SUCCESS
    fail = CUDA_ERROR_LAUNCH_FAILURE
    want = [fail] * 7 + [5, CUDA_SUCCESS, fail, fail, CUDA_SUCCESS, CUDA_SUCCESS, 1]
    assert codes.tolist() == want
    assert "deadlock in kernel 'stuck_kernel'" in capfd.readouterr().err


# ---- reports name the right launch -------------------------------------------------------------


def test_each_race_report_names_its_own_kernel_when_several_launch():
    from .conftest import KERNELS, run_cli

    src = KERNELS / "planted_two_kernel_races.cu"
    lines = src.read_text().splitlines()

    def line_of(marker: str) -> str:
        return f"{src}:{next(i for i, ln in enumerate(lines, 1) if marker in ln)}"

    proc = run_cli("check", str(src), "--entry", "planted_two_kernel_races", "--mode", "racecheck")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    races = [ln for ln in proc.stdout.splitlines() if ln.startswith("  racecheck: data race")]
    assert len(races) == 2, proc.stdout
    for race, name, which in zip(
        races, ("first_racy_kernel", "second_racy_kernel"), ("first", "second"), strict=True
    ):
        other = "second_racy_kernel" if which == "first" else "first_racy_kernel"
        assert f"write by kernel {name} block (0,0,0) thread (1,0,0)" in race, race
        assert f"read by kernel {name} block (0,0,0) thread (0,0,0)" in race, race
        assert line_of(f"PLANT: {which} write") in race and line_of(f"PLANT: {which} read") in race, race
        assert other not in race, race


_FAULT_CHILD = """
import ctypes, json, sys
import numpy as np
sem, lib = (ctypes.CDLL(p) for p in sys.argv[1:3])
out = np.zeros(3, dtype=np.int32)
assert sem.sem_sync_count(ctypes.c_void_p(out.ctypes.data), 32, 5) == 0  # another runtime copy first
codes = np.full(7, -1, dtype=np.int32)
rc = lib.errors_illegal_address(ctypes.c_void_p(codes.ctypes.data))
asserts = np.full(4, -1, dtype=np.int32)
rc_assert = lib.errors_assert(ctypes.c_void_p(asserts.ctypes.data))
print(json.dumps({"rc": rc, "codes": codes.tolist(), "rc_assert": rc_assert, "asserts": asserts.tolist()}))
"""


def test_wild_pointer_stack_overflow_and_device_assert_are_sticky_errors(feature_lib, sim_lib_dir):
    # In a child process: without the model, the fault would kill the interpreter.
    env = dict(os.environ)
    env.pop("SIMULATOR_QUIET", None)
    paths = [str(sim_lib_dir / "semantics.so"), feature_lib("errors")._name]
    proc = subprocess.run(
        [sys.executable, "-c", _FAULT_CHILD, *paths], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    illegal = 700
    assert result["rc"] == 0 and result["rc_assert"] == 0
    assert result["codes"] == [illegal, illegal, CUDA_SUCCESS, 1, illegal, CUDA_SUCCESS, 1]
    # A failed device assert(): cudaErrorAssert (710), sticky, the process goes on.
    assert result["asserts"] == [710, 710, CUDA_SUCCESS, 1]
    assert "block: [2,0,0], thread: [3,0,0] Assertion `!(blockIdx.x == 2 && threadIdx.x == 3)` failed" in (
        proc.stderr
    )
    assert "illegal address: kernel 'wild_kernel' block (1,0,0) thread (5,0,0) accessed 0x10" in proc.stderr
    assert "illegal address: kernel 'deep_kernel' block (0,0,0)" in proc.stderr  # stack overflow
