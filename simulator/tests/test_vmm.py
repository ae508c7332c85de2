"""The driver API's virtual memory management (runtime/driver_vmm.cpp): reservations, physical
memory, maps, access flags, release while mapped, retain, export and import through a file
descriptor, and the device-memory bookkeeping that copies and kernels meet. Expected values are
CUDA's documented ones (cuda.h's reference for each call: sizes and addresses in granules, no map
over a mapped range, no partial unmap, memory kept while mapped) and the arithmetic the programs'
comments state, worked out here."""

from __future__ import annotations

import re
import subprocess

import pytest

from .conftest import EVERY_MODE, KERNELS, line_of, mode_args, run_cli, token_values

PROGRAM = KERNELS / "program_vmm.cu"
# The faulting writes are the program's "fault WHERE" case: one build per mode for both.
FAULT = PROGRAM
GRANULE = 2 << 20  # a GPU's large page, what cuMemGetAllocationGranularity reports
# CU_MEM_ACCESS_FLAGS_PROT_* and CU_MEM_LOCATION_TYPE_DEVICE / CU_MEM_ALLOCATION_TYPE_PINNED (cuda.h).
PROT_NONE, PROT_READ, PROT_READWRITE = 0, 1, 3
# The copies the program makes on purpose into ranges that are not device memory it may write,
# besides its cuMemAddressFree and cudaFree of a range still mapped: each is refused with one line.
REFUSED_COPIES = 5


@pytest.fixture(scope="module", params=EVERY_MODE)
def run(request) -> subprocess.CompletedProcess:
    """The program's run in each mode."""
    return run_cli("run", str(PROGRAM), *mode_args(request.param))


def _listed(stderr: str) -> tuple[str, list[str]]:
    """The closing list ``run`` prints of the runtime's reports (fast) or findings (checkers):
    its kind and its lines."""
    kind, lines = "", []
    for ln in stderr.splitlines():
        m = re.match(r"simulator: run \(\w+\): \d+ (finding|report)", ln)
        if m:
            kind = m.group(1)
        elif kind and ln.startswith("  "):
            lines.append(ln.strip())
        elif kind:
            break
    return kind, lines


def test_runs_to_the_end_and_reports_only_the_provoked_refusals(run):
    v = token_values(run.stdout)
    assert "failed" not in v, run.stdout
    assert v["done"] == "1" and v["last_error"] == "cudaSuccess"
    assert v["vmm_supported"] == "1"
    # No kernel fault, race or barrier finding: only the runtime's line for each refusal the
    # program provokes, which a checker counts as a finding (exit status 1) and fast mode
    # returns to the program as a CUDA error (exit status 0).
    assert "=========     " not in run.stderr, run.stderr
    kind, lines = _listed(run.stderr)
    assert run.returncode == (0 if kind == "report" else 1), run.stderr
    copies = [ln for ln in lines if "is not inside one live device allocation" in ln]
    frees = [ln for ln in lines if "cuMemAddressFree(" in ln and "cuMemUnmap it first" in ln]
    cuda_frees = [ln for ln in lines if "cudaFree(" in ln and "cuMemUnmap it instead" in ln]
    assert len(copies) == REFUSED_COPIES and len(frees) == len(cuda_frees) == 1, lines
    assert len(lines) == REFUSED_COPIES + 2, lines


def test_reserve_create_map_access_kernel_copy(run):
    v = token_values(run.stdout)
    assert v["granularity"] == v["recommended"] == str(GRANULE)
    assert v["granularity_bad_device"] == "CUDA_ERROR_INVALID_DEVICE"
    assert v["aligned_start"] == "1"
    assert v["access_after_map"] == str(PROT_NONE)  # a new mapping is not accessible
    assert v["copy_before_access"] == "cudaErrorInvalidValue"
    assert v["access_after_set"] == str(PROT_READWRITE)
    assert v["fill"] == "cudaSuccess" and v["copy_back"] == "cudaSuccess"
    assert v["one_chunk_ok"] == "1"  # every int of the granule is 3 * i + 1
    assert v["pointer_type"] == "2"  # cudaMemoryTypeDevice
    assert v["memset_mapped"] == "cudaSuccess"
    assert v["cuda_free_mapped"] == "cudaErrorInvalidValue"  # not cudaMalloc's memory
    assert v["memset_after_free"] == "cudaSuccess"


