"""The verification tiers in one table: session, backends, test folders, markers, extras,
environment, and why a tier cannot run here.

Standard library only, so any ``python3`` reads it: ``noxfile.py`` runs every tier from it,
``ci/matrix_report.py`` orders and names its rows with it, ``tests/tl_testing.py`` takes the
tier names from it and ``ci/gpu-check.sh`` asks it on the command line (from the repo root)::

    python3 -m ci.tiers pytest-args gpu    # test folders and marker expression, one line
    python3 -m ci.tiers env gpu            # KEY=VALUE lines of the tier's environment
    python3 -m ci.tiers why-not kernels    # why this machine cannot run it (exit 1), or nothing
    python3 -m ci.tiers nvcc [--json F]    # the nvcc a kernel build here uses, and where it is from
    python3 -m ci.tiers ci-sessions        # the tier sessions CI runs without a GPU (.ci/run runs them)

Adding a tier touches three files:

1. here, one ``_tier(...)`` row in ``TIERS``: the noxfile registers its session from the row
   (name, ``nox -l`` line, packages, kernel build, a ``then`` command before pytest); bare ``nox``
   and ``.ci/run`` run it unless it needs a GPU or says ``ci=False``;
2. ``.github/workflows/ci.yml``, a job named after the tier that runs its session with
   ``--matrix-tier=<name>``, and the report job's ``needs`` (unless ``ci=False``);
3. ``README.md``, its row in the test matrix and, when CI runs it without a GPU, its session in
   the CI test command (the block after ``<!-- ci-test-command -->``).

``tests/harness/`` checks the workflow, ``.ci/run`` and the README against this table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType, ModuleType

from simulator.host import cpu_count as host_cpu_count
from simulator.host import find_cxx

ROOT = Path(__file__).resolve().parent.parent
KERNEL_SOURCES = "torchlight/cuda_kernels/*.cu"
SIM_KERNEL_DIR = "build/sim-kernels"
GPU_KERNEL_DIR = "build/kernels"
GENERIC_TESTS = "tests/generic"
# Where tier results go for `nox -s matrix` and the CI report job (relative to the repository root).
RAW_RESULTS = Path("reports") / "raw"


def read_versions(path: Path = ROOT / "ci" / "versions.env") -> dict[str, str]:
    """The KEY=VALUE pins of ci/versions.env (values may be double-quoted)."""
    values: dict[str, str] = {}
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"{path}:{number}: expected KEY=VALUE, got {line!r}")
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        values[key] = value
    return values


# The one place versions are pinned: CUDA release, base images, CUDA wheels, test tools.
VERSIONS = read_versions()
# tests/harness/ lints the Dockerfiles and CI scripts and reads the workflow with these.
HARNESS_TEST_TOOLS = tuple(VERSIONS["HARNESS_TOOLS"].split())
# The pinned CUDA release's nvcc and ptxas, which also pin the NVVM/NVRTC/runtime wheels
# numba-cuda compiles with to that release (the kernels tier needs ptxas and NVVM of one release).
CUDA_WHEELS = VERSIONS["CUDA_WHEELS"]


@dataclass(frozen=True)
class Tier:
    """One verification tier: what it runs, with which backends and packages, and what it needs."""

    name: str
    session: str  # the nox session that runs it
    tests: tuple[str, ...]  # the folders pytest runs (a path after `nox -s ... --` replaces them)
    backends: tuple[str, ...] = ()  # TORCHLIGHT_TEST_BACKENDS (empty: the suite's default, cpu)
    markers: str | None = None  # the `-m` expression
    extras: str = ".[test]"  # what the session installs from this checkout
    packages: tuple[str, ...] = ()  # what it installs besides (pinned in ci/versions.env)
    env: Mapping[str, str] = field(default_factory=dict)  # besides TORCHLIGHT_TEST_BACKENDS
    workers: str | None = "auto"  # pytest-xdist `-n`; None runs in one process
    # pytest-xdist `--dist` with the workers (None: its default, "load"); "loadscope" gives each
    # worker whole modules, so that a module-scoped fixture (a program run in each mode, a program
    # written to the worker's own temporary folder and built) runs once, not once per worker;
    # simulator/tests hands its modules out longest first (simulator/tests/module_order.py).
    dist: str | None = None
    needs: tuple[str, ...] = ()  # keys of REQUIREMENTS: what this machine must have
    kernels: str | None = None  # the CUDA C build before the tests: "simulator", "nvcc" or None
    files: tuple[tuple[str, str], ...] = (("tests/conftest.py", "the test suite"),)  # (glob, why)
    recorded: bool = True  # a full run records its counts under reports/sessions/ (docker compares)
    loads_conftest: bool = True  # False: its folders do not load tests/conftest.py (the matrix plugin)
    then: tuple[str, ...] = ()  # a command the session runs after the kernel build, before pytest
    prebuilt_kernels: bool = False  # test $TORCHLIGHT_CUDA_KERNEL_DIR's or the image's libraries if any
    ci: bool = True  # CI runs it: a workflow job, and .ci/run and bare `nox` unless it needs a GPU
    summary: str = field(kw_only=True)  # what it proves, one line: `nox -l` shows "<name> tier: <summary>"

    def description(self) -> str:
        """The docstring of the tier's nox session, the line ``nox -l`` shows."""
        return f"{self.name} tier: {self.summary}"

    def environment(self) -> dict[str, str]:
        """The variables the tier's pytest runs with."""
        out = dict(self.env)
        if self.backends:
            out["TORCHLIGHT_TEST_BACKENDS"] = ",".join(self.backends)
        return out

    def pytest_args(self, posargs: list[str] | tuple[str, ...] = ()) -> list[str]:
        """Marker expression and test folders; a test path among ``posargs`` replaces the folders."""
        marks = ["-m", self.markers] if self.markers else []
        if any(Path(arg.split("::")[0]).exists() for arg in posargs if not arg.startswith("-")):
            return [*marks, *posargs]
        return [*marks, *self.tests, *posargs]

    def problem(self, can_install: bool = True) -> str | None:
        """Why this machine cannot run the tier (hardware or toolchain), or None when it can.

        ``can_install``: the session installs its packages (not ``nox --no-venv``), so the
        pip CUDA wheels' nvcc counts as present.
        """
        for need in self.needs:
            found = REQUIREMENTS[need](can_install)
            if found:
                return found
        return None


