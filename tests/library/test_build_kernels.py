"""``python -m torchlight build-kernels``: argument handling, nvcc discovery, the output directory,
the packaging of the simulator, and the whole flow from a non-editable install in a fresh venv."""

from __future__ import annotations

import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on Python 3.10 needs tomli")

from tl_testing import find_uv

from torchlight import build_kernels as bk

ROOT = Path(__file__).resolve().parents[2]

# --- arguments ------------------------------------------------------------------------------------


def test_arch_lists_parse_with_either_separator():
    assert bk.parse_archs("80;90") == ["80", "90"]
    assert bk.parse_archs(" 80, 90a ;") == ["80", "90a"]


@pytest.mark.parametrize("spec", ["sm80", "80;abc", ";;", ""])
def test_bad_arch_lists_name_the_value_and_where_it_came_from(spec):
    with pytest.raises(bk.KernelBuildError) as info:
        bk.parse_archs(spec, "TORCHLIGHT_CUDA_ARCHS")
    assert info.value.status == 2
    assert f"TORCHLIGHT_CUDA_ARCHS {spec!r}" in str(info.value)


def test_arch_with_simulator_is_refused(capsys, tmp_path):
    assert bk.main(["--simulator", "--arch", "80", "--out", str(tmp_path)]) == 2
    assert "--arch applies to the nvcc build only" in capsys.readouterr().err


# --- nvcc discovery ---------------------------------------------------------------------------


