"""The toolkit folder belongs to one install: two installs sharing a build cache get two folders,
neither rewrites the other's ``bin/nvcc``, a shared folder of an earlier version is left alone, and
builds that make the folder at once agree on one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from simulator import toolkit
from simulator.tests.conftest import REPO


def _as_install(monkeypatch, python: str, top: str, version: str = "0.1.0") -> None:
    monkeypatch.setattr(toolkit, "install", lambda: toolkit.Install(python=python, top=top, version=version))


def test_two_installs_get_two_folders_and_keep_their_nvcc(tmp_path, monkeypatch):
    """Each install's folder runs its own Python; making the second leaves the first unchanged."""
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    _as_install(monkeypatch, "/venv-a/bin/python", "/venv-a/lib/site-packages")
    first = toolkit._make_folder()
    first_nvcc = (first / "bin" / "nvcc").read_text()
    _as_install(monkeypatch, "/venv-b/bin/python", "/venv-b/lib/site-packages")
    second = toolkit._make_folder()
    assert first != second and first.parent == second.parent
    assert (
        "/venv-a/bin/python" in first_nvcc and "/venv-b/bin/python" in (second / "bin" / "nvcc").read_text()
    )
    _as_install(monkeypatch, "/venv-a/bin/python", "/venv-a/lib/site-packages")
    assert toolkit._make_folder() == first
    assert (first / "bin" / "nvcc").read_text() == first_nvcc
    assert "/venv-b/" not in first_nvcc


def test_folder_name_says_version_and_python_and_differs_by_location():
    """The name is readable (version, Python) and its key tells installs at other places apart."""
    here = toolkit.Install(python="/p/bin/python", top="/a", version="1.2.3")
    name = here.folder_name()
    assert name.startswith(f"toolkit-1.2.3-py{sys.version_info[0]}.{sys.version_info[1]}-")
    assert toolkit.Install(python="/p/bin/python", top="/b", version="1.2.3").folder_name() != name
    assert toolkit.Install(python="/q/bin/python", top="/a", version="1.2.3").folder_name() != name
    assert toolkit.Install(python="/p/bin/python", top="/a", version="1.2.4").folder_name() != name


def test_shared_folder_of_an_earlier_version_is_not_used(tmp_path, monkeypatch):
    """``toolkit/`` as earlier versions made it, with another install's nvcc, is neither used nor
    rewritten (a build of that install may still name it)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SIMULATOR_CACHE", str(cache))
    old = cache / "toolkit" / "bin" / "nvcc"
    old.parent.mkdir(parents=True)
    old.write_text("#!/bin/sh\nexec /elsewhere/bin/python -c 'another install' \"$@\"\n")
    made = toolkit._make_folder()
    assert made != cache / "toolkit"
    assert sys.executable in (made / "bin" / "nvcc").read_text()
    assert "/elsewhere/bin/python" in old.read_text()


def test_changed_script_of_the_same_install_is_remade(tmp_path, monkeypatch):
    """A folder whose nvcc this install would not write (an older layout) is replaced whole."""
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    made = toolkit._make_folder()
    (made / "bin" / "nvcc").write_text("#!/bin/sh\nexit 1\n")
    assert toolkit._make_folder() == made
    assert sys.executable in (made / "bin" / "nvcc").read_text()
    assert sorted(p.name for p in made.parent.iterdir() if p.name.startswith(".toolkit")) == []


CHILD = """
import sys
from simulator import toolkit
top = toolkit._make_folder()
print(top, (top / "bin" / "nvcc").stat().st_ino)
"""


def test_processes_making_the_folder_at_once_agree_on_one(tmp_path):
    """Four processes started together print one folder and one ``bin/nvcc`` (none was replaced
    under another), and leave no half-made folder behind."""
    env = {**os.environ, "SIMULATOR_CACHE": str(tmp_path / "cache")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    procs = [
        subprocess.Popen([sys.executable, "-c", CHILD], env=env, cwd=REPO, stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = {p.communicate(timeout=120)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(outputs) == 1, outputs
    top = Path(outputs.pop().split()[0])
    assert sys.executable in (top / "bin" / "nvcc").read_text()
    assert [p.name for p in top.parent.iterdir() if p.name.startswith(".toolkit")] == []
