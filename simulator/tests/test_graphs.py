"""Launch forms and CUDA graphs: cudaLaunchKernel (by address and typed), cudaLaunchKernelEx with
launch attributes, cudaFuncGetAttributes, stream capture, explicitly built graphs, exec updates
a cooperative launch, and the refusals (unregistered kernels, unknown attributes, cycles).
Expected values are computed here in numpy from the arithmetic the program's comments state,
and the node-type and update-result numbers are CUDA's documented enum values."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, line_of, mode_args, nvcc_compile, run_cli
from .test_run import _values

GRAPHS = KERNELS / "program_graphs.cu"
N = 256  # the program's element count

# cudaGraphNodeType and cudaGraphExecUpdateResult values from CUDA's driver_types.h.
KERNEL, MEMCPY, MEMSET, HOST = 0, 1, 2, 3
UPDATE_SUCCESS, UPDATE_TOPOLOGY_CHANGED = 0, 2


def _affine(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return (np.float32(a) * x + np.float32(b)).astype(np.float32)


@pytest.fixture(scope="module", params=EVERY_MODE)
def graphs_run(request) -> tuple[str, subprocess.CompletedProcess]:
    """The program's run in each mode."""
    return request.param, run_cli("run", str(GRAPHS), *mode_args(request.param))


def test_runs_clean_in_every_mode(graphs_run):
    mode, proc = graphs_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert "failed" not in v, v
    assert v["done"] == "1"
    # Only the notes of the refusals the program provokes: no finding, no kernel report.
    others = [ln for ln in proc.stderr.splitlines() if not ln.startswith("note (simulator): ")]
    assert others == [], proc.stderr


def test_launches_by_address_typed_and_ex(graphs_run):
    _, proc = graphs_run
    v = _values(proc.stdout)
    x = np.arange(N, dtype=np.float32)
    x = _affine(x, 2, 1)  # <<<>>>
    x = _affine(x, 1, 3)  # cudaLaunchKernel((void*)affine, ...)
    x = _affine(x, 3, 0)  # the typed cudaLaunchKernel(affine, ...)
    x = _affine(x, 1, 1)  # cudaLaunchKernelEx with a priority and an access policy window
    x = _affine(x, 0.5, 0)  # cudaLaunchKernelExC; the cluster-attribute launch did not run
    x = _affine(x, 0.5, 0)  # cudaLaunchCooperativeKernel with the same arguments
    assert float(v["launches_last"]) == x[-1]
    assert float(v["launches_sum"]) == pytest.approx(float(x.astype(np.float64).sum()), abs=0.05)
    assert v["unknown_attribute"] == "cudaErrorInvalidValue"
    assert v["address_only"] == "42"  # never launched but by address: the build registered it
    assert v["unregistered"] == "cudaErrorInvalidDeviceFunction"
    assert v["unregistered_last"] == "cudaErrorInvalidDeviceFunction"
    assert v["cooperative"] == "cudaSuccess"
    assert v["max_threads"] == "1024"  # the modelled sm_80 device's block limit
    # cudaFuncGetAttributes answers for any address: a library header's kernel (CUB asks for its
    # EmptyKernel's) is registered only once launched, so a host function cannot be told apart.
    assert v["attributes_unregistered"] == "cudaSuccess"


def test_refusals_print_one_note_naming_the_rule(graphs_run):
    _, proc = graphs_run
    notes = [ln for ln in proc.stderr.splitlines() if ln.startswith("note (simulator): ")]
    unregistered = [ln for ln in notes if "is not registered" in ln]
    # cudaLaunchKernel and cudaGraphAddKernelNode of not_a_kernel (cudaFuncGetAttributes answers).
    assert [ln.split(":")[1].strip() for ln in unregistered] == ["cudaLaunchKernel", "cudaGraphAddKernelNode"]
    assert all("registers every kernel definition" in ln and "<<<>>>" in ln for ln in unregistered)
    assert sum("launch attribute 4 is not supported" in ln for ln in notes) == 1
    assert not any("cooperative launch" in ln for ln in notes)
    assert sum("form a cycle" in ln for ln in notes) == 1