def _tier(*args, env: dict[str, str] | None = None, **kwargs) -> Tier:
    # The environment is read-only so that no caller changes the table for everyone.
    return Tier(*args, env=MappingProxyType(dict(env or {})), **kwargs)


# Report order. An exported NUMBA_ENABLE_CUDASIM=1 would turn a real-hardware or twin run into a
# simulated one, so the tiers that must not simulate set it to 0.
TIERS: dict[str, Tier] = {
    t.name: t
    for t in (
        _tier(
            "cpu",
            "tests-cpu",
            summary="the generic suite on CPUBackend and the numba twin, plus twin, library and harness "
            "tests.",
            tests=(GENERIC_TESTS, "tests/backends/numba", "tests/library", "tests/harness"),
            backends=("cpu", "numba"),
            # Tests marked `kernels` need nvcc: the kernels tier runs them, so every machine (and
            # the cpu image, which has no CUDA toolkit) runs the same cpu-tier tests.
            markers="not kernels",
            extras=".[numba,plots,test]",
            packages=HARNESS_TEST_TOOLS,
            env={"TORCHLIGHT_TEST_TIER": "cpu", "NUMBA_ENABLE_CUDASIM": "0"},
        ),
        _tier(
            "cudasim",
            "tests-cudasim",
            summary="numba-cuda kernels in the CUDA simulator and the CUDA C kernels built by simulator/.",
            tests=(GENERIC_TESTS, "tests/backends/cuda", "tests/backends/cuda_c"),
            backends=("cuda", "cuda-c"),
            extras=".[cuda,test]",
            packages=(CUDA_WHEELS,),
            env={
                "NUMBA_ENABLE_CUDASIM": "1",
                "TORCHLIGHT_TEST_TIER": "cudasim",
                "TORCHLIGHT_CUDA_KERNEL_DIR": SIM_KERNEL_DIR,
            },
            needs=("c++",),
            kernels="simulator",
            files=(
                ("tests/conftest.py", "the test suite"),
                ("simulator/__main__.py", "the simulator"),
                (KERNEL_SOURCES, "the CUDA C kernel sources"),
            ),
        ),
        _tier(
            "kernels",
            "kernels",
            summary="nvcc (toolkit or pip wheel) builds the .so files, numba-cuda kernels pass ptxas.",
            # The README's nvcc blocks (test_readme_blocks.py) and the simulator's test programs
            # compiled by nvcc (simulator/tests marks them `kernels`) run here, where nvcc is.
            tests=(
                "tests/backends/cuda",
                "tests/backends/cuda_c",
                "tests/library",
                "tests/harness/test_readme_blocks.py",
                "simulator/tests",
            ),
            markers="kernels",
            extras=".[cuda,test]",
            packages=(CUDA_WHEELS,),
            # Its tests build and load host libraries: the cpu tier's limits, the default backend.
            env={"TORCHLIGHT_TEST_TIER": "cpu", "TORCHLIGHT_CUDA_KERNEL_DIR": GPU_KERNEL_DIR},
            # One nvcc compile per worker: the simulator's test programs take most of its time.
            workers="auto",
            needs=("nvcc",),
            kernels="nvcc",
            files=(
                ("tests/conftest.py", "the test suite"),
                ("ci/compile_ptx.py", "the PTX compile check of the numba-cuda kernels"),
                (KERNEL_SOURCES, "the CUDA C kernel sources"),
            ),
            # Every numba-cuda kernel through ptxas; the counts go where the matrix report reads them.
            then=(
                "python",
                "ci/compile_ptx.py",
                "--require-ptxas",
                "--json",
                str(RAW_RESULTS / "compile_ptx.json"),
            ),
        ),
        _tier(
            "sanitize",
            "sanitize",
            summary="the simulator's own tests, memcheck/racecheck/synccheck with planted bugs.",
            tests=("simulator/tests",),
            # The simulator's cuBLAS and cuRAND are built against those libraries' headers.
            extras=".[test,simulator-libs]",
            # Its tests that compile with nvcc (marked `kernels`) run in the kernels tier.
            markers="not kernels",
            workers="2",
            dist="loadscope",
            needs=("c++",),
            files=(("simulator/tests", "the simulator and its tests"),),
            recorded=False,
            loads_conftest=False,
        ),
        _tier(
            "gpu",
            "tests-gpu",
            summary="numba-cuda and CUDA C kernels on a real NVIDIA GPU (fails when there is none).",
            tests=(GENERIC_TESTS, "tests/backends/cuda", "tests/backends/cuda_c"),
            backends=("cuda", "cuda-c"),
            extras=".[cuda,test]",
            packages=(CUDA_WHEELS,),
            env={
                "NUMBA_ENABLE_CUDASIM": "0",
                "TORCHLIGHT_TEST_TIER": "gpu",
                "TORCHLIGHT_CUDA_KERNEL_DIR": GPU_KERNEL_DIR,
            },
            workers=None,
            needs=("gpu",),
            kernels="nvcc",
            # The image's build stage made the libraries; the log shows the GPUs the tests see.
            prebuilt_kernels=True,
            then=("nvidia-smi",),
        ),
    )
}