def test_unmapped_parts_of_a_reservation_are_refused(run):
    v = token_values(run.stdout)
    assert v["copy_unmapped"] == "cudaErrorInvalidValue"
    assert v["copy_across_end"] == "cudaErrorInvalidValue"  # starts mapped, ends in the unmapped granule
    assert v["copy_after_unmap"] == "cudaErrorInvalidValue"
    assert v["copy_into_read_only"] == "cudaErrorInvalidValue"


def test_misaligned_and_conflicting_calls_are_refused(run):
    v = token_values(run.stdout)
    for key in (
        "create_misaligned",  # not a multiple of the granularity
        "create_zero",
        "map_twice",  # the range is mapped already
        "map_misaligned_address",
        "map_past_reservation",
        "map_past_allocation",  # offset + size past the physical memory
        "access_misaligned",
        "access_unmapped",  # the range is not fully mapped
        "unmap_unmapped",
        "unmap_half",  # part of a mapping
        "unmap_twice",
        "free_mapped",
        "free_wrong_size",
        "reserve_flags",
        "reserve_alignment",  # not a power of two
        "retain_unmapped",
        "release_freed",  # released and unmapped: the handle is gone
        "export_not_requested",  # no POSIX handle type asked for at cuMemCreate
        "import_bad_fd",
    ):
        assert v[key] == "CUDA_ERROR_INVALID_VALUE", key


def test_release_while_mapped_keeps_the_memory(run):
    v = token_values(run.stdout)
    assert v["used_after_release"] == "1"
    assert v["retained_same"] == "1"  # the handle the range was mapped with
    assert v["prop_type"] == "1" and v["prop_location"] == "1,0"  # pinned, device 0
    assert v["hint_honoured"] == "1"


def test_two_chunks_mapped_side_by_side_are_one_array(run):
    v = token_values(run.stdout)
    assert [v["copy_a"], v["copy_b"], v["add"], v["copy_c"]] == ["cudaSuccess"] * 4
    assert v["two_chunks_ok"] == "1"  # c = a + b over both granules, one copy each way
    assert v["chunk_devices"] == "0,0"  # one modelled device


def test_export_and_import_share_the_memory(run):
    v = token_values(run.stdout)
    assert v["shared_view"] == "1"  # written through one mapping, read through the other
    assert v["access_read"] == str(PROT_READ)


def test_chunks_on_two_devices():
    proc = run_cli("run", str(PROGRAM), "--devices", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = token_values(proc.stdout)
    assert v["devices"] == "2" and v["done"] == "1"
    assert v["chunk_devices"] == "0,1"  # vectorAddMMAP's stripes, one per device
    assert v["two_chunks_ok"] == "1"


@pytest.mark.parametrize("where", ["unmapped", "no_access"])
def test_a_kernel_access_where_nothing_may_be_accessed_faults(where):
    proc = run_cli("run", str(FAULT), "--", "fault", where)
    v = token_values(proc.stdout)
    assert v["good"] == "cudaSuccess"
    assert v["bad"] == "cudaErrorIllegalAddress", proc.stdout + proc.stderr
    assert "simulator: illegal address: kernel 'touch' block (0,0,0)" in proc.stderr


@pytest.mark.parametrize("where", ["unmapped", "no_access"])
def test_memcheck_reports_the_access_at_its_line(where):
    proc = run_cli("run", str(FAULT), "--mode", "memcheck", "--", "fault", where)
    v = token_values(proc.stdout)
    assert v["good"] == "cudaSuccess"
    assert v["bad"] != "cudaSuccess", proc.stdout + proc.stderr
    write = line_of(FAULT, "x[i] = i;")
    launch = line_of(FAULT, "VMM_FAULT_LINE")
    assert "========= Invalid __global__ write of size 4 bytes" in proc.stderr, proc.stderr
    assert f"{FAULT.name}:{write}" in proc.stderr
    assert f"launched at {FAULT}:{launch}" in proc.stderr
    # The granted granule is not reported: the first launch's writes are valid.
    assert proc.stderr.count("Invalid __global__ write") == 32


def test_a_mapping_left_at_exit_is_a_leak_named_by_its_call():
    proc = run_cli("run", str(FAULT), "--mode", "memcheck", "--leak-check", "full", "--", "fault", "leak")
    assert token_values(proc.stdout)["good"] == "cudaSuccess"
    leak_line = "simulator: memcheck: device memory leak"
    leaks = [ln for ln in proc.stderr.splitlines() if ln.startswith(leak_line)]
    assert len(leaks) == 1, proc.stderr
    assert f"{GRANULE} bytes mapped with cuMemMap at 0x" in leaks[0]
    assert "never unmapped with cuMemUnmap" in leaks[0]
    assert "cudaMalloc" not in leaks[0]
