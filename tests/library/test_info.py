"""``python -m torchlight info`` reports versions and backends without raising."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _info(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "torchlight", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_info_reports_versions_and_backends():
    run = _info("info")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert f"python                   {sys.version.split()[0]}" in out
    assert "numpy" in out and "numba-cuda" in out
    assert "cpu      usable" in out
    for name in ("numba", "cuda", "cuda-c"):
        assert f"  {name}" in out
    assert "kernel libraries" in out


def test_unknown_subcommand_is_a_usage_error():
    run = _info("bogus")
    assert run.returncode == 2
    assert not run.stdout and run.stderr.startswith("usage: python -m torchlight ")
    assert "invalid choice: 'bogus'" in run.stderr and "'info', 'build-kernels'" in run.stderr


def test_help_and_version_go_to_stdout_and_exit_0():
    import torchlight

    shown = _info("--help")
    assert shown.returncode == 0 and not shown.stderr
    for command in ("info", "build-kernels"):
        assert f"    {command}" in shown.stdout
    for args in (["--version"], ["info", "--version"]):
        said = _info(*args)
        assert said.returncode == 0 and said.stdout.strip() == f"torchlight {torchlight.__version__}"
    info_help = _info("info", "--help")
    assert info_help.returncode == 0 and info_help.stdout.startswith("usage: python -m torchlight info")
    assert "backends:" not in info_help.stdout  # the help, not the report


def test_gpu_status_without_numba_cuda_names_the_install_line(monkeypatch):
    import importlib.util

    from torchlight import info

    real_find_spec = importlib.util.find_spec
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)

    def find_spec(name, *args):
        return None if name == "numba_cuda" else real_find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    (line,) = info.gpu_status()
    assert "numba-cuda is not installed" in line and 'pip install "torchlight[cuda]"' in line