def test_stream_capture_records_and_replays(graphs_run):
    _, proc = graphs_run
    v = _values(proc.stdout)
    assert v["end_without_begin"] == "cudaErrorInvalidValue"  # cudaStreamEndCapture's documented error
    assert v["capturing"] == "1" and v["capturing_after"] == "0"  # cudaStreamCaptureStatusActive, None
    assert v["info_status"] == "1 info_deps=1"  # the last captured node is the one dependency
    assert v["same_graph"] == "1"
    # Nothing ran while capturing: the host function did not count, the copy did not land.
    assert v["ran_during_capture"] == "0"
    assert float(v["copied_during_capture"]) == -1.0
    types = [MEMSET, KERNEL, KERNEL, KERNEL, KERNEL, KERNEL, HOST, MEMCPY]
    assert int(v["captured_nodes"]) == len(types)
    assert [int(t) for t in v["captured_types"].split(",")] == types
    # Each of three replays: memset 0, affine(1, 2), + i, affine(3, 0) with the arguments as
    # they were at capture, + 1 (template), + 10 (default argument), host count, copy back.
    y = np.zeros(N, dtype=np.float32)
    y = _affine(y, 1, 2) + np.arange(N, dtype=np.float32)
    y = _affine(y, 3, 0) + np.float32(1) + np.float32(10)
    assert v["captured_hits"] == "3"
    assert float(v["captured_last"]) == y[-1]
    assert float(v["captured_sum"]) == float(y.astype(np.float64).sum())


def test_explicit_graph_set_params_and_update(graphs_run):
    _, proc = graphs_run
    v = _values(proc.stdout)
    half = N // 2
    assert v["roots"] == "1"  # only the memset node has no dependency

    def diamond(left_a: float, right_b: float) -> np.ndarray:
        z = np.ones(N, dtype=np.float32)  # the memset node writes 1.0f as a 4-byte pattern
        z[:half] = _affine(z[:half], left_a, 0)
        z[half:] = _affine(z[half:], 5, right_b)
        return z

    z = diamond(2, 1)
    assert v["diamond_first"] == f"{z[0]:g} diamond_last={z[-1]:g}"
    # The host node ran after the copy node, twice (two launches), summing what it copied.
    assert v["diamond_calls"] == f"2 diamond_tally={2 * z.astype(np.float64).sum():.1f}"
    z = diamond(3, 1)  # cudaGraphExecKernelNodeSetParams on the left node
    assert v["set_params_first"] == f"{z[0]:g} set_params_last={z[-1]:g}"
    assert v["update_result"] == str(UPDATE_SUCCESS)
    z = diamond(4, 2)  # the exec updated from the second graph
    assert v["updated_first"] == f"{z[0]:g} updated_last={z[-1]:g}"
    failure = "cudaErrorGraphExecUpdateFailure"
    assert v["topology_update"] == f"{failure} topology_result={UPDATE_TOPOLOGY_CHANGED}"
    assert v["node_unregistered"] == "cudaErrorInvalidDeviceFunction"
    assert v["cycle"] == "cudaErrorInvalidValue"


def test_pitched_memcpy_node(graphs_run):
    _, proc = graphs_run
    v = _values(proc.stdout)
    src = np.arange(8)[:, None] * 100 + np.arange(16)[None, :]
    expected = src[1:4, 2:6].ravel()  # 3 rows from row 1, 4 columns from column 2
    assert [float(t) for t in v["pitched"].split(",")] == expected.astype(float).tolist()


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(GRAPHS, tmp_path)
    assert proc.returncode == 0, proc.stderr


# The planted kernel node is the program's "oob" case: one memcheck build for both.
PLANTED = GRAPHS


def test_memcheck_finding_in_a_kernel_node_names_the_kernel_line_and_the_node_line():
    proc = run_cli("run", str(PLANTED), "--mode", "memcheck", "--", "oob", "planted")
    # The fault fails the graph's launch; the program's own check then exits 3.
    assert proc.returncode == 3, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    finding = [ln for ln in lines if ln.strip().startswith("memcheck: heap-buffer-overflow")]
    assert len(finding) == 1, proc.stderr
    assert f"{PLANTED}:{line_of(PLANTED, '// PLANT')}" in finding[0]
    assert f"(launched at {PLANTED}:{line_of(PLANTED, '// NODE')})" in finding[0]


def test_the_fixed_kernel_node_runs_clean_under_memcheck():
    proc = run_cli("run", str(PLANTED), "--mode", "memcheck", "--", "oob")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _values(proc.stdout)["launch"] == "cudaSuccess sync=cudaSuccess last=99"  # out[i] = i