def tier(name: str) -> Tier:
    """The tier called ``name``; ValueError listing the known names otherwise."""
    if name not in TIERS:
        raise ValueError(f"{name!r} is not a tier: expected one of {', '.join(TIERS)}")
    return TIERS[name]


def by_session(session: str) -> Tier | None:
    """The tier nox session ``session`` runs, or None for a session that runs no tier."""
    return next((t for t in TIERS.values() if t.session == session), None)


def ci_sessions_without_gpu() -> list[str]:
    """The sessions of the tiers CI runs on a machine without a GPU, in table order.

    ``.ci/run`` and bare ``nox`` run them after ``lint``; the README's CI test command names them.
    """
    return [t.session for t in TIERS.values() if t.ci and "gpu" not in t.needs]


def limit_profiles() -> list[str]:
    """The TORCHLIGHT_TEST_TIER values the tiers set (tests/tl_testing.py has limits for each)."""
    return list(
        dict.fromkeys(
            t.env["TORCHLIGHT_TEST_TIER"] for t in TIERS.values() if "TORCHLIGHT_TEST_TIER" in t.env
        )
    )


# --- what a machine has -------------------------------------------------------------------------


def build_kernels_module() -> ModuleType:
    """torchlight/build_kernels.py, whose nvcc lookup the kernel build itself uses.

    Loaded by path: importing it as ``torchlight.build_kernels`` runs the package's __init__,
    which needs numpy, and this module must work with a bare python3.
    """
    name = "torchlight_build_kernels_for_tiers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "torchlight" / "build_kernels.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def gpu_problem() -> str | None:
    """None when nvidia-smi works and lists at least one GPU, else the reason there is none."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "nvidia-smi not found on PATH (no NVIDIA driver on this machine)"
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"nvidia-smi -L did not run: {err}"
    if proc.returncode != 0:
        return f"nvidia-smi -L exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()}"
    count = sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU "))
    if count == 0:
        return "nvidia-smi lists 0 GPUs (is the device passed to this container with --gpus all?)"
    return None


def nvcc_info() -> dict[str, str] | None:
    """The nvcc ``python -m torchlight build-kernels`` would run here: path, origin and release."""
    bk = build_kernels_module()
    try:
        path, _ = bk.find_nvcc()
    except bk.KernelBuildError:
        return None
    if path is None:
        return None
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    release = re.search(r"release ([0-9.]+)", out)
    return {
        "path": str(path),
        "origin": bk.nvcc_origin(path),
        "release": release[1] if release else "unknown",
    }


def nvcc_text(info: Mapping[str, str] | None) -> str:
    """One phrase naming an nvcc and where it comes from."""
    if not info:
        return "no nvcc"
    return f"nvcc {info['path']} (CUDA {info['release']}, {info['origin']})"


def _cxx_problem(can_install: bool) -> str | None:
    if find_cxx() is None:
        return "no C++ compiler (g++, c++ or clang++ on PATH, or $CXX) to build the simulated kernels"
    return None


def _nvcc_problem(can_install: bool) -> str | None:
    # A session with its own virtualenv installs CUDA_WHEELS, whose nvcc the build finds when
    # the machine has no CUDA toolkit.
    if can_install or nvcc_info() is not None:
        return None
    return (
        "nvcc not found (no CUDA toolkit, and no nvcc of the pip CUDA wheels in this Python) and this run "
        f'installs no packages: install the CUDA toolkit or pip install "{CUDA_WHEELS}"'
    )


def _gpu_problem(can_install: bool) -> str | None:
    found = gpu_problem()
    return f"no GPU: {found}" if found else None


# What a tier may need -> why this machine lacks it (None when it has it).
REQUIREMENTS: dict[str, Callable[[bool], str | None]] = {
    "c++": _cxx_problem,
    "nvcc": _nvcc_problem,
    "gpu": _gpu_problem,
}


def cpu_count() -> int:
    """How many pytest-xdist workers a tier runs: TORCHLIGHT_TEST_WORKERS, else the CPUs this
    process may use (``simulator.host.cpu_count``: affinity and container quota).

    ``pytest -n auto`` counts the host's CPUs, which inside a CPU-limited container oversubscribes it.
    """
    override = os.environ.get("TORCHLIGHT_TEST_WORKERS", "").strip()
    if override:
        if not override.isdigit() or int(override) < 1:
            raise ValueError(f"TORCHLIGHT_TEST_WORKERS={override!r}: expected a whole number >= 1")
        return int(override)
    return host_cpu_count()


# --- command line -------------------------------------------------------------------------------


def _env_lines(t: Tier) -> list[str]:
    return [f"{key}={shlex.quote(value)}" for key, value in t.environment().items()]


def _parser() -> argparse.ArgumentParser:
    version = runpy.run_path(str(ROOT / "torchlight" / "_version.py"))["__version__"]
    parser = argparse.ArgumentParser(
        prog="python3 -m ci.tiers",
        description="The test tiers nox and CI run: their pytest arguments, environment, and why one "
        "cannot run here; or which nvcc the kernels tier would use.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s (torchlight {version})")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, what in (
        ("pytest-args", "print the tier's pytest arguments (folders and marks)"),
        ("env", "print the tier's environment variables, one NAME=VALUE a line"),
        ("why-not", "print why the tier cannot run here (status 1), nothing when it can"),
    ):
        commands.add_parser(name, help=what, description=what).add_argument(
            "tier", metavar="TIER", help=f"one of {', '.join(TIERS)}"
        )
    nvcc = commands.add_parser("nvcc", help="print the nvcc the kernels tier uses (status 1 when none)")
    nvcc.add_argument("--json", metavar="PATH", help="also write it as JSON to PATH")
    what = "print the sessions of the tiers CI runs without a GPU, on one line (.ci/run runs them)"
    commands.add_parser("ci-sessions", help=what, description=what)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``pytest-args TIER``, ``env TIER``, ``why-not TIER``, ``nvcc [--json PATH]`` or ``ci-sessions``."""
    options = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if options.command == "ci-sessions":
        print(" ".join(ci_sessions_without_gpu()))
        return 0
    if options.command == "nvcc":
        info = nvcc_info()
        if options.json:
            out = Path(options.json)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"nvcc": info}, indent=1) + "\n")
        print(nvcc_text(info))
        return 0 if info else 1
    try:
        t = tier(options.tier)
    except ValueError as err:
        print(f"ci.tiers: {err}", file=sys.stderr)
        return 2
    if options.command == "pytest-args":
        print(shlex.join(t.pytest_args()))
    elif options.command == "env":
        for line in _env_lines(t):  # none for a tier that needs no variables
            print(line)
    else:
        found = t.problem(can_install=False)
        if found:
            print(found)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
