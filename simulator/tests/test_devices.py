"""Several modelled GPUs (``run --devices N``, ``SIMULATOR_DEVICES``): the device queries per
ordinal, the current device per host thread, peer access and its errors, allocations and memory
pools per device, copies and a kernel across devices, a reset of one device; and how the number
of devices is chosen and validated. Expected values are computed here from the program's input
formulas."""

from __future__ import annotations

import pytest

from simulator.check import run_check
from simulator.limits import resolve_devices
from simulator.run import run_program

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli, token_values

PROGRAM = KERNELS / "program_devices.cu"
INVALID_DEVICE = "cudaErrorInvalidDevice"
CUDA_ERROR_INVALID_DEVICE = 101  # the driver API's CUDA_ERROR_INVALID_DEVICE


def _host(n: int) -> list[int]:
    """The program's host input: i * i - 7."""
    return [i * i - 7 for i in range(n)]


def _check_program_output(v: dict[str, str], count: int) -> None:
    assert v["count"] == str(count)
    # Identical devices, each at its own PCI location.
    assert v["same_name"] == "1" and v["same_sms"] == "1"
    assert v["bus0"] != v["bus_last"] and v["dev0"] != v["dev_last"]
    assert v["bus_attr_last"] == v["bus_last"]
    for key in (
        "props_past",
        "set_past",
        "set_negative",
        "attr_past",
        "can_past",
        "enable_past",
        "pool_past",
    ):
        assert v[key] == INVALID_DEVICE, key
    assert int(v["cu_get_last"]) == 0 and int(v["cu_device"]) == count - 1
    assert int(v["cu_get_past"]) == CUDA_ERROR_INVALID_DEVICE
    # The current device is per host thread: a new thread starts on 0, and setting it there
    # leaves the main thread's (1) alone.
    assert (v["thread_initial"], v["thread_after"], v["main_after"]) == ("0", "0", "1")
    for t in range(count):
        assert v[f"worker{t}_dev"] == str(t) and v[f"worker{t}_alloc_dev"] == str(t)
        assert int(v[f"worker{t}_sum"]) == sum(i + 1000 * (t + 1) for i in range(100))
    # Peer access: distinct devices are peers, a device is not its own.
    assert (v["can01"], v["can11"]) == ("1", "0")
    assert v["enable"] == "cudaSuccess"
    assert v["enable_again"] == "cudaErrorPeerAccessAlreadyEnabled"
    assert v["disable"] == "cudaSuccess"
    assert v["disable_again"] == "cudaErrorPeerAccessNotEnabled"
    assert v["enable_self"] == INVALID_DEVICE
    # Allocations report their device: a on 0; b, managed and pinned made while 1 was current.
    assert (v["dev_a"], v["dev_b"], v["dev_b_inner"], v["dev_managed"], v["dev_pinned"]) == (
        "0",
        "1",
        "1",
        "1",
        "1",
    )
    assert v["dev_stack"] == "-2"  # cudaInvalidDeviceId: not memory CUDA knows
    # cudaMemoryType: Device 2, Managed 3, Host 1, Unregistered 0.
    assert (v["type_a"], v["type_managed"], v["type_pinned"], v["type_stack"]) == ("2", "3", "1", "0")
    for key in ("peer_copy", "peer_copy_async", "enable_10", "launch", "sync", "default_copy", "reset"):
        assert v[key] == "cudaSuccess", key
    host = _host(300)
    # b = a by a peer copy; the kernel on device 1 computes 2a + b from device 0's a.
    assert int(v["combined_sum"]) == sum(3 * x for x in host)
    assert int(v["managed_sum"]) == sum(host)
    # Pools are per device; the stream-ordered allocation comes from the current device's pool.
    assert (v["pools_differ"], v["current1_default"]) == ("1", "1")
    assert (v["dev_async"], v["dev_from0"]) == ("1", "0")
    assert (int(v["used0"]), int(v["used1"])) == (1000, 4096)
    assert v["set_other_pool"] == INVALID_DEVICE
    # The reset of device 1 frees its memory and ends peer access to it; device 0's memory stays.
    assert (v["after_reset_type_b"], v["after_reset_type_a"]) == ("0", "2")
    # cudaFree took device 0's 1000 bytes off its pool (its high-water mark stays); the reset
    # freed device 1's 4096 and made its default pool new: nothing used, no mark, no threshold.
    assert (v["after_reset_used0"], v["after_reset_high0"]) == ("0", "1000")
    assert (v["after_reset_used1"], v["after_reset_high1"], v["after_reset_threshold1"]) == ("0", "0", "0")
    assert v["after_reset_copy_a"] == "cudaSuccess"
    assert v["after_reset_enable"] == "cudaSuccess"  # not AlreadyEnabled: the reset ended it
    assert int(v["a_sum"]) == sum(host)


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_a_two_gpu_program_runs_in_every_mode(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), "--devices", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr == ""
    _check_program_output(token_values(proc.stdout), 2)


