"""Device memory is a real limit and a stream is a handle that calls check, as on a GPU
(kernels/program_device_limits.cu): an allocation past what the device has left fails with
cudaErrorMemoryAllocation (2), whichever call makes it; a garbage or destroyed stream is refused with
cudaErrorInvalidResourceHandle (400)."""

from __future__ import annotations

from .conftest import KERNELS, int_values, run_cli

PROGRAM = KERNELS / "program_device_limits.cu"
REFUSED_ALLOCATIONS = ("twice", "huge", "second", "managed", "pitch", "async", "malloc3d")
REFUSED_STREAMS = ("destroyed_stream", "garbage_stream", "memcpy_async", "synchronize", "destroy_again")


def test_allocations_past_the_device_memory_and_calls_on_unknown_streams_fail_as_on_a_gpu():
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = int_values(proc.stdout)
    assert v["total_matches"] == 1 and v["free_drop_matches"] == 1
    assert {k: v[k] for k in REFUSED_ALLOCATIONS} == dict.fromkeys(REFUSED_ALLOCATIONS, 2)
    assert v["first"] == 0 and v["after_free"] == 0  # what is freed can be allocated again
    assert {k: v[k] for k in REFUSED_STREAMS} == dict.fromkeys(REFUSED_STREAMS, 400)
    assert v["live_stream"] == v["per_thread_stream"] == v["default_stream"] == 0
    assert "done" in proc.stdout


def test_the_device_memory_is_configurable():
    proc = run_cli("run", str(PROGRAM), env={"SIMULATOR_DEVICE_MEMORY_MIB": "96"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = int_values(proc.stdout)
    assert v["total_mib"] == 96 and v["first"] == 0 and v["second"] == 2 and v["after_free"] == 0


def test_a_bad_device_memory_size_is_refused_with_one_line():
    proc = run_cli("run", str(PROGRAM), env={"SIMULATOR_DEVICE_MEMORY_MIB": "lots"})
    assert proc.returncode == 2
    assert "SIMULATOR_DEVICE_MEMORY_MIB='lots' is not valid" in proc.stderr
    assert "Traceback" not in proc.stderr
