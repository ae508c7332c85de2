"""Thrust in simulated programs (NVIDIA's CCCL headers, Thrust's sequential C++ system as the
default device system): results against numpy in every mode, device_vector memory as device
memory to the runtime and memcheck, and the program also built by nvcc."""

from __future__ import annotations

import re

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_thrust.cu"
N = 1000


def _ints(text: str) -> np.ndarray:
    return np.array([int(t) for t in text.split(",")], dtype=np.int64)


def _input() -> np.ndarray:
    i = np.arange(N, dtype=np.int64)
    return (i * 7919 + 13) % 1000 - 500


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_thrust_algorithms_and_kernels_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    h = _input()
    affine = 3 * h + 1
    np.testing.assert_array_equal(_ints(v["affine"]), affine)
    assert int(v["affine_sum"]) == affine.sum()
    np.testing.assert_array_equal(_ints(v["sorted"]), np.sort(h))
    np.testing.assert_array_equal(_ints(v["sorted_desc"]), np.sort(h)[::-1])
    assert int(v["sum"]) == h.sum()
    assert int(v["max"]) == h.max()
    np.testing.assert_array_equal(_ints(v["square"]), h * h)
    np.testing.assert_array_equal(_ints(v["inclusive_scan"]), np.cumsum(h))
    np.testing.assert_array_equal(_ints(v["exclusive_scan"]), 7 + np.concatenate([[0], np.cumsum(h)[:-1]]))
    np.testing.assert_array_equal(_ints(v["adjacent_difference"]), np.concatenate([h[:1], np.diff(h)]))
    np.testing.assert_array_equal(_ints(v["not_multiple_of_3"]), h[h % 3 != 0])
    np.testing.assert_array_equal(_ints(v["rows_sorted"]), np.sort(h.reshape(-1, 20), axis=1).ravel())
    np.testing.assert_array_equal(_ints(v["sequence_affine"]), 3 * (5 + 2 * np.arange(N)) + 1)
    assert v["copied_in_equal"] == "1"
    assert v["memcpy"] == "no error,no error"  # device_vector and device_malloc memory is device memory
    assert v["error"] == "no error"
    assert "finding" not in proc.stderr


def test_memcheck_judging_host_code_finds_nothing_in_thrusts_own_headers():
    # Thrust binds references to its empty system tags through null pointers (its own idiom);
    # a memcheck build of a Thrust source has no UBSan null checks, so a correct program stays clean.
    proc = run_cli("run", str(PROGRAM), "--mode", "memcheck", "--check-host")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runtime error" not in proc.stderr
    assert "finding" not in proc.stderr


def test_memcheck_reports_a_kernel_reading_past_the_end_of_a_device_vector():
    lines = PROGRAM.read_text().splitlines()
    read = next(n for n, text in enumerate(lines, 1) if "out[i] = in[i + shift]" in text)
    proc = run_cli("run", str(PROGRAM), "--mode", "memcheck", "--", "past_end")
    report = proc.stdout + proc.stderr
    assert proc.returncode != 0, report
    assert "heap-buffer-overflow" in report
    assert f"{PROGRAM}:{read}" in report
    # The last thread of the grid (element N - 1 reads element N) is the one named.
    assert re.search(rf"thread \({(N - 1) % 128},0,0\)", report), report


def test_the_thrust_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
