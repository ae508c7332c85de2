"""Docker image orchestration for `nox -s docker-cpu` and `nox -s docker-cuda`.

Each session builds its images with BuildKit, runs inside them the tiers this machine supports,
compares the in-image test counts with the same sessions' last full run outside Docker
(reports/sessions/, run first when missing or older than the sources, which the session's first
line says), and writes reports/docker/<image>.json for the matrix report. A base image that cannot
be pulled is replaced by a stand-in made from the distribution's packages (debootstrap + docker
import), and the summary says so. ``cpu(session)`` and ``cuda(session)`` are the two entry points;
``build(session)`` (`nox -s docker-build`) only builds what they use, so that CI can build while the
tiers run. ``session`` is the running nox session (for logging, errors and commands).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ci import tiers
from ci.tiers import ROOT, VERSIONS

if TYPE_CHECKING:
    import nox

REPORTS = ROOT / "reports"
SESSION_RESULTS = REPORTS / "sessions"
DOCKER_RESULTS = REPORTS / "docker"
CPU_SESSION = tiers.TIERS["cpu"].session
# The sessions the cuda `test` image runs (the tiers a machine without a GPU supports).
CUDA_TEST_SESSIONS = [tiers.TIERS["kernels"].session, tiers.TIERS["cudasim"].session]
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


def _docker(session: nox.Session) -> tuple[str, str]:
    """(docker CLI, engine version); fails at once, with the reason, without an engine or BuildKit."""
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
            return cli, info.stdout.strip()
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
    paths = [ROOT / "noxfile.py", ROOT / "pyproject.toml", ROOT / "setup.py", ROOT / "ci" / "tiers.py"]
    for folder in ("torchlight", "simulator", "tests"):
        paths += [p for p in (ROOT / folder).rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    return max(p.stat().st_mtime for p in paths)


def _outside_stale(name: str) -> str | None:
    """Why the recorded full run of session ``name`` cannot be compared with (None when it can)."""
    recorded = SESSION_RESULTS / f"{name}.json"
    if not recorded.is_file():
        return f"no recorded full run in {os.path.relpath(recorded, ROOT)}"
    if recorded.stat().st_mtime < _newest_source_mtime():
        return f"its record {os.path.relpath(recorded, ROOT)} is older than the sources"
    return None


def _announce(session: nox.Session, kind: str, names: list[str], cli: str, engine: str) -> None:
    """The session's first line: which tiers must first run outside Docker, and what that costs."""
    stale = {name: why for name in names if (why := _outside_stale(name))}
    if stale:
        runs = [
            f"the {tiers.by_session(name).name} tier (`nox -s {name}`: {why})" for name, why in stale.items()
        ]
        session.log(
            f"docker-{kind}: first running {' and '.join(runs)} outside Docker to have counts to compare "
            "(the cpu tier alone took 34 minutes on a busy 2-core machine), then the image"
        )
    else:
        session.log(
            f"docker-{kind}: outside-Docker counts of {', '.join(names)} are current; building the image"
        )
    session.log(f"docker CLI {cli}, engine {engine}")


def _outside_counts(session: nox.Session, name: str) -> dict[str, int]:
    """Counts of the last full run of session ``name`` outside Docker; runs it first when stale."""
    recorded = SESSION_RESULTS / f"{name}.json"
    why = _outside_stale(name)
    if why:
        session.log(f"{why}: running `nox -s {name}` outside Docker")
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
        tier = tiers.by_session(name).name
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


def _build_cpu(session: nox.Session, cli: str) -> tuple[str, dict[str, str], float]:
    """Build Dockerfile.cpu: (tag, base image record, seconds the build took)."""
    tag = os.environ.get("TORCHLIGHT_IMAGE_CPU", "torchlight-cpu:dev")
    base = _base(session, cli, "PYTHON_IMAGE", lambda: _standin_debian(session, cli))
    args = {
        "PYTHON_IMAGE": base["used"],
        "CUDA_RELEASE": VERSIONS["CUDA_RELEASE"],
        "HARNESS_TOOLS": VERSIONS["HARNESS_TOOLS"],
        "NOX_SPEC": VERSIONS["NOX_SPEC"],
    }
    return tag, base, _build(session, cli, "Dockerfile.cpu", tag, args)


