"""``SIMULATOR_THREADS``, ``SIMULATOR_STACK_KB`` and ``SIMULATOR_DEVICES`` are refused outside
their ranges with one line naming the variable, the value and the range: by ``python -m simulator``,
by a simulated program or library when the runtime is loaded, and by torchlight's CUDA C loader
before it loads one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from simulator.limits import KNOBS, built_by_simulator, check_environment

from .conftest import REPO, run_cli

BAD = [
    ("SIMULATOR_THREADS", "0"),
    ("SIMULATOR_THREADS", "-3"),
    ("SIMULATOR_THREADS", "abc"),
    ("SIMULATOR_THREADS", "65"),
    ("SIMULATOR_THREADS", " 4"),
    ("SIMULATOR_STACK_KB", "1"),
    ("SIMULATOR_STACK_KB", "99999999"),
    ("SIMULATOR_STACK_KB", "64.5"),
    ("SIMULATOR_DEVICES", "0"),
    ("SIMULATOR_DEVICES", "17"),
]
GOOD = [
    ("SIMULATOR_THREADS", "1"),
    ("SIMULATOR_THREADS", "64"),
    ("SIMULATOR_STACK_KB", "16"),
    ("SIMULATOR_STACK_KB", "65536"),
    ("SIMULATOR_DEVICES", "1"),
    ("SIMULATOR_DEVICES", "16"),
    ("SIMULATOR_THREADS", ""),
]
RANGES = {k.name: f"from {k.low} to {k.high}" for k in KNOBS}

PROGRAM = """
#include <cuda_runtime.h>
#include <stdio.h>
__global__ void add_one(int* d) { d[threadIdx.x] += 1; }
extern "C" int launch_once(void) {
    int* d = nullptr;
    cudaError_t e = cudaMalloc(&d, 32 * sizeof(int));
    if (e != cudaSuccess) return (int)e;
    add_one<<<1, 32>>>(d);
    e = cudaGetLastError();
    cudaFree(d);
    return (int)e;
}
"""
MAIN = 'int main() { int rc = launch_once(); printf("rc=%d\\n", rc); return rc; }\n'
CUDA_ERROR_INITIALIZATION = 3


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RANGES}
    env.update(extra)
    return env


def _one_line(stderr: str, name: str, value: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    line = lines[0]
    assert line.startswith("simulator: "), line
    assert f"{name}={value!r}" in line and RANGES[name] in line, line
    return line


@pytest.mark.parametrize("name,value", GOOD)
def test_values_in_range_are_taken(name, value):
    check_environment({name: value})


@pytest.mark.parametrize("name,value", BAD)
def test_values_out_of_range_are_a_value_error_naming_them(name, value):
    with pytest.raises(ValueError, match=rf"{name}={value!r} is not valid: .*{RANGES[name]}"):
        check_environment({name: value})


@pytest.mark.parametrize("name,value", BAD)
def test_the_command_line_refuses_a_bad_knob_before_building(tmp_path, monkeypatch, name, value):
    src = tmp_path / "prog.cu"
    src.write_text(PROGRAM + MAIN)
    monkeypatch.setenv(name, value)
    proc = run_cli("run", str(src))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    _one_line(proc.stderr, name, value)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    from simulator.build import build_program

    src = tmp_path_factory.mktemp("knob-program") / "prog.cu"
    src.write_text(PROGRAM + MAIN)
    return build_program([str(src)], "fast", [])


@pytest.mark.parametrize("name,value", BAD)
def test_a_program_started_with_a_bad_knob_stops_with_the_same_line(program, name, value):
    proc = subprocess.run(
        [str(program)], capture_output=True, text=True, timeout=120, env=_clean_env(**{name: value})
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""  # main never ran
    line = _one_line(proc.stderr, name, value)
    with pytest.raises(ValueError) as python_side:
        check_environment({name: value})
    assert line == f"simulator: {python_side.value}"  # the runtime's table agrees with limits.KNOBS


def test_a_program_with_good_knobs_runs(program):
    env = _clean_env(SIMULATOR_THREADS="2", SIMULATOR_STACK_KB="64")
    proc = subprocess.run([str(program)], capture_output=True, text=True, timeout=120, env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "rc=0\n", "")


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    from simulator import build_shared

    out = tmp_path_factory.mktemp("knob-lib")
    src = out / "knoblib.cu"
    src.write_text(PROGRAM)
    return build_shared(src, out, "fast")


def test_a_library_loaded_with_a_bad_knob_fails_every_launch_and_says_why_once(library):
    script = textwrap.dedent(
        f"""
        import ctypes
        lib = ctypes.CDLL({str(library)!r})
        print(lib.launch_once(), lib.launch_once())
        """
    )
    env = _clean_env(SIMULATOR_STACK_KB="1")
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(CUDA_ERROR_INITIALIZATION)] * 2
    _one_line(proc.stderr, "SIMULATOR_STACK_KB", "1")
    good = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=_clean_env()
    )
    assert good.stdout.split() == ["0", "0"], good.stderr


def test_simulated_objects_are_told_apart_by_their_section(library, program):
    assert built_by_simulator(library)
    assert built_by_simulator(program)
    assert not built_by_simulator(sys.executable)
    assert not built_by_simulator(REPO / "simulator" / "limits.py")


def test_torchlight_refuses_a_bad_knob_before_loading_simulated_kernels(sim_lib_dir, monkeypatch, capfd):
    from torchlight.backends.cuda_c.loader import CudaCKernels

    if not (sim_lib_dir / "softmax_kernel.so").is_file():
        pytest.skip("the shipped kernel sources are not in this checkout")
    monkeypatch.setenv("SIMULATOR_THREADS", "0")
    with pytest.raises(ValueError, match=r"SIMULATOR_THREADS='0' is not valid: .*from 1 to 64"):
        CudaCKernels.load(sim_lib_dir)
    assert "simulator:" not in capfd.readouterr().err  # refused before the runtime was loaded
