"""The runtime's primary contexts through the driver API: a program that uses the runtime first
(cudaSetDevice) and then the driver without cuInit, staging a copy between two devices' contexts
with cuStreamWaitEvent, as The CUDA Handbook's peer2peerMemcpyDrv does."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, int_values, run_cli

PROGRAM = KERNELS / "driver_runtime_context.cpp"
CHECKS = (
    "before_runtime",
    "primary_current",
    "set_device_replaces",
    "context_device",
    "retain_same",
    "push_pop_back_to_primary",
    "staged_copy",
    "queries_ready",
    "unbind_leaves_none",
    "done",
)


@pytest.fixture(scope="module")
def program_run():
    proc = run_cli("run", str(PROGRAM), "--devices", "2", timeout=280)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("check", CHECKS)
def test_runtime_context_seen_by_the_driver_behaves_as_cuda(program_run, check):
    assert int_values(program_run.stdout).get(check) == 1, program_run.stdout + program_run.stderr