def test_the_variable_sets_the_count_and_the_option_wins(monkeypatch):
    monkeypatch.setenv("SIMULATOR_DEVICES", "3")
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_program_output(token_values(proc.stdout), 3)
    proc = run_cli("run", str(PROGRAM), "--devices", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert token_values(proc.stdout)["count"] == "2"
    # With --devices given, a bad variable does not matter.
    monkeypatch.setenv("SIMULATOR_DEVICES", "zero")
    proc = run_cli("run", str(PROGRAM), "--devices", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_one_device_by_default(monkeypatch):
    monkeypatch.delenv("SIMULATOR_DEVICES", raising=False)
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 3, proc.stdout + proc.stderr  # the program needs two
    assert token_values(proc.stdout)["count"] == "1"


@pytest.mark.parametrize("value", ["0", "17", "-1", "two", "2.5", ""])
def test_a_bad_option_is_refused_with_the_value_and_the_fix(value):
    proc = run_cli("run", str(PROGRAM), "--devices", value)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    line = proc.stderr.strip()
    assert line.startswith(f"simulator: --devices {value!r} is not valid"), line
    assert "from 1 to 16" in line and "--devices 2" in line


@pytest.mark.parametrize("value", ["0", "17", "x"])
def test_a_bad_variable_is_refused_before_building(monkeypatch, value):
    monkeypatch.setenv("SIMULATOR_DEVICES", value)
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == (
        f"simulator: SIMULATOR_DEVICES={value!r} is not valid: give a whole number of modelled GPUs "
        "from 1 to 16, or leave it unset (default: 1)"
    )


def test_resolve_devices_takes_the_argument_then_the_variable():
    assert resolve_devices(None, {}) == 1
    assert resolve_devices(None, {"SIMULATOR_DEVICES": "4"}) == 4
    assert resolve_devices(2, {"SIMULATOR_DEVICES": "4"}) == 2
    assert resolve_devices(16, {}) == 16


@pytest.mark.parametrize(
    "bad,error", [(0, ValueError), (17, ValueError), ("2", TypeError), (2.0, TypeError), (True, TypeError)]
)
def test_run_program_refuses_bad_devices_before_building(bad, error):
    with pytest.raises(error, match=r"devices=.*1 to 16"):
        run_program([str(PROGRAM)], devices=bad)


def test_device_code_sees_the_device_its_launch_runs_on():
    proc = run_cli("run", str(KERNELS / "program_device_in_kernel.cu"), "--devices", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = token_values(proc.stdout)
    assert v["launch"] == "cudaSuccess"
    assert (v["seen0"], v["seen1"], v["seen2"]) == ("0", "1", "2")


def test_the_programs_build_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = nvcc_compile(KERNELS / "program_device_in_kernel.cu", tmp_path, rdc=True)
    assert proc.returncode == 0, proc.stderr


CHECK_ENTRY = r"""
#include <cuda_runtime.h>
__global__ void fill(int* out, int value) { out[threadIdx.x] = value + threadIdx.x; }

// 0 when the entry sees exactly EXPECTED devices and a kernel on each computes its values.
extern "C" int devices_entry(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count != EXPECTED) return 10 + count;
    for (int d = 0; d < count; ++d) {
        int host[32];
        int* dev = nullptr;
        if (cudaSetDevice(d) != cudaSuccess || cudaMalloc(&dev, sizeof host) != cudaSuccess) return 2;
        fill<<<1, 32>>>(dev, 100 * d);
        if (cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
        cudaFree(dev);
        for (int i = 0; i < 32; ++i)
            if (host[i] != 100 * d + i) return 4;
    }
    return 0;
}
"""


def _check_entry(tmp_path, expected: int):
    src = tmp_path / f"devices_entry_{expected}.cu"
    src.write_text(CHECK_ENTRY.replace("EXPECTED", str(expected)))
    return src


def test_check_takes_devices_and_it_wins_over_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMULATOR_DEVICES", "zero")  # ignored: --devices is given
    src = _check_entry(tmp_path, 3)
    proc = run_cli("check", str(src), "--entry", "devices_entry", "--mode", "memcheck", "--devices", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "memcheck: clean (devices_entry returned 0)"
    monkeypatch.setenv("SIMULATOR_DEVICES", "3")
    assert run_check([str(src)], "devices_entry", "synccheck").ok
    # One device by default: the entry returns 10 + the count it saw.
    monkeypatch.delenv("SIMULATOR_DEVICES")
    res = run_check([str(src)], "devices_entry", "synccheck")
    assert not res.ok and res.findings == ["entry 'devices_entry' returned 11"], res.findings


def test_check_refuses_a_bad_devices_value(tmp_path):
    src = _check_entry(tmp_path, 2)
    proc = run_cli("check", str(src), "--entry", "devices_entry", "--devices", "17")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().startswith("simulator: --devices '17' is not valid"), proc.stderr
    with pytest.raises(ValueError, match=r"devices=0 .*1 to 16"):
        run_check([str(src)], "devices_entry", "memcheck", devices=0)
