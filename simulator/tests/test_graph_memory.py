"""Graph memory nodes (explicit and stream-captured), the graph memory footprint attributes,
child graph nodes, graph clones and cuBLAS calls recorded by a stream capture. Expected values are computed
here in numpy from the arithmetic the program's comments state; node types, error names and
the relaunch rule are CUDA's documented ones (driver_types.h, cudaGraphLaunch's reference)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, line_of, mode_args, nvcc_compile, run_cli, token_values

PROGRAM = KERNELS / "program_graph_memory.cu"
N = 256
BYTES = N * 4
# cudaGraphNodeType values from CUDA's driver_types.h.
KERNEL, MEMCPY, GRAPH, MEM_ALLOC, MEM_FREE = 0, 1, 4, 10, 11


def _input() -> np.ndarray:
    return (np.arange(N) % 17).astype(np.float32) - np.float32(8)


def _affine(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return (np.float32(a) * x + np.float32(b)).astype(np.float32)


@pytest.fixture(scope="module", params=EVERY_MODE)
def run(request) -> subprocess.CompletedProcess:
    """The program's run in each mode."""
    return run_cli("run", str(PROGRAM), *mode_args(request.param))


def test_runs_clean_in_every_mode(run):
    assert run.returncode == 0, run.stdout + run.stderr
    v = token_values(run.stdout)
    assert v["done"] == "1" and v["last_error"] == "cudaSuccess"
    # Only the notes of the three refusals the program provokes: no finding, no kernel report.
    others = [ln for ln in run.stderr.splitlines() if not ln.startswith("note (simulator): ")]
    assert others == [], run.stderr
    notes = run.stderr.splitlines()
    assert sum("cudaGraphInstantiateFlagAutoFreeOnLaunch" in ln for ln in notes) == 1
    assert sum("cannot be a child graph" in ln for ln in notes) == 1
    assert sum("cannot be cloned" in ln for ln in notes) == 1


def test_explicit_alloc_and_free_nodes(run):
    v = token_values(run.stdout)
    x = _input()
    want = -(x * x)
    assert v["explicit_launches"] == "cudaSuccess,cudaSuccess"
    assert float(v["explicit_sum"]) == float(want.astype(np.float64).sum())
    assert float(v["explicit_last"]) == want[-1]
    assert (v["alloc_type"], v["free_type"]) == (str(MEM_ALLOC), str(MEM_FREE))
    assert v["params_bytes"] == str(BYTES)
    assert v["params_dptr_ok"] == "1" and v["free_dptr_ok"] == "1"
    assert v["distinct_ab"] == "1"  # a and b are live together
    assert v["reuse"] == "1"  # c depends on a's free: it takes a's address (simulator/docs/graphs.md)
    # cudaGraphAddMemFreeNode: an address no allocation node returned, or a second free.
    assert v["free_host_pointer"] == "cudaErrorInvalidValue"
    assert v["free_twice"] == "cudaErrorInvalidValue"


def test_footprint_attributes_and_trim(run):
    v = token_values(run.stdout)
    assert v["footprint_before_launch"] == "0"  # instantiation reserves nothing
    # The most live at once: a and b (then b and c, c in a's place).
    assert v["footprint_used"] == v["footprint_reserved"] == v["footprint_high"] == str(2 * BYTES)
    assert v["footprint_after_trim"] == "0"  # nothing is live after the launch
    assert v["high_after_trim"] == str(2 * BYTES)
    assert v["high_after_reset"] == "0"
    assert v["set_current"] == "cudaErrorInvalidValue"  # only the high-water marks can be set ...
    assert v["set_high_nonzero"] == "cudaErrorInvalidValue"  # ... and only to 0
    assert v["other_device"] == "cudaErrorInvalidDevice"  # one modelled device


def test_an_unfreed_allocation_outlives_the_launch(run):
    v = token_values(run.stdout)
    assert v["unfreed_first"] == "cudaSuccess"
    assert float(v["unfreed_sum"]) == float(_affine(_input(), 2, 1).astype(np.float64).sum())
    assert v["unfreed_footprint"] == str(BYTES)
    # cudaGraphLaunch: allocations of the previous launch still unfreed -> cudaErrorInvalidValue.
    assert v["unfreed_relaunch"] == "cudaErrorInvalidValue"
    assert v["free"] == "cudaSuccess" and v["trimmed"] == "0"
    assert v["relaunch_after_free"] == "cudaSuccess" and v["free_async"] == "cudaSuccess"
    assert v["auto_free"] == "cudaSuccess,cudaSuccess"


