"""The build cache holds only what this user's builds wrote: a private folder, artefacts checked
against the record written beside them before they are linked, loaded or run, lock files that are
never followed through a link, and damaged entries rebuilt instead of trusted."""

from __future__ import annotations

import os
import stat
import textwrap
import threading
from pathlib import Path

import pytest

from simulator import build
from simulator.errors import SimBuildError
from simulator.run import run_program

from .conftest import run_cli

MAIN = textwrap.dedent(
    """\
    #include <cstdio>
    int main() { std::printf("built by the simulator\\n"); return 0; }
    """
)


def _program(tmp_path: Path) -> Path:
    src = tmp_path / "main.cpp"  # a host source: compiled in a moment, keyed by its own path
    src.write_text(MAIN)
    return src


def _run(src: Path, capfd) -> str:
    res = run_program([str(src)])
    assert res.status == 0
    return capfd.readouterr().out


def test_a_new_cache_folder_is_private(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "a" / "cache"))
    folder = build.cache_dir()
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_cache_folder_others_may_write_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("SIMULATOR_CACHE", str(shared))
    with pytest.raises(SimBuildError, match=r"may be written by other users \(mode 777\).*chmod 700 "):
        build.cache_dir()


def test_a_cache_folder_of_another_user_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("SIMULATOR_CACHE", str(folder))
    monkeypatch.setattr(os, "geteuid", lambda: folder.stat().st_uid + 1)
    with pytest.raises(SimBuildError, match=rf"SIMULATOR_CACHE={folder} belongs to user id \d+, not to you"):
        build.cache_dir()


def test_a_planted_program_is_rebuilt_never_run(tmp_path, capfd):
    src = _program(tmp_path)
    exe = build.build_program([str(src)], "fast")
    marker = tmp_path / "planted-ran"
    # What another user could leave under the program's name: no record, or a stale one.
    for keep_record in (False, True):
        if not keep_record:
            exe.with_name(exe.name + ".sha256").unlink(missing_ok=True)
        exe.unlink()
        exe.write_text(f"#!/bin/sh\ntouch {marker}\n")
        exe.chmod(0o700)
        assert _run(src, capfd) == "built by the simulator\n"
        assert not marker.exists()


def test_a_truncated_object_is_rebuilt(tmp_path, capfd):
    src = _program(tmp_path)
    build.build_program([str(src)], "fast")
    objects = list(build.cache_dir().glob("main-fast-*.o"))
    obj = next(o for o in objects if build.kernel_object(src, "fast") == o)
    data = obj.read_bytes()
    obj.unlink()
    obj.write_bytes(data[: len(data) // 2])  # a build cut short by a full disk or a crash
    assert _run(src, capfd) == "built by the simulator\n"
    assert obj.read_bytes() == data


def test_a_linked_lock_file_is_not_followed(tmp_path, capfd):
    src = _program(tmp_path)
    exe = build.build_program([str(src)], "fast")
    exe.unlink()
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    lock = exe.with_name(exe.name + ".lock")
    lock.unlink()
    lock.symlink_to(victim)
    assert _run(src, capfd) == "built by the simulator\n"
    assert victim.read_text() == "keep me\n"
    assert not lock.is_symlink() and stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_a_file_hard_linked_at_the_lock_path_is_neither_truncated_nor_changed(tmp_path, capfd):
    src = _program(tmp_path)
    exe = build.build_program([str(src)], "fast")
    exe.unlink()
    victim = exe.parent / "precious.txt"  # a hard link needs the same file system as the cache
    victim.write_text("keep me\n")
    victim.chmod(0o640)
    lock = exe.with_name(exe.name + ".lock")
    lock.unlink()
    os.link(victim, lock)
    try:
        assert _run(src, capfd) == "built by the simulator\n"
        assert victim.read_text() == "keep me\n"
        assert stat.S_IMODE(victim.stat().st_mode) == 0o640
    finally:
        victim.unlink()


def test_a_second_builder_waits_until_the_first_lets_go_of_the_lock(tmp_path):
    from simulator.build_cache import lock

    path = tmp_path / "artefact.o.lock"
    took = threading.Event()

    def second() -> None:
        with lock(path):
            took.set()

    with lock(path):
        waiter = threading.Thread(target=second, daemon=True)
        waiter.start()
        # Held here: the other thread must not get it, however long it is given.
        assert not took.wait(0.3)
    assert took.wait(60), "the lock was not handed on when its holder let go"
    waiter.join(60)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("where", ["a file", "below a file", "shared"])
def test_a_cache_that_cannot_be_used_is_one_line(tmp_path, where):
    afile = tmp_path / "afile"
    afile.write_text("")
    cache = {"a file": afile, "below a file": afile / "cache", "shared": tmp_path / "shared"}[where]
    if where == "shared":
        cache.mkdir()
        cache.chmod(0o757)
    proc = run_cli("run", str(_program(tmp_path)), env={"SIMULATOR_CACHE": str(cache)})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and f"SIMULATOR_CACHE={cache}" in proc.stderr, proc.stderr


def _relative_imports(path: Path) -> set[str]:
    """The simulator modules ``path`` imports (``from .x import``, ``from . import x``)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0] + ".py")
            else:
                found |= {alias.name + ".py" for alias in node.names}
    return found


def test_every_module_the_front_end_runs_is_in_the_objects_cache_key():
    # A change to any module transform.py reaches (block loops, inline PTX, the passes) must
    # rebuild the objects it wrote: otherwise an upgraded simulator runs stale translations.
    from simulator import source_compile

    package = Path(source_compile.__file__).parent
    reached, todo = set(), ["transform.py"]
    while todo:
        name = todo.pop()
        if name in reached or not (package / name).is_file():
            continue
        reached.add(name)
        todo += sorted(_relative_imports(package / name))
    keyed = set(source_compile.front_end_modules())
    assert {"transform.py", "block_loops.py", "block_loops_order.py", "syntax.py"} <= reached
    assert reached <= keyed, f"front-end modules missing from the cache key: {sorted(reached - keyed)}"
