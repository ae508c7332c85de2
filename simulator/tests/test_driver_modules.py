"""Driver API modules: ``nvcc -fatbin``/``-cubin`` build one, ``cuModuleLoad``/``cuModuleLoadData``
load it into the program's runtime, and ``cuLaunchKernel`` runs its kernels with either argument
form; images that are not modules are refused with one line; contexts are current per thread."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from simulator import toolkit
from simulator.toolchain import compiler

from .conftest import KERNELS, int_values, nvcc_compile, run_cli

MODULE = KERNELS / "driver_module.cu"
HOST = KERNELS / "driver_module_host.cpp"

# What the host program checks, each printed as NAME=1 when the call behaved as the driver's does.
CHECKS = (
    "before_init",
    "load_file",
    "load_data",
    "unknown_not_found",
    "variable_not_function",
    "params_launch",
    "extra_launch",
    "short_buffer_refused",
    "big_block_refused",
    "global_readback",
    "global_memset",
    "modules_separate",
    "unknown_global_not_found",
    "damaged_invalid_image",
    "text_invalid_image",
    "ptx_not_supported",
    "popped_main",
    "thread_push_pop",
    "pop_empty_invalid",
    "thread_launch_result",
    "unloaded_handle_invalid",
    "destroyed_context_invalid",
    "done",
)


def _module(tmp_path: Path, phase: str = "-fatbin") -> Path:
    out = tmp_path / f"driver_module{phase.replace('-', '.')}"
    proc = run_cli("nvcc", phase, "-o", str(out), str(MODULE), timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def host_run(tmp_path_factory):
    module = _module(tmp_path_factory.mktemp("module"))
    assert module.read_bytes()[:8] == b"TLSIMMOD"
    proc = run_cli("run", str(HOST), "--", str(module), timeout=280)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("check", CHECKS)
def test_driver_call_behaves_as_cuda(host_run, check):
    got = int_values(host_run.stdout)
    assert got.get(check) == 1, host_run.stdout + host_run.stderr


def test_module_variable_size(host_run):
    assert int_values(host_run.stdout)["global_bytes"] == 16


def test_refusals_are_one_line_each(host_run):
    notes = [
        ln for ln in host_run.stderr.splitlines() if ln.startswith("note (simulator): cuModuleLoadData:")
    ]
    assert len(notes) == 3, host_run.stderr
    assert "PTX" in notes[2] and "-fatbin" in notes[2]
    assert "damaged" in notes[0]


def test_cubin_is_a_module_too(tmp_path):
    assert _module(tmp_path, "-cubin").read_bytes()[:8] == b"TLSIMMOD"


def test_ptx_output_says_it_is_no_ptx(tmp_path):
    out = _module(tmp_path, "-ptx")
    text = out.read_text()
    assert text.startswith("//") and "no PTX" in text


def test_nvidia_nvcc_fatbin_is_an_invalid_image(tmp_path):
    """A fatbin from NVIDIA's own nvcc holds GPU code: refused as an invalid image, never run."""
    nvcc = shutil.which("nvcc")
    if nvcc is None or "simulator" in Path(nvcc).read_text(errors="replace")[:200]:
        pytest.skip("NVIDIA's nvcc is not installed: no GPU fatbin to refuse")
    real = tmp_path / "gpu.fatbin"
    proc = subprocess.run(
        [nvcc, "-arch=sm_80", "-fatbin", "-o", str(real), str(MODULE)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    proc = run_cli("run", str(HOST), "--", str(real), timeout=280)
    got = int_values(proc.stdout)
    assert got["load_file"] == 0 and got["load_data"] == 0, proc.stdout
    assert "GPU machine code" in proc.stderr


def test_the_module_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(MODULE, tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_the_host_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(HOST, tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_a_program_the_toolkit_links_loads_the_module(tmp_path):
    """Compiled with ``-c`` and linked by the toolkit's compiler driver (as CMake builds it), a
    program that calls cuModuleLoad* exports the runtime its module's kernels call."""
    module = _module(tmp_path)
    obj, program = tmp_path / "host.o", tmp_path / "host"
    for args in (("-c", str(HOST), "-o", str(obj)), (str(obj), "-o", str(program), "-lcuda")):
        proc = run_cli("nvcc", *args, timeout=240)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([str(program), str(module)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert all(got.get(check) == 1 for check in CHECKS), proc.stdout


@pytest.mark.parametrize(
    "libraries",
    [["lib64", "-lcuda"], ["lib64/stubs", "-lcuda", "-Wl,--as-needed", "-Llib64", "-lcudart"]],
    ids=["libcuda", "stubs-as-needed-cudart-after"],
)
def test_a_program_the_host_compiler_links_loads_the_module(tmp_path, libraries):
    """Compiled and linked by g++ against the toolkit's ``libcuda.so`` (as CMake links a target of
    ``.cpp`` sources, and every CUDA executable), a program exports the runtime its module's kernels
    call (toolkit_exports.py), whichever of the driver's folders it names."""
    module = _module(tmp_path)
    home = toolkit.root()
    folder, *rest = libraries
    rest = [f"-L{home / arg[2:]}" if arg.startswith("-L") else arg for arg in rest]
    program = tmp_path / "host"
    link = [compiler(), f"-I{home / 'include'}", str(HOST), "-o", str(program), f"-L{home / folder}", *rest]
    made = subprocess.run(link, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stdout + made.stderr
    proc = subprocess.run([str(program), str(module)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert all(got.get(check) == 1 for check in CHECKS), proc.stdout
