"""Thrust in simulated programs (NVIDIA's CCCL headers, Thrust's sequential host back end as the
device system): results against numpy, device_vector memory as device memory to the runtime and
memcheck, and the refusals (thrust::cuda::par, CCCL absent)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from simulator import build, cccl

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_thrust.cu"
N = 1000

needs_cccl = pytest.mark.skipif(
    cccl.find_cccl() is None,
    reason="NVIDIA's CCCL headers are not installed (pip install nvidia-cuda-cccl, in the simulator extra)",
)


def _ints(text: str) -> np.ndarray:
    return np.array([int(t) for t in text.split(",")], dtype=np.int64)


def _input() -> np.ndarray:
    i = np.arange(N, dtype=np.int64)
    return (i * 7919 + 13) % 1000 - 500


@needs_cccl
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


@needs_cccl
def test_memcheck_judging_host_code_finds_nothing_in_thrusts_own_headers():
    # Thrust binds references to its empty system tags through null pointers (its own idiom);
    # a memcheck build of a Thrust source has no UBSan null checks, so a correct program stays clean.
    proc = run_cli("run", str(PROGRAM), "--mode", "memcheck", "--check-host")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "runtime error" not in proc.stderr
    assert "finding" not in proc.stderr


@needs_cccl
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


@needs_cccl
def test_thrust_cuda_par_is_refused_by_name(tmp_path):
    src = tmp_path / "cuda_par.cu"
    src.write_text(
        "#include <thrust/device_vector.h>\n#include <thrust/sort.h>\n"
        "int main() {\n    thrust::device_vector<int> v(4);\n"
        "    thrust::sort(thrust::cuda::par, v.begin(), v.end());\n    return 0;\n}\n"
    )
    proc = run_cli("run", str(src))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{src}:5" in proc.stderr
    assert "thrust::cuda" in proc.stderr
    assert "sequential host back end" in proc.stderr


@needs_cccl
@pytest.mark.parametrize("header", ["cub/cub.cuh", "thrust/system/cuda/execution_policy.h"])
def test_cub_and_the_cuda_back_end_are_refused_by_name(tmp_path, header):
    src = tmp_path / "cuda_only.cu"
    src.write_text(f"#include <thrust/device_vector.h>\n#include <{header}>\nint main() {{ return 0; }}\n")
    proc = run_cli("run", str(src))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{src}:2: <{header}>: Thrust's CUDA back end" in proc.stderr
    assert "CUB's device-wide calls are not provided" in proc.stderr


def test_without_cccl_a_thrust_program_is_refused_with_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv(cccl.CCCL_ENV, "0")
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = PROGRAM.read_text().splitlines()
    first = next(n for n, text in enumerate(lines, 1) if text.startswith("#include <thrust/"))
    header = lines[first - 1].split("<")[1].rstrip(">")
    assert f"{PROGRAM}:{first}: unsupported header <{header}>: Thrust ships in NVIDIA's CCCL" in proc.stderr
    assert "pip install nvidia-cuda-cccl" in proc.stderr


def test_a_folder_without_cccl_in_the_variable_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(cccl.CCCL_ENV, str(tmp_path))
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{cccl.CCCL_ENV}='{tmp_path}' holds no CCCL headers" in proc.stderr


@needs_cccl
def test_only_a_program_that_includes_thrust_gets_cccl(tmp_path):
    plain = tmp_path / "plain.cu"
    plain.write_text("#include <cstdio>\n__global__ void k() {}\nint main() { return 0; }\n")
    with_thrust = tmp_path / "with_thrust.cu"
    with_thrust.write_text("#include <thrust/reduce.h>\nint main() { return 0; }\n")
    cxx = build.compiler()
    _, none = build._preprocess_with_libraries([cxx, "-x", "c++", "-E", str(plain)], str(plain))
    assert none == []
    args = [cxx, "-x", "c++", "-E", str(with_thrust)]
    text, flags = build._preprocess_with_libraries(args, str(with_thrust))
    assert "-DSIM_WITH_CCCL" in flags and str(cccl.find_cccl()) in flags
    assert "thrust/reduce.h" in text


@needs_cccl
def test_the_thrust_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr


@needs_cccl
@pytest.mark.parametrize("wheel_installed", [True, False])
def test_cccl_is_found_in_the_wheel_first_then_through_cuda_home(tmp_path, monkeypatch, wheel_installed):
    monkeypatch.delenv(cccl.CCCL_ENV, raising=False)  # the search itself, not a CCCL the caller chose
    real = cccl.find_cccl()
    home = tmp_path / "cuda"
    (home / "include").mkdir(parents=True)
    (home / "include" / "cccl").symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("CUDA_HOME", str(home))
    if not wheel_installed:
        wheels = {p for p in sys.path if p and any((Path(p) / w).is_dir() for w in cccl._WHEEL_FOLDERS)}
        monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in wheels])
    cccl._search.cache_clear()
    try:
        found = cccl.find_cccl()
    finally:
        cccl._search.cache_clear()
    if wheel_installed and "site-packages" in str(real):
        assert found == real
    else:
        assert found == home / "include" / "cccl"