@pytest.fixture
def no_nvcc(monkeypatch, tmp_path):
    """An environment where no nvcc can be found anywhere."""
    for var in ("NVCC", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setattr(bk, "SYSTEM_CUDA_HOMES", (str(tmp_path / "no-cuda"),))
    monkeypatch.setattr(bk, "_wheel_nvcc_candidates", lambda: [])


def _fake_nvcc(directory: Path, script: str, name: str = "nvcc") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def test_without_nvcc_the_error_lists_where_it_looked_and_the_simulator_command(no_nvcc, capsys, tmp_path):
    assert bk.main(["--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "nvcc not found (looked at PATH" in err and str(tmp_path / "no-cuda") in err
    assert 'pip install "cuda-toolkit[nvcc]"' in err
    assert "python -m torchlight build-kernels --simulator" in err
    assert not (tmp_path / "out").exists()


def test_nvcc_is_found_under_cuda_home_then_in_the_wheel(no_nvcc, monkeypatch, tmp_path):
    home_nvcc = _fake_nvcc(tmp_path / "cuda" / "bin", "exit 0\n")
    wheel_nvcc = _fake_nvcc(tmp_path / "wheel" / "cu13" / "bin", "exit 0\n")
    monkeypatch.setattr(bk, "_wheel_nvcc_candidates", lambda: [wheel_nvcc])
    assert bk.find_nvcc()[0] == wheel_nvcc
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert bk.find_nvcc()[0] == home_nvcc


def test_wheel_layout_is_searched(monkeypatch, tmp_path):
    nvcc = _fake_nvcc(tmp_path / "nvidia" / "cu13" / "bin", "exit 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "nvidia" or m.startswith("nvidia.")]:
        monkeypatch.delitem(sys.modules, name)
    assert nvcc in bk._wheel_nvcc_candidates()


def test_a_failing_nvcc_shows_its_message_and_leaves_nothing_behind(no_nvcc, tmp_path, capsys):
    nvcc = _fake_nvcc(tmp_path / "bin", 'echo "fatal: no host compiler" >&2\nexit 4\n')
    os.environ["NVCC"] = str(nvcc)
    try:
        assert bk.main(["--out", str(tmp_path / "out"), "--arch", "80"]) == 1
    finally:
        del os.environ["NVCC"]
    err = capsys.readouterr().err
    assert "nvcc failed on" in err and "(exit 4)" in err and "fatal: no host compiler" in err
    assert list((tmp_path / "out").iterdir()) == []


def test_a_library_without_its_launchers_is_refused(tmp_path):
    nvcc = _compiling_nvcc(tmp_path / "bin", symbols=("unrelated",))
    out = tmp_path / "out"
    with pytest.raises(bk.KernelBuildError, match=r"softmax_kernel\.so does not export tl_attn_softmax_fw"):
        bk.build_nvcc(out, ["80"], nvcc=nvcc, log=lambda _msg: None)
    assert list(out.iterdir()) == []


def _library(path: Path, source: str) -> Path:
    """``path``, a shared object g++ built from the C++ ``source``."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("needs a C++ compiler (g++ or c++) to build a test library")
    subprocess.run(
        [cxx, "-x", "c++", "-shared", "-fPIC", "-o", str(path), "-"], input=source, text=True, check=True
    )
    return path


def test_exports_are_the_defined_dynamic_symbols(tmp_path):
    source = 'extern "C" { int puts(const char *); int tl_layernorm_fw(void) { return puts(""); } }\n'
    source += 'static int hidden(void) { return 1; }\nextern "C" int tl_probe(void) { return hidden(); }\n'
    symbols = bk._defined_symbols(_library(tmp_path / "lib.so", source))
    assert {"tl_layernorm_fw", "tl_probe"} <= symbols
    assert "puts" not in symbols and "hidden" not in symbols  # undefined here; not exported


def test_a_built_file_that_is_not_elf_is_named(tmp_path):
    lib = tmp_path / "softmax_kernel.so"
    lib.write_bytes(b"#!/bin/sh\n")
    with pytest.raises(
        bk.KernelBuildError, match="could not read the dynamic symbols of the built softmax_kernel.so"
    ):
        bk.check_exports(lib, "softmax_kernel")


def test_without_pyelftools_the_exports_are_asked_of_the_dynamic_loader(tmp_path, monkeypatch):
    lib = _library(tmp_path / "softmax_kernel.so", 'extern "C" int tl_attn_softmax_bw(void) { return 0; }\n')
    for name in [m for m in sys.modules if m == "elftools" or m.startswith("elftools.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "elftools", None)
    assert bk._defined_symbols(lib) is None
    with pytest.raises(
        bk.KernelBuildError,
        match=r"does not export tl_attn_softmax_fw, tl_attn_softmax_fw_strided, tl_softmax_abi_version;",
    ):
        bk.check_exports(lib, "softmax_kernel")


def test_each_library_is_counted_and_quiet_keeps_only_the_result(tmp_path, capsys, monkeypatch):
    every = tuple(symbol for symbols in bk.LIBRARIES.values() for symbol in symbols)
    monkeypatch.setenv("NVCC", str(_compiling_nvcc(tmp_path / "bin", symbols=every)))
    assert bk.main(["--out", str(tmp_path / "out"), "--arch", "80"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines[:2]] == ["[1/2]", "[2/2]"]
    assert bk.main(["--out", str(tmp_path / "out"), "--arch", "80", "--quiet"]) == 0
    quiet = capsys.readouterr().out.splitlines()
    assert quiet[0].startswith("build-kernels: built ") and "export" in quiet[-1]
    assert not any("[1/2]" in line or "[2/2]" in line for line in quiet)


def _compiling_nvcc(directory: Path, symbols: tuple[str, ...]) -> Path:
    """A stand-in nvcc that writes, with g++, a shared object exporting ``symbols`` to its -o path."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("needs a C++ compiler (g++ or c++) to make a stand-in library")
    body = " ".join(f"int {name}(void) {{ return 0; }}" for name in symbols)
    script = 'while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\n'
    script += f'echo \'extern "C" {{ {body} }}\' | {cxx} -x c++ -shared -fPIC -o "$out" -\n'
    return _fake_nvcc(directory, script)


# --- the output directory ---------------------------------------------------------------------


def test_the_default_output_is_the_directory_the_loader_reads(monkeypatch, tmp_path):
    from torchlight.backends.cuda_c import loader as cuda_c

    assert bk.SOURCE_DIR == cuda_c.DEFAULT_KERNEL_DIR
    assert set(bk.LIBRARIES) == set(cuda_c.LIBRARIES)
    for name, (abi, launchers) in cuda_c.LIBRARIES.items():
        assert set(bk.LIBRARIES[name]) == {abi, *launchers}
    monkeypatch.delenv(bk.KERNEL_DIR_ENV, raising=False)
    monkeypatch.setattr(bk, "_writable", lambda d: True)
    assert bk.default_out_dir() == cuda_c.DEFAULT_KERNEL_DIR
    monkeypatch.setenv(bk.KERNEL_DIR_ENV, str(tmp_path / "k"))
    assert bk.default_out_dir() == tmp_path / "k"
    assert "TORCHLIGHT_CUDA_KERNEL_DIR points there" in bk._usage_line(tmp_path / "k")


def test_a_read_only_install_builds_into_the_user_cache_and_prints_the_line(monkeypatch, tmp_path):
    monkeypatch.delenv(bk.KERNEL_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(bk, "_writable", lambda d: d != bk.SOURCE_DIR)
    out = bk.default_out_dir()
    assert out == tmp_path / "cache" / "torchlight" / "cuda_kernels"
    assert bk._usage_line(out) == (
        f"to use them, point the loader at them:\n  export TORCHLIGHT_CUDA_KERNEL_DIR={out}"
    )


# --- packaging --------------------------------------------------------------------------------


def _setuptools_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_packages_are_found_and_the_simulator_ships_inside_torchlight():
    config = _setuptools_config()
    assert "packages" not in config, "packages are found by setup.py, not listed by hand"
    assert config["package-dir"] == {"torchlight.simulator": "simulator"}
    assert "runtime/**/*" in config["package-data"]["torchlight.simulator"]
    assert "py.typed" in config["package-data"]["torchlight"]
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "torchlight").rglob("__init__.py")}
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)  # setup.py searches the folder it is run from, as setuptools runs it
        found = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_packages")["packages"]()
    finally:
        os.chdir(cwd)
    assert set(found) == on_disk | {"torchlight.simulator"}, "simulator/tests must stay out of the wheel"
    assert len(found) == len(set(found))


def test_the_simulator_extra_brings_its_front_end_and_the_test_extras_include_it():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("libclang>=") for req in extras["simulator"])
    # NVIDIA's headers the simulator compiles against, each pinned to the release it was tried with
    for header_wheel in ("nvidia-cuda-runtime==", "nvidia-cuda-crt==", "nvidia-cuda-cccl=="):
        assert any(req.startswith(header_wheel) for req in extras["simulator"]), header_wheel
    assert "torchlight[simulator]" in extras["test"]
    assert "torchlight[test]" in extras["dev"]


def test_simulator_modules_import_each_other_relatively():
    for path in (ROOT / "simulator").glob("*.py"):
        text = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+simulator\b", text, re.M), (
            f"{path.name} imports the simulator by its repository name; use a relative import"
        )


def test_ci_script_and_nox_call_the_same_build():
    script = (ROOT / "ci" / "build-kernels.sh").read_text()
    assert 'torchlight/build_kernels.py" "$@"' in script
    assert "nvcc" not in re.sub(r"#.*", "", script), "ci/build-kernels.sh must stay a thin caller"
    noxfile = (ROOT / "noxfile.py").read_text()
    assert '"python", "-m", "torchlight", "build-kernels"' in noxfile
    assert '"-m", "simulator", "build"' not in noxfile


def test_the_ci_script_builds_with_python_and_nothing_else(tmp_path):
    # ci/build-kernels.sh runs torchlight/build_kernels.py as a script: no install, no numpy.
    every = tuple(symbol for symbols in bk.LIBRARIES.values() for symbol in symbols)
    nvcc = _compiling_nvcc(tmp_path / "bin", symbols=every)
    no_numpy = tmp_path / "no_numpy.py"
    no_numpy.write_text("import runpy, sys\nsys.modules['numpy'] = None\nsys.argv = sys.argv[1:]\n")
    no_numpy.write_text(no_numpy.read_text() + "runpy.run_path(sys.argv[0], run_name='__main__')\n")
    wrapper = _fake_nvcc(tmp_path / "py", f'exec "{sys.executable}" "{no_numpy}" "$@"\n', name="python")
    env = {"PATH": os.environ["PATH"], "NVCC": str(nvcc), "PYTHON": str(wrapper)}
    out = tmp_path / "out"
    proc = subprocess.run(
        ["bash", str(ROOT / "ci" / "build-kernels.sh"), "--out", str(out), "--arch", "80;90"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "built softmax_kernel.so and layernorm_kernel.so with nvcc for sm_80, sm_90" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["layernorm_kernel.so", "softmax_kernel.so"]


# --- a pip user's install, outside the repository ---------------------------------------------

_CHECK_SOFTMAX = r"""
import os, sys
import numpy as np
import torchlight
from torchlight.backends.cuda_c.loader import find_kernel_dir, load_kernels
from torchlight.backends.cpu import cpu_backend
from torchlight.core.tensor_data import TensorData

root = os.path.realpath(sys.argv[1])
assert not os.path.realpath(torchlight.__file__).startswith(root), torchlight.__file__
import importlib.util
assert importlib.util.find_spec("simulator") is None, "a top-level 'simulator' is importable"
directory = find_kernel_dir()
assert str(directory) == sys.argv[2], (directory, sys.argv[2])
kernels = load_kernels(directory)
rng = np.random.default_rng(0)
x = TensorData.from_array(rng.standard_normal((2, 3, 4, 5)).astype(np.float32))
mask = TensorData.from_array(np.where(rng.random((2, 5)) < 0.3, -np.inf, 0.0).astype(np.float32))
for causal in (False, True):
    got = kernels.attn_softmax_fw(x, mask, causal).array
    want = cpu_backend().attn_softmax_fw(x, mask, causal).array
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
print("kernels from", directory, "match the numpy reference")
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict:
    """A fresh venv with torchlight installed from a copy of this checkout (not editable)."""
    base = tmp_path_factory.mktemp("pip-user")
    src = base / "src"
    ignore = shutil.ignore_patterns(
        ".git", ".nox", ".venv", "build", "reports", "dist", "*.egg-info", "*.so", "__pycache__", ".*cache"
    )
    shutil.copytree(ROOT, src, ignore=ignore)
    venv = base / "venv"
    python = venv / "bin" / "python"
    # The simulator extra brings libclang, the simulator's C++ front end.
    requirement = f"{src}[simulator]"
    uv = find_uv()
    if uv is None:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        install = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", requirement]
    else:
        # The same build and install as pip's, with uv's package cache: seconds instead of ~20 s.
        # The copy keeps the checkout's mtimes, by which uv would reuse a wheel built from an older
        # checkout at the same path: torchlight itself is always built afresh.
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, timeout=300)
        install = [uv, "pip", "install", "-q", "--refresh-package", "torchlight", "--python", str(python)]
        install.append(requirement)
    pip = subprocess.run(
        install,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, f"pip install of the checkout failed:\n{pip.stdout}\n{pip.stderr}"
    shutil.rmtree(src)  # nothing may come from the checkout copy from here on
    work = base / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCHLIGHT_", "PYTHON", "SIMULATOR_"))}
    env["XDG_CACHE_HOME"] = str(base / "cache")
    return {"python": python, "cwd": work, "env": env}


def _run(installed: dict, *args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(installed["python"]), *args],
        capture_output=True,
        text=True,
        cwd=installed["cwd"],
        env={**installed["env"], **(env_extra or {})},
        timeout=600,
    )


@pytest.mark.slow
def test_simulator_build_from_a_pip_install_runs_the_kernels(installed):
    if shutil.which("g++") is None and shutil.which("c++") is None:
        pytest.skip("the simulator build needs a C++ compiler (g++ or c++)")
    out = installed["cwd"] / "k"
    build = _run(installed, "-m", "torchlight", "build-kernels", "--simulator", "--out", str(out))
    assert build.returncode == 0, build.stdout + build.stderr
    assert f"export TORCHLIGHT_CUDA_KERNEL_DIR={out}" in build.stdout
    assert sorted(p.name for p in out.iterdir()) == ["layernorm_kernel.so", "softmax_kernel.so"]
    assert (Path(installed["env"]["XDG_CACHE_HOME"]) / "torchlight" / "simulator-cache").is_dir()
    check = _run(
        installed, "-c", _CHECK_SOFTMAX, str(ROOT), str(out), env_extra={bk.KERNEL_DIR_ENV: str(out)}
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "match the numpy reference" in check.stdout


@pytest.mark.slow
@pytest.mark.kernels
def test_nvcc_build_from_a_pip_install_goes_where_the_loader_looks(installed):
    nvcc, looked = bk.find_nvcc()
    if nvcc is None:
        pytest.skip(f"no nvcc here (looked at {', '.join(looked)}); the kernels tier has one")
    build = _run(
        installed, "-m", "torchlight", "build-kernels", "--arch", "80", env_extra={"NVCC": str(nvcc)}
    )
    assert build.returncode == 0, build.stdout + build.stderr
    assert "(its default)" in build.stdout and "export" not in build.stdout
    code = (
        "import torchlight.build_kernels as bk; from torchlight.backends.cuda_c.loader import "
        "find_kernel_dir, load_kernels; d = find_kernel_dir(); assert d == bk.SOURCE_DIR, d; "
        "load_kernels(d); print(d)"
    )
    check = _run(installed, "-c", code)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "site-packages" in check.stdout


@pytest.mark.slow
def test_the_commands_of_a_pip_install_answer_help_and_version(installed):
    bin_dir = installed["python"].parent
    # The installed commands alone: no PYTHONPATH of the caller may lend them a checkout's packages.
    env = installed["env"]
    version = runpy.run_path(str(ROOT / "torchlight" / "_version.py"))["__version__"]
    for command in ("torchlight", "torchlight-sim"):
        shown = subprocess.run(
            [str(bin_dir / command), "--help"],
            capture_output=True,
            text=True,
            cwd=installed["cwd"],
            env=env,
            timeout=60,
        )
        assert shown.returncode == 0 and shown.stdout.startswith(f"usage: {command} "), shown.stderr
        said = subprocess.run(
            [str(bin_dir / command), "--version"], capture_output=True, text=True, timeout=60, env=env
        )
        assert said.returncode == 0 and f"torchlight {version}" in said.stdout, said.stderr
    sim_help = subprocess.run(
        [str(bin_dir / "torchlight-sim"), "--help"], capture_output=True, text=True, env=env
    )
    for sub in ("run", "check", "build", "nvcc", "toolkit"):
        assert re.search(rf"^\s+{sub}\s", sim_help.stdout, re.M), f"torchlight-sim --help lists no {sub}"
    nvcc = subprocess.run(
        [str(bin_dir / "torchlight-nvcc"), "--version"], capture_output=True, text=True, env=env
    )
    assert nvcc.returncode == 0 and "Cuda compilation tools, release" in nvcc.stdout, nvcc.stderr
    wrong = subprocess.run(
        [str(bin_dir / "torchlight"), "no-such-command"], capture_output=True, text=True, env=env
    )
    assert wrong.returncode == 2 and not wrong.stdout and "invalid choice" in wrong.stderr
    where = _run(
        installed,
        "-c",
        "import pathlib, torchlight, torchlight.simulator as s; "
        "print((pathlib.Path(torchlight.__file__).parent / 'py.typed').is_file(), s.__name__, "
        "(pathlib.Path(s.__file__).parent / 'tests').exists())",
    )
    assert where.stdout.split() == ["True", "torchlight.simulator", "False"], where.stdout + where.stderr
