"""Definitions that exist only in the ``__CUDA_ARCH__`` pass are carried into the compiled program."""

from __future__ import annotations

from .conftest import KERNELS, int_values, nvcc_compile, run_cli

PROGRAM = KERNELS / "device_only_defs.cu"


def test_kernel_calls_helpers_defined_only_for_the_device():
    proc = run_cli("run", str(PROGRAM))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["err"] == 0
    for i in range(4):
        # scaled(Scale{i}, 10) + twice(i) with Scale::offset = 5, all defined under #if __CUDA_ARCH__ >= 700
        assert got[f"out[{i}]"] == i * 10 + 5 + 2 * i
        # the __host__ __device__ function takes its device branch in the kernel...
        assert got[f"out[{4 + i}]"] == 7
    # ...and its host branch in main
    assert got["host_side"] == 3


def test_device_only_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