def test_captured_malloc_and_free_async_become_memory_nodes(run):
    v = token_values(run.stdout)
    types = [MEM_ALLOC, MEM_ALLOC, MEMCPY, KERNEL, MEM_FREE, MEMCPY, MEM_FREE]
    assert [int(t) for t in v["captured_types"].split(",")] == types
    assert v["zero_alloc"] == "cudaSuccess" and v["zero_null"] == "1"
    assert v["captured_launches"] == "cudaSuccess,cudaSuccess"
    x = _input()
    assert float(v["captured_sum"]) == float((x * x).astype(np.float64).sum())


def test_child_graph_nodes_replay_in_place(run):
    v = token_values(run.stdout)
    assert v["child_type"] == str(GRAPH) and v["child_nodes"] == "2"
    assert v["destroy_embedded"] == "cudaErrorInvalidValue"  # the node owns its copy
    assert v["child_with_memory"] == "cudaErrorInvalidValue"
    assert v["clone_with_memory"] == "cudaErrorNotSupported"
    assert v["clone_found"] == "1" and v["clone_node_type"] == str(GRAPH)

    def parent(d: np.ndarray) -> np.ndarray:  # 2x + 1, child (3x, x - 4), 0.5x
        return _affine(_affine(_affine(_affine(d, 2, 1), 3, 0), 1, -4), 0.5, 0)

    d = parent(parent(_input()))  # two launches
    assert float(v["child_sum"]) == float(d.astype(np.float64).sum())
    assert float(v["child_last"]) == d[-1]
    d = parent(d)  # the clone's launch
    assert float(v["clone_sum"]) == float(d.astype(np.float64).sum())
    # The captured cublasSaxpy ran at neither the capture nor with the later alpha.
    assert v["saxpy_status"] == "0"
    y = _input()
    assert float(v["saxpy_during_capture_sum"]) == float(y.astype(np.float64).sum())
    for _ in range(2):  # y += 1, then the child: y += 5 d
        y = _affine(y, 1, 1)
        y = (y + np.float32(5) * d).astype(np.float32)
    assert float(v["saxpy_graph_sum"]) == pytest.approx(float(y.astype(np.float64).sum()), abs=1e-3)
    assert float(v["saxpy_graph_last"]) == y[-1]
    # cublasLtMatmul recorded the same way: D stayed 0 during the capture, A * B after the replay.
    assert v["lt_status"] == "0" and float(v["lt_during_capture"]) == 0.0
    idx = np.arange(16)
    a = ((idx % 5) - 2.0).reshape(4, 4, order="F")  # column-major, as cuBLAS stores it
    b = ((idx % 3) + 0.5).reshape(4, 4, order="F")
    want = (a @ b).ravel(order="F")
    assert [float(t) for t in v["lt_d"].split(",")] == want.tolist()


def test_the_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path, needs_header="cublasLt.h")
    assert proc.returncode == 0, proc.stderr


# The planted write is the program's "use_after_free" case: one memcheck build for both.
PLANTED = PROGRAM


def test_memcheck_reports_a_kernel_writing_a_freed_graph_allocation():
    proc = run_cli("run", str(PLANTED), "--mode", "memcheck", "--", "use_after_free", "planted")
    # The fault fails the graph's launch, which the program sees; run exits 1 for the finding.
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "cudaErrorLaunchFailure" in proc.stdout
    finding = [ln for ln in proc.stderr.splitlines() if ln.strip().startswith("memcheck: use-after-poison")]
    # Every thread of the block writes the freed memory; memcheck reports each thread of the
    # first warp (0..31), whose faults stop the block, as compute-sanitizer reports a warp's.
    threads = sorted(ln.rsplit("thread (", 1)[1] for ln in finding)
    assert threads == sorted(f"{t},0,0)" for t in range(32)), proc.stderr
    for ln in finding:
        assert f"{PLANTED}:{line_of(PLANTED, '// PLANT')}" in ln


def test_the_fixed_twin_writing_before_the_free_is_clean_under_memcheck():
    proc = run_cli("run", str(PLANTED), "--mode", "memcheck", "--", "use_after_free")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "status=cudaSuccess"
