"""Every ```sh, ```bash and ```python block of README.md runs as written, as a new user runs it.

One fresh virtualenv and one fresh copy of the checkout serve the whole module: the blocks
marked ``<!-- readme-test: setup -->`` run first (the set-up's install, not editable), then
every other block in README order. Shell blocks run with ``bash -eu`` from the copy's root
(README commands are "from the repository root"), with the venv first on PATH; Python blocks
run with the venv's python from a folder outside the copy, so they import the installed
package, never the checkout.

A marker comment right before a block says what it needs:

* ``<!-- readme-test: skip: REASON -->``: not run here, for REASON (the CI test command and the
  main job, which are the test tiers themselves);
* ``<!-- readme-test: needs gpu|nvcc|docker[, ...] -->``: run only where that is present, else
  skipped saying what is missing; blocks needing nvcc are also marked ``kernels``, so the cpu
  tier (which deselects ``kernels``) runs the same tests on every machine;
* ``<!-- readme-test: setup -->``: part of the set-up, run before the others;
* ``<!-- readme-test: own-venv -->``: installs torchlight another way (the wheel), so it runs in
  a fresh venv of its own, after which the README's short example runs there from outside the
  copy: a non-editable install must work on its own (kernel sources, simulator, extras).

When uv is installed, the venv is made with ``uv venv --seed`` and the block's ``pip install``
runs as ``uv pip install`` (same arguments, uv's package cache: seconds instead of minutes);
other pip commands are pip's own. Without uv it is a plain ``python -m venv`` with pip.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from tl_testing import find_uv

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RUN_LANGUAGES = {"sh": "shell", "bash": "shell", "python": "python"}
MARKER = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->")
FENCE = re.compile(r"^```([\w+-]*)\s*$")
BLOCK_TIMEOUT_S = 600
# What a copy of the checkout leaves out: local state a fresh clone does not have.
COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".nox", ".venv", "build", "reports", "dist", "*.egg-info", "*.so", "__pycache__", ".*cache"
)
# Scripts the README says run from the repository root; helpers they import are not scripts.
SCRIPT_HELPERS = {
    "script_deps.py",
    "timing_stats.py",
    "build_files.py",
    "program_finder.py",
    "ratio_chart.py",
    "fresh_checks.py",
    "library_use.py",
}


@dataclass
class Block:
    """One fenced block of the README: where it starts, its language, body and marker."""

    line: int
    language: str
    body: str
    directives: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        first = next((ln.strip() for ln in self.body.splitlines() if ln.strip()), "")
        return f"L{self.line}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', first)[:48]}"

    def skip_reason(self) -> str | None:
        return next((d.split(":", 1)[1].strip() for d in self.directives if d.startswith("skip:")), None)

    def needs(self) -> list[str]:
        found: list[str] = []
        for d in self.directives:
            if d.startswith("needs "):
                found += [w.strip() for w in d[len("needs ") :].split(",") if w.strip()]
        return found

    @property
    def setup(self) -> bool:
        return "setup" in self.directives

    @property
    def own_venv(self) -> bool:
        return "own-venv" in self.directives


def readme_blocks(path: Path = README) -> list[Block]:
    """Every fenced block with its language and the readme-test directives written just before it."""
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start = i
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        assert end is not None, f"{path.name}:{start + 1}: unclosed code fence"
        directives: list[str] = []
        j = start - 1
        while j >= 0 and (not lines[j].strip() or lines[j].lstrip().startswith("<!--")):
            directives += MARKER.findall(lines[j])
            j -= 1
        blocks.append(Block(start + 1, fence.group(1), "\n".join(lines[start + 1 : end]) + "\n", directives))
        i = end + 1
    return blocks


def run_blocks() -> list[Block]:
    return [b for b in readme_blocks() if b.language in RUN_LANGUAGES]


# --- what a block needs, and whether this machine has it ---------------------------------------


def _gpu_missing() -> str | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "no NVIDIA GPU: nvidia-smi is not on PATH"
    proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0 or not re.search(r"^GPU \d", proc.stdout, re.M):
        return f"no NVIDIA GPU: nvidia-smi -L lists none ({(proc.stderr or proc.stdout).strip()[:120]})"
    return None


def _nvcc_missing() -> str | None:
    sys.path.insert(0, str(ROOT))
    from torchlight.build_kernels import find_nvcc

    nvcc, looked = find_nvcc()
    return None if nvcc else f"no nvcc (looked at {', '.join(map(str, looked))})"


def _docker_missing() -> str | None:
    docker = shutil.which("docker")
    if docker is None:
        return "no Docker CLI on PATH"
    proc = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=60, check=False)
    return None if proc.returncode == 0 else "no Docker engine answers `docker info`"


# need -> why it is missing here (None when present). A new kind of need is one entry.
NEEDS = {"gpu": _gpu_missing, "nvcc": _nvcc_missing, "docker": _docker_missing}


def _params() -> list:
    params = []
    for block in run_blocks():
        marks = [pytest.mark.kernels] if "nvcc" in block.needs() else []
        params.append(pytest.param(block, id=block.id, marks=marks))
    return params


# --- the new user's machine: a venv and a copy of the checkout ------------------------------------


@dataclass
class Sandbox:
    """A fresh venv, a fresh copy of the checkout, somewhere else to stand, and the set-up's results."""

    venv: Path
    src: Path
    elsewhere: Path
    env: dict[str, str]
    before_install: dict[str, subprocess.CompletedProcess] = field(default_factory=dict)
    setup_results: dict[int, subprocess.CompletedProcess] = field(default_factory=dict)

    def run(self, block: Block, venv: Path | None = None) -> subprocess.CompletedProcess:
        """Run ``block`` as the README means it, with ``venv`` (default: the sandbox's) first on PATH."""
        venv = venv or self.venv
        env = {**self.env, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{self.env['PATH']}"}
        if RUN_LANGUAGES[block.language] == "python":
            cmd, cwd, stdin = [str(venv / "bin" / "python"), "-"], self.elsewhere, block.body
        else:
            cmd, cwd, stdin = ["bash", "-eu", "-o", "pipefail", "-c", block.body], self.src, None
        return subprocess.run(
            cmd, input=stdin, cwd=cwd, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S
        )

    def script(self, path: Path, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.venv / "bin" / "python"), str(path.relative_to(ROOT)), *args],
            cwd=self.src,
            env={**self.env, "VIRTUAL_ENV": str(self.venv)},
            capture_output=True,
            text=True,
            timeout=120,
        )


