"""What Rodinia's CUDA suite needs to run unmodified (issue 20 item 9): symbols named by a string,
<cuda.h>'s CUDA_SUCCESS and driver-API device queries, <cuda_gl_interop.h> included but unused,
the full list of error names, copy/kernel overlap, a constant defined in each __CUDA_ARCH__ pass,
-D macros. Expected values come from the program's own arithmetic, CUDA's driver_types.h and
simulator/docs/supported.md."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_rodinia_legacy.cu"
N = 40
FACTORS = (0.5, 2.0, -3.0, 10.0)


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_rodinia_legacy_forms_compute_by_value(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    for i in range(N):
        assert float(v[f"out{i}"]) == (i + 1) * FACTORS[i % 4], i
    assert v["hits"] == str(N)  # one atomicAdd per thread with i < n, read back by name
    assert v["second"] == "2"
    assert v["unknown"] == "13"  # cudaErrorInvalidSymbol
    assert v["too_long"] == "1"  # cudaErrorInvalidValue: 16 bytes at offset 4 of a 16-byte array
    # One program has one SHM_LIMIT: the host pass's definition (nvcc's device code sees 48 KiB).
    assert v["host_limit"] == str(16 * 1024)
    assert v["device_limit"] == str(16 * 1024)
    # cudaDeviceProp::deviceOverlap is gone from CUDA 13's header (nvcc 13 refuses it); the attribute stays
    assert v["attr_overlap"] == "1"
    assert v["asyncEngineCount"] == "3"
    assert v["map_failed"] == "205 cudaErrorMapBufferObjectFailed"  # CUDA's driver_types.h value
    assert v["api_base"] == "10000"
    assert v["cu_init"] == "0"
    assert v["cu_count"] == "1"  # one modelled device (simulator/docs/device.md: "The modelled device")
    assert v["cu_get"] == "0"
    assert v["cu_get_bad"] == "101"  # CUDA_ERROR_INVALID_DEVICE
    assert v["cu_cc"] == "8.0"
    assert v["cu_cc_matches"] == "1"
    sms, same = v["cu_attr_sms"].split()
    assert int(sms) >= 1 and same == "1"  # the host's CPUs (docs/device.md), as the runtime says
    assert v["cu_attr_cc"] == "8 1"
    assert v["cu_attr_optin"] == "1"
    assert v["cu_attr_warp"] == "32"
    assert v["cu_attr_vmm"] == "0 1 0"  # CUDA_SUCCESS, virtual memory management but no compression
    assert v["cu_attr_bad_device"] == "101"  # CUDA_ERROR_INVALID_DEVICE
    assert v["cu_attr_bad_attr"] == "1"  # CUDA_ERROR_INVALID_VALUE
    assert v["cu_attr_null"] == "1"
    assert v["cu_attr_last"] == "0"
    assert v["cu_mem"] == "0"
    assert v["cu_mem_sane"] == "1"
    notes = [ln for ln in proc.stderr.splitlines() if "symbol named by a string" in ln]
    assert len(notes) == 2, proc.stderr  # one for ToSymbol, one for FromSymbol, each once
    assert sum("cuDeviceComputeCapability is gone" in ln for ln in proc.stderr.splitlines()) == 1
    assert "finding" not in proc.stderr
    assert "verify" not in v  # no -D given


def test_defines_reach_every_source_and_a_bad_one_is_refused():
    proc = run_cli("run", str(PROGRAM), "-D", "VERIFY=41")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _values(proc.stdout)["verify"] == "42"
    bad = run_cli("run", str(PROGRAM), "-D", "1BAD=2")
    assert bad.returncode == 2
    assert "-D '1BAD=2': give a macro as NAME or NAME=VALUE" in bad.stderr