def cpu(session: nox.Session) -> None:
    """Build Dockerfile.cpu and run the cpu tier inside it; counts must match outside Docker."""
    _no_posargs(session)
    cli, engine = _docker(session)
    _announce(session, "cpu", [CPU_SESSION], cli, engine)
    tag, base, seconds = _build_cpu(session, cli)
    tests = _run_in_image(session, cli, tag, [CPU_SESSION], "cpu")
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
    module = tiers.build_kernels_module()
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
    problem = tiers.gpu_problem()
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


class _CudaBuild(NamedTuple):
    """What building Dockerfile.cuda made: the stand-in devel image (if any), the bases, the times."""

    tag: str
    test_tag: str
    standins: list[dict]
    devel: dict[str, str]
    runtime: dict[str, str]
    seconds: float
    test_seconds: float


def _build_cuda(session: nox.Session, cli: str) -> _CudaBuild:
    """Build Dockerfile.cuda's gpu (default) and test targets, and a stand-in devel base if needed."""
    tag = os.environ.get("TORCHLIGHT_IMAGE_CUDA", "torchlight-cuda:dev")
    test_tag = os.environ.get("TORCHLIGHT_IMAGE_CUDA_TEST", "torchlight-cuda-test:dev")
    standins: list[dict] = []

    def devel_standin() -> str:
        debian = _standin_debian(session, cli)
        standin = f"{STANDIN_REPO}/cuda-devel:{VERSIONS['CUDA_RELEASE']}"
        args = {"BASE_IMAGE": debian}  # ci/nvcc-wheel.sh reads CUDA_WHEELS from ci/versions.env
        seconds = _build(session, cli, "ci/cuda-devel-standin.Dockerfile", standin, args, context="ci")
        standins.append(
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
    seconds = _build(session, cli, "Dockerfile.cuda", tag, args)
    test_seconds = _build(session, cli, "Dockerfile.cuda", test_tag, args, target="test")
    return _CudaBuild(tag, test_tag, standins, devel, runtime, seconds, test_seconds)


def cuda(session: nox.Session) -> None:
    """Build Dockerfile.cuda; check the .so files and the gpu default; run kernels+cudasim in it."""
    _no_posargs(session)
    cli, engine = _docker(session)
    _announce(session, "cuda", CUDA_TEST_SESSIONS, cli, engine)
    built = _build_cuda(session, cli)
    checks, problems = _check_exports(cli, built.tag)
    more_checks, more_problems = _check_default_command(cli, built.tag)
    tests = _run_in_image(session, cli, built.test_tag, CUDA_TEST_SESSIONS, "cuda-test")
    images = [
        *built.standins,
        {
            "tag": built.tag,
            "dockerfile": "Dockerfile.cuda",
            "target": "gpu (default)",
            "build_seconds": round(built.seconds, 1),
            "size_bytes": _image_size(cli, built.tag),
            "bases": [_base_text(built.devel), _base_text(built.runtime)],
            "base_images": [built.devel, built.runtime],
            "checks": checks + more_checks,
            "problems": problems + more_problems,
        },
        {
            "tag": built.test_tag,
            "dockerfile": "Dockerfile.cuda",
            "target": "test",
            "build_seconds": round(built.test_seconds, 1),
            "size_bytes": _image_size(cli, built.test_tag),
            "bases": [_base_text(built.runtime)],
            "tests": tests,
            "problems": _test_problems(tests),
        },
    ]
    _finish(session, "cuda", images)


def build(session: nox.Session) -> None:
    """Build every image docker-cpu and docker-cuda test (their bases too), and run nothing in them.

    The builds wait on the network and the disk more than on the CPUs, so CI starts this while
    the tiers run; docker-cpu and docker-cuda then find each layer in the build cache.
    """
    _no_posargs(session)
    cli, engine = _docker(session)
    session.log(f"docker CLI {cli}, engine {engine}")
    start = time.monotonic()
    cpu_tag, _, cpu_seconds = _build_cpu(session, cli)
    built = _build_cuda(session, cli)
    made = [(cpu_tag, cpu_seconds)] + [(i["tag"], i["build_seconds"]) for i in built.standins]
    made += [(built.tag, built.seconds), (built.test_tag, built.test_seconds)]
    listed = ", ".join(f"{tag} ({seconds:.0f} s)" for tag, seconds in made)
    session.log(f"docker-build: built {listed} in {time.monotonic() - start:.0f} s")