def _make_venv(venv: Path) -> None:
    uv = find_uv()
    if uv is None:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        return
    subprocess.run(
        [uv, "venv", "-q", "--seed", "--python", sys.executable, str(venv)], check=True, timeout=300
    )
    # `pip install ...` as the README writes it, through uv; every other pip command is pip's.
    shim = venv / "bin" / "pip"
    python = venv / "bin" / "python"
    shim.unlink(missing_ok=True)
    shim.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "${{1:-}}" = install ]; then shift; exec "{uv}" pip install --python "{python}" "$@"; fi\n'
        f'exec "{python}" -m pip "$@"\n'
    )
    shim.chmod(0o755)


def example_scripts() -> list[Path]:
    """Every script the README says runs from the repository root: examples/ and benchmarks/."""
    found = sorted(ROOT.glob("examples/*.py")) + sorted(ROOT.glob("benchmarks/*.py"))
    return [p for p in found if p.name not in SCRIPT_HELPERS]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Sandbox:
    base = tmp_path_factory.mktemp("new-user")
    src = base / "torchlight"
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    venv = base / "venv"
    _make_venv(venv)
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TORCHLIGHT_", "PYTHON", "NUMBA_", "VIRTUAL_ENV", "PIP_REQUIRE"))
    }
    env["PATH"] = os.environ.get("PATH", "")
    box = Sandbox(venv, src, elsewhere, env)
    # Before the install: every script must stop with the install line, not a traceback.
    for script in example_scripts():
        box.before_install[script.name] = box.script(script, "--help")
    for block in run_blocks():
        if block.setup:
            box.setup_results[block.line] = box.run(block)
    return box


