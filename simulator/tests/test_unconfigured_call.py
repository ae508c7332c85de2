"""A ``__global__`` function called without ``<<<...>>>``: refused at build time when called directly
(as nvcc does), and ``cudaErrorMissingConfiguration`` (no crash) when called through a template."""

from __future__ import annotations

import textwrap

import pytest

from .conftest import KERNELS, int_values, nvcc_compile, run_cli

PROGRAM = KERNELS / "unconfigured_call.cu"


@pytest.mark.parametrize("fibers", ["0", "1"], ids=["plain-loop", "fibers"])
def test_call_through_a_template_sets_missing_configuration(monkeypatch, fibers):
    monkeypatch.setenv("SIMULATOR_FIBERS", fibers)
    proc = run_cli("run", str(PROGRAM), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["missing_configuration"] == 52  # CUDA's value of cudaErrorMissingConfiguration
    assert got["call"] == got["missing_configuration"]
    assert got["cleared"] == 0  # not sticky
    assert got["untouched"] == 1  # the kernel did not run
    assert got["launch"] == 0
    assert (got["h0"], got["h1"]) == (9, 9)
    assert "'set_value' was called from host code without <<<...>>>" in proc.stderr


def test_template_call_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.kernels  # it compiles the same call with nvcc
def test_direct_call_is_refused_at_build_time_with_file_and_line(tmp_path):
    src = tmp_path / "direct_call.cu"
    src.write_text(
        textwrap.dedent(
            """\
            #include <cuda_runtime.h>
            __global__ void fill(int* p) { p[0] = 1; }
            int main() {
                int* d = nullptr;
                fill(d);
                return 0;
            }
            """
        )
    )
    proc = run_cli("run", str(src), timeout=120)
    assert proc.returncode != 0
    assert f"{src}:5: a __global__ function called without <<<...>>>: 'fill'" in proc.stdout + proc.stderr
    nv = nvcc_compile(src, tmp_path)
    assert nv.returncode != 0  # nvcc refuses the same call
    assert "must be configured" in nv.stdout + nv.stderr
