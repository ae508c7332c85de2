"""Graph event nodes: record and wait nodes added explicitly or made by stream capture from
cudaEventRecordWithFlags(cudaEventRecordExternal) and cudaStreamWaitEvent(cudaEventWaitExternal).
Node-type numbers are CUDA's documented cudaGraphNodeType values; sums are computed here."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli, token_values

PROGRAM = KERNELS / "program_graph_events.cu"
N = 128  # the program's element count

# cudaGraphNodeType values from CUDA's driver_types.h.
KERNEL, WAIT_EVENT, EVENT_RECORD = 0x00, 0x06, 0x07


def _scaled_sum(a: float) -> float:
    """Sum of fill (x[i] = i) then scale by ``a``, in float32 as the kernels compute it."""
    x = np.arange(N, dtype=np.float32) * np.float32(a)
    return float(x.astype(np.float64).sum())


@pytest.fixture(scope="module", params=EVERY_MODE)
def events_run(request) -> tuple[str, subprocess.CompletedProcess]:
    """The program's run in each mode."""
    return request.param, run_cli("run", str(PROGRAM), *mode_args(request.param))


def test_runs_clean_in_every_mode(events_run):
    _, proc = events_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.strip() == "", proc.stderr
    assert token_values(proc.stdout)["last_error"] == "cudaSuccess"


def test_explicit_record_and_wait_nodes(events_run):
    _, proc = events_run
    v = token_values(proc.stdout)
    assert int(v["type_record"]) == EVENT_RECORD and int(v["type_wait"]) == WAIT_EVENT
    assert v["get_record_is_e2"] == "1" and v["get_wait_is_e1"] == "1"
    assert v["get_on_kernel_node"] == "cudaErrorInvalidValue"
    assert v["get_wait_on_record_node"] == "cudaErrorInvalidValue"
    assert v["add_destroyed_event"] == "cudaErrorInvalidResourceHandle"
    # Adding the nodes records nothing; the launch records both events.
    assert (v["before_launch_e1"], v["before_launch_e2"]) == ("0", "0")
    assert v["launch"] == "cudaSuccess"
    assert (v["after_launch_e1"], v["after_launch_e2"]) == ("1", "1")
    assert float(v["explicit_sum"]) == _scaled_sum(3)


def test_exec_set_event_changes_only_the_executable_graph(events_run):
    _, proc = events_run
    v = token_values(proc.stdout)
    assert v["exec_set"] == "cudaSuccess"
    assert v["exec_set_on_wait_node"] == "cudaErrorInvalidValue"
    assert (v["before_exec_set_launch_e3"], v["after_exec_set_launch_e3"]) == ("0", "1")
    assert v["graph_keeps_e2"] == "1" and v["graph_set_to_e1"] == "1"
    assert float(v["relaunch_sum"]) == _scaled_sum(3)


def test_capture_makes_event_nodes_from_external_flags(events_run):
    _, proc = events_run
    v = token_values(proc.stdout)
    assert v["capture_record"] == "cudaSuccess" and v["capture_wait"] == "cudaSuccess"
    types = [KERNEL, EVENT_RECORD, WAIT_EVENT, KERNEL]
    assert int(v["captured_nodes"]) == len(types)
    assert [int(v[f"captured_type_{i}"]) for i in range(len(types))] == types
    # The captured record ran at the graph's launch, not at the call.
    assert (v["captured_not_yet_recorded"], v["captured_recorded"]) == ("0", "1")
    assert float(v["capture_sum"]) == _scaled_sum(5)
    assert v["wait_bad_flags"] == "cudaErrorInvalidValue"
    assert v["record_bad_flags"] == "cudaErrorInvalidValue"
    assert v["wait_external_outside_capture"] == "cudaSuccess"


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