# --- the tests --------------------------------------------------------------------------------------


def test_every_block_is_run_or_says_why_not():
    blocks = readme_blocks()
    assert any(b.setup for b in blocks), "README has no `<!-- readme-test: setup -->` install block"
    for block in blocks:
        where = f"README.md:{block.line}"
        for directive in block.directives:
            known = directive in ("setup", "own-venv") or directive.startswith(("skip:", "needs "))
            assert known, f"{where}: unknown readme-test directive {directive!r}"
        if block.skip_reason() is not None:
            assert block.skip_reason(), f"{where}: a skip needs its reason"
        unknown = set(block.needs()) - set(NEEDS)
        assert not unknown, f"{where}: needs {sorted(unknown)}; known needs: {sorted(NEEDS)}"
        if block.language not in RUN_LANGUAGES:
            # Output and file listings only; a command block must say its language to be run.
            assert block.language in ("", "text", "console", "markdown"), f"{where}: ```{block.language}"
    example = README.read_text().index("<!-- readme-example -->")
    assert any(b.language == "python" and not b.skip_reason() for b in blocks), "the short example"
    assert example < README.read_text().index("```python"), "<!-- readme-example --> must precede it"


def test_scripts_without_the_packages_say_what_to_install(sandbox):
    # Before the set-up's install the venv has neither torchlight nor numpy: a script shows its
    # --help (it imports them later) or stops with status 2 and the install line, never a traceback.
    assert sandbox.before_install, "no script under examples/ or benchmarks/"
    stopped = 0
    for name, proc in sandbox.before_install.items():
        assert "Traceback" not in proc.stderr, f"{name} without torchlight:\n{proc.stderr}"
        if proc.returncode == 0:
            assert "usage:" in proc.stdout, (name, proc.stdout)
            continue
        assert proc.returncode == 2, f"{name} without torchlight: exit {proc.returncode}\n{proc.stderr}"
        assert 'from the repository root run  pip install ".[numba]"' in proc.stderr, (name, proc.stderr)
        stopped += 1
    assert stopped, "no script needs torchlight before --help? the check would then test nothing"


def test_scripts_run_from_the_repository_root_after_the_install(sandbox):
    for script in example_scripts():
        proc = sandbox.script(script, "--help")
        assert proc.returncode == 0, f"python {script.relative_to(ROOT)} --help: {proc.stdout}{proc.stderr}"
        assert "usage:" in proc.stdout


@pytest.mark.parametrize("block", _params())
def test_readme_block_runs(block: Block, sandbox):
    reason = block.skip_reason()
    if reason is not None:
        pytest.skip(f"README.md:{block.line} not run here: {reason}")
    for need in block.needs():
        missing = NEEDS[need]()
        if missing:
            pytest.skip(f"README.md:{block.line} needs {need}: {missing}")
    venv = None
    if block.own_venv:
        venv = sandbox.venv.parent / f"venv-{block.line}"
        _make_venv(venv)
    proc = sandbox.setup_results[block.line] if block.setup else sandbox.run(block, venv)
    _assert_ran(block, proc)
    if venv is not None:
        example = next(b for b in run_blocks() if b.language == "python" and not b.skip_reason())
        where = Block(block.line, "python", "import torchlight\nprint(torchlight.__file__)\n")
        for check in (example, where):
            _assert_ran(check, sandbox.run(check, venv))
        found = sandbox.run(where, venv).stdout.strip()
        assert Path(found).is_relative_to(venv), f"the wheel's torchlight is not the one imported: {found}"


def _assert_ran(block: Block, proc: subprocess.CompletedProcess) -> None:
    assert proc.returncode == 0, (
        f"README.md:{block.line} failed (exit {proc.returncode}):\n{block.body}\n"
        f"--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
    )
