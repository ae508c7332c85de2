"""One table of tiers (ci/tiers.py): its command line, its requirements, and that the noxfile,
the matrix report, the test configuration and the GPU check read it instead of restating it."""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from noxfile_sessions import load_noxfile

from ci import docker_images, matrix_run, tiers

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    # -S -E: no site-packages and no PYTHON* variables, so only the standard library is importable.
    return subprocess.run(
        [sys.executable, "-S", "-E", "-m", "ci.tiers", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("name", list(tiers.TIERS))
def test_cli_prints_each_tiers_pytest_arguments_and_environment_with_the_standard_library_only(name):
    tier = tiers.TIERS[name]
    args = cli("pytest-args", name)
    assert args.returncode == 0, args.stderr
    assert len(args.stdout.splitlines()) == 1
    words = shlex.split(args.stdout)
    assert words == tier.pytest_args()
    assert [w for w in words if not w.startswith("-") and w != tier.markers] == list(tier.tests)
    if tier.markers:
        assert words[:2] == ["-m", tier.markers]
    env = cli("env", name)
    assert env.returncode == 0, env.stderr
    # The lines are shell assignments: sourcing them gives back the tier's environment.
    pairs = [shlex.split(line)[0].split("=", 1) for line in env.stdout.splitlines()]
    assert dict(pairs) == tier.environment()


def test_cli_prints_the_sessions_ci_runs_without_a_gpu_with_the_standard_library_only():
    # What .ci/run runs after lint.
    done = cli("ci-sessions")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == tiers.ci_sessions_without_gpu()
    assert tiers.TIERS["gpu"].session not in done.stdout.split()


def test_cli_refuses_an_unknown_tier_naming_the_known_ones():
    done = cli("env", "cuda")
    assert done.returncode == 2
    assert "'cuda' is not a tier" in done.stderr and ", ".join(tiers.TIERS) in done.stderr


def test_gpu_tier_cannot_run_without_nvidia_smi_and_says_why(tmp_path):
    done = cli("why-not", "gpu", env={"PATH": str(tmp_path)})
    assert done.returncode == 1
    assert done.stdout.startswith("no GPU: nvidia-smi not found on PATH")
    assert cli("why-not", "cpu", env={"PATH": str(tmp_path)}).returncode == 0


def test_every_tier_session_requirement_and_limit_profile_exists():
    assert len({t.session for t in tiers.TIERS.values()}) == len(tiers.TIERS)
    for tier in tiers.TIERS.values():
        assert set(tier.needs) <= set(tiers.REQUIREMENTS), tier.name
        assert tier.kernels in (None, "simulator", "nvcc"), tier.name
        for folder in tier.tests:
            assert (ROOT / folder).exists(), f"the {tier.name} tier runs {folder}, which does not exist"
    import tl_testing

    assert set(tiers.limit_profiles()) == set(tl_testing.TIERS), "every profile a tier sets has its limits"


def test_the_table_cannot_be_changed_by_a_caller():
    with pytest.raises(TypeError):
        tiers.TIERS["cpu"].env["TORCHLIGHT_TEST_TIER"] = "gpu"
    env = tiers.TIERS["cpu"].environment()
    env["EXTRA"] = "1"
    assert "EXTRA" not in tiers.TIERS["cpu"].environment()


# --- the kernels tier and nvcc ------------------------------------------------------------------


def test_kernels_tier_runs_with_the_wheels_nvcc_when_the_session_installs_them(monkeypatch):
    monkeypatch.setattr(tiers, "nvcc_info", lambda: None)  # no CUDA toolkit, no wheel in this Python
    kernels = tiers.TIERS["kernels"]
    assert kernels.problem(can_install=True) is None, "the session installs CUDA_WHEELS, whose nvcc builds"
    problem = kernels.problem(can_install=False)
    assert "nvcc not found" in problem and tiers.CUDA_WHEELS in problem


def test_nvcc_lookup_is_the_builds_and_names_the_pip_wheel(tmp_path, monkeypatch):
    # A stand-in pip wheel layout (nvidia/cu13/bin/nvcc) and no CUDA toolkit anywhere.
    fake = tmp_path / "site" / "nvidia" / "cu13" / "bin" / "nvcc"
    fake.parent.mkdir(parents=True)
    fake.write_text("#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n")
    fake.chmod(0o755)
    bk = tiers.build_kernels_module()
    monkeypatch.setattr(bk, "SYSTEM_CUDA_HOMES", ())
    monkeypatch.setattr(bk, "_wheel_nvcc_candidates", lambda: [fake])
    for var in ("NVCC", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    info = tiers.nvcc_info()
    assert info == {"path": str(fake), "origin": "the pip cuda-toolkit wheel", "release": "13.0"}
    assert bk.find_nvcc(include_wheel=False)[0] is None
    out = tmp_path / "nvcc.json"
    assert tiers.main(["nvcc", "--json", str(out)]) == 0
    assert str(fake) in out.read_text()


# --- one table: nothing else lists the tiers ------------------------------------------------------


def tier_name_lists(path: Path) -> list[str]:
    """Literal lists, tuples, sets or dict keys in ``path`` holding two or more tier names."""
    names = set(tiers.TIERS)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        literal = [i.value for i in items if isinstance(i, ast.Constant) and i.value in names]
        if len(literal) >= 2:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {literal}")
    return found


def test_noxfile_report_docker_module_and_test_configuration_list_no_tiers_of_their_own():
    readers = [
        "noxfile.py",
        "ci/matrix_report.py",
        "ci/matrix_run.py",
        "ci/docker_images.py",
        "tests/conftest.py",
    ]
    found = [hit for path in readers for hit in tier_name_lists(ROOT / path)]
    assert not found, "tier names restated outside ci/tiers.py:\n" + "\n".join(found)
    noxfile = (ROOT / "noxfile.py").read_text()
    for gone in ("TIER_TESTS", "TIER_SESSIONS", "RECORDED_SESSIONS", "spec_from_file_location"):
        assert gone not in noxfile, f"noxfile.py still has {gone}"
    report = (ROOT / "ci" / "matrix_report.py").read_text()
    assert "from ci import tiers" in report and "TIER_SESSIONS = {name: tier.session" in report


def test_every_tier_session_is_made_from_its_row_and_runs_run_tier_on_it(monkeypatch):
    noxfile = load_noxfile()
    sessions = noxfile.sessions
    tier_sessions = [t.session for t in tiers.TIERS.values()]
    # In table order, before the other sessions: `nox -l` lists the tiers first.
    assert list(sessions)[: len(tier_sessions)] == tier_sessions
    ran = []
    monkeypatch.setattr(noxfile.module, "run_tier", lambda session, tier: ran.append((session, tier)))
    for tier in tiers.TIERS.values():
        registered = sessions[tier.session]
        assert registered.doc == tier.description() == f"{tier.name} tier: {tier.summary}"
        assert registered.options == {"name": tier.session}, "a tier session takes nox's defaults"
        marker = object()
        registered.function(marker)
        assert ran[-1] == (marker, tier)
    assert "\n" not in "".join(t.summary for t in tiers.TIERS.values())
    noxfile_text = (ROOT / "noxfile.py").read_text()
    for tier in tiers.TIERS.values():
        assert f'"{tier.session}"' not in noxfile_text, f"noxfile.py names {tier.session} itself"


class RecordingSession:
    """A nox session that records what it would install and run, for run_tier."""

    def __init__(self, name: str, passthrough_env: type | None = None) -> None:
        self.name = name
        self.posargs: list[str] = []
        self.virtualenv = passthrough_env() if passthrough_env else object()
        self.bin_paths = None
        self.calls: list[tuple] = []

    def log(self, text: str) -> None:
        pass

    def install(self, *args: str) -> None:
        self.calls.append(("install", args))

    def run(self, *args: str, **kwargs) -> None:
        self.calls.append(("run", args, kwargs))

    def error(self, text: str) -> None:
        raise SessionError(text)


@pytest.mark.parametrize("name", list(tiers.TIERS))
def test_a_tier_session_installs_and_runs_what_its_row_says(name, monkeypatch, tmp_path):
    # Nothing runs: the session records its commands. The machine's own lacks do not matter here.
    monkeypatch.setattr(tiers.Tier, "problem", lambda self, can_install=True: None)
    monkeypatch.setenv("TORCHLIGHT_CUDA_KERNEL_DIR", str(tmp_path))  # no prebuilt libraries there
    monkeypatch.setenv("TORCHLIGHT_TEST_WORKERS", "3")
    tier = tiers.TIERS[name]
    noxfile = load_noxfile()
    monkeypatch.setattr(noxfile.module, "_prebuilt_kernels", lambda session: None)
    session = RecordingSession(tier.session)
    noxfile.sessions[tier.session].function(session)
    assert session.calls[0] == ("install", (tier.extras, *tier.packages))
    runs = [call[1] for call in session.calls[1:]]
    builds = [args for args in runs if args[:4] == ("python", "-m", "torchlight", "build-kernels")]
    if tier.kernels:
        assert len(builds) == 1 and builds[0][5] == tier.env["TORCHLIGHT_CUDA_KERNEL_DIR"]
        assert ("--simulator" in builds[0]) == (tier.kernels == "simulator")
    else:
        assert not builds
    if tier.then:
        assert session.calls.index(("run", tier.then, {"external": True})) == len(session.calls) - 2
    # The package's bytecode is written once before the tests start their many `python -m simulator`.
    compiled = [i for i, call in enumerate(session.calls) if call[1][:3] == ("python", "-m", "compileall")]
    assert len(compiled) == 1 and compiled[0] < len(session.calls) - 1
    pytest_call = session.calls[-1]
    assert pytest_call[1][0] == "pytest"
    args = list(pytest_call[1][1:])
    workers = {"auto": ["-n", "3"], None: []}.get(tier.workers, ["-n", tier.workers])
    if workers and tier.dist:
        workers += ["--dist", tier.dist]
    record = [f"--matrix-json=reports/sessions/{tier.session}.json", f"--matrix-tier={name}"]
    assert args == [*workers, *tier.pytest_args(), *(record if tier.recorded else [])]
    env = pytest_call[2]["env"]
    assert {k: env[k] for k in tier.environment()} == tier.environment()


def test_a_prebuilt_kernel_row_tests_the_libraries_it_finds_instead_of_building(monkeypatch, tmp_path):
    monkeypatch.setattr(tiers.Tier, "problem", lambda self, can_install=True: None)
    (tmp_path / "softmax_kernel.so").write_text("")
    monkeypatch.setenv("TORCHLIGHT_CUDA_KERNEL_DIR", str(tmp_path))
    noxfile = load_noxfile()
    for tier in tiers.TIERS.values():
        session = RecordingSession(tier.session)
        noxfile.sessions[tier.session].function(session)
        builds = [c for c in session.calls if c[1][:4] == ("python", "-m", "torchlight", "build-kernels")]
        if tier.prebuilt_kernels:
            assert not builds and session.calls[-1][2]["env"]["TORCHLIGHT_CUDA_KERNEL_DIR"] == str(tmp_path)
        else:
            assert bool(builds) == bool(tier.kernels), tier.name


def test_nox_lists_the_sessions_the_stand_in_finds():
    pytest.importorskip("nox", reason="nox is not installed in this environment (the cpu tier's has none)")
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-l", "--noxfile", str(ROOT / "noxfile.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    listed = re.findall(r"^([*-]) (\S+) -> (.*)$", done.stdout, re.M)
    noxfile = load_noxfile()
    assert [(name, doc) for _, name, doc in listed] == [(n, s.doc) for n, s in noxfile.sessions.items()]
    # `*` marks what bare `nox` runs (listed in registration order, run in nox.options.sessions').
    assert {name for mark, name, _ in listed if mark == "*"} == set(noxfile.options.sessions)


def test_gpu_check_takes_the_gpu_tiers_folders_and_environment_from_the_table():
    text = (ROOT / "ci" / "gpu-check.sh").read_text()
    assert "ci.tiers pytest-args gpu" in text and "ci.tiers env gpu" in text
    for key in tiers.TIERS["gpu"].environment():
        assert f"{key}=" not in text, f"ci/gpu-check.sh sets {key} itself"


# --- the matrix session --------------------------------------------------------------------------


def test_matrix_runs_the_selected_tiers_and_records_why_the_others_did_not_run(tmp_path, monkeypatch):
    monkeypatch.setattr(matrix_run, "REPORTS", tmp_path)
    monkeypatch.setattr(matrix_run, "RAW", tmp_path / "raw")
    monkeypatch.setenv("TORCHLIGHT_MATRIX_TIERS", "cpu,gpu")
    monkeypatch.setattr(
        tiers.Tier, "problem", lambda self, can_install=True: "no GPU: x" if self.name == "gpu" else None
    )
    ran = []

    def nested_nox(cmd, cwd):
        # Stands in for `nox -s <session> -- --matrix-json=...`: one passed test in the result file.
        ran.append(cmd[cmd.index("-s") + 1 :])
        out = Path(next(a for a in cmd if a.startswith("--matrix-json=")).split("=", 1)[1])
        out.write_text(json.dumps({"results": [{"outcome": "passed"}]}))
        return 0

    monkeypatch.setattr(matrix_run.subprocess, "call", nested_nox)
    session = FakeSession(posargs=["-k", "add"])
    with pytest.raises(SessionError, match="asked for but cannot run here: gpu"):
        matrix_run.run(session, ROOT / "noxfile.py", no_venv=True)
    assert [cmd[0] for cmd in ran] == ["tests-cpu"]
    assert ran[0][-2:] == ["-k", "add"], "pytest arguments after -- go to every tier"
    records = {r["tier"]: r for r in json.loads((tmp_path / "raw" / "tiers.json").read_text())}
    assert list(records) == list(tiers.TIERS)
    assert records["cpu"]["status"] == "passed" and records["cpu"]["session"] == "tests-cpu"
    assert records["gpu"] == {
        "tier": "gpu",
        "session": "tests-gpu",
        "status": "cannot run here",
        "reason": "no GPU: x",
    }
    for name in ("cudasim", "kernels", "sanitize"):
        assert records[name]["status"] == "not selected"
        assert records[name]["reason"] == "not in TORCHLIGHT_MATRIX_TIERS=cpu,gpu"
    assert session.commands and session.commands[-1][1:3] == ("-m", "ci.matrix_report")


def test_matrix_refuses_an_unknown_tier_name(tmp_path, monkeypatch):
    monkeypatch.setattr(matrix_run, "REPORTS", tmp_path)
    monkeypatch.setattr(matrix_run, "RAW", tmp_path / "raw")
    monkeypatch.setenv("TORCHLIGHT_MATRIX_TIERS", "cpu,cuda")
    with pytest.raises(SessionError, match=r"unknown tiers \['cuda'\]; known: cpu, cudasim"):
        matrix_run.run(FakeSession(), ROOT / "noxfile.py", no_venv=False)


# --- docker sessions: the first line says what runs outside Docker first --------------------------


class SessionError(Exception):
    """What FakeSession.error raises, as nox's session.error does."""


class FakeSession:
    """What the ci/ session modules use of a nox session: log lines and commands are recorded."""

    def __init__(self, posargs: list[str] | None = None) -> None:
        self.lines: list[str] = []
        self.commands: list[tuple[str, ...]] = []
        self.posargs = posargs or []

    def log(self, text: str) -> None:
        self.lines.append(text)

    def run(self, *args: str, **kwargs) -> None:
        self.commands.append(args)

    def error(self, text: str) -> None:
        raise SessionError(text)


def test_docker_session_says_first_which_tier_it_runs_outside_docker(tmp_path, monkeypatch):
    monkeypatch.setattr(docker_images, "SESSION_RESULTS", tmp_path)
    session = FakeSession()
    docker_images._announce(session, "cuda", ["kernels", "tests-cudasim"], "/usr/bin/docker", "27.0")
    first = session.lines[0]
    assert first.startswith("docker-cuda: first running the kernels tier (`nox -s kernels`")
    assert "the cudasim tier (`nox -s tests-cudasim`" in first and "outside Docker" in first
    assert "no recorded full run" in first
    assert session.lines[1] == "docker CLI /usr/bin/docker, engine 27.0"


def test_docker_session_reuses_current_counts_and_reruns_stale_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(docker_images, "SESSION_RESULTS", tmp_path)
    newest = docker_images._newest_source_mtime()
    (tmp_path / "tests-cpu.json").write_text('{"results": []}')
    os.utime(tmp_path / "tests-cpu.json", (newest + 60, newest + 60))
    session = FakeSession()
    docker_images._announce(session, "cpu", ["tests-cpu"], "docker", "27.0")
    assert (
        session.lines[0] == "docker-cpu: outside-Docker counts of tests-cpu are current; building the image"
    )
    os.utime(tmp_path / "tests-cpu.json", (newest - 60, newest - 60))
    session = FakeSession()
    docker_images._announce(session, "cpu", ["tests-cpu"], "docker", "27.0")
    assert session.lines[0].startswith("docker-cpu: first running the cpu tier (`nox -s tests-cpu`")
    assert "older than the sources" in session.lines[0]
