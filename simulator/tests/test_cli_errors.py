"""Every error of ``python -m simulator`` and ``build-kernels --simulator`` is one line and a
non-zero status, never a Python traceback (``--debug`` shows it); names at the file system's
limits and bytes that are not UTF-8 build and run."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from simulator.check import run_check

from .conftest import REPO, run_cli

HOST_MAIN = '#include <cstdio>\nint main() { std::printf("ran\\n"); return 0; }\n'


def test_build_out_naming_a_file_is_one_line(tmp_path):
    src = tmp_path / "lib.cpp"
    src.write_text('extern "C" int f(void) { return 0; }\n')
    afile = tmp_path / "afile"
    afile.write_text("")
    proc = run_cli("build", str(src), "--out", str(afile))
    assert proc.returncode == 2
    assert proc.stderr == (
        f"simulator: build failed: --out {afile}: it is a file, not a folder; pass a folder\n"
    )
    debug = run_cli("build", str(src), "--out", str(afile), "--debug")
    assert debug.returncode != 0 and "Traceback (most recent call last)" in debug.stderr


def test_a_source_name_as_long_as_names_go_builds_and_runs(tmp_path):
    src = tmp_path / ("p" * 251 + ".cpp")  # 255 characters, the longest name most file systems take
    src.write_text(HOST_MAIN)
    proc = run_cli("run", str(src))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ran\n", "")


def test_bytes_that_are_not_utf8_pass_through_a_host_source_and_a_checkers_output(tmp_path):
    src = tmp_path / "latin1.cpp"
    src.write_bytes(
        b"#include <cstdio>\n"
        b'extern "C" int prints_latin1(void) { std::fprintf(stderr, "caf\\xe9 \xe9\\n"); return 0; }\n'
    )
    main = tmp_path / "main.cpp"
    main.write_text('extern "C" int prints_latin1(void);\nint main() { return prints_latin1(); }\n')
    proc = subprocess.run(
        [sys.executable, "-m", "simulator", "run", str(main), str(src)],
        cwd=REPO,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=280,
    )
    assert (proc.returncode, proc.stderr) == (0, b"caf\xe9 \xe9\n")  # the bytes the source holds
    res = run_check([str(src)], "prints_latin1", "synccheck")
    assert res.ok and "caf\ufffd \ufffd" in res.output


def _disk_holds(limit: int):
    def apply() -> None:
        # Past `limit` bytes a write fails with EFBIG (Python ignores SIGXFSZ), as on a full disk.
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_build_kernels_on_a_full_disk_is_one_line_and_leaves_no_partial_file(tmp_path, sim_lib_dir):
    # sim_lib_dir built the shipped kernels: only the copy into --out writes a file here.
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "torchlight", "build-kernels", "--simulator", "--out", str(out)]
    proc = subprocess.run(
        cmd,
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=280,
        preexec_fn=_disk_holds(64 * 1024),
    )
    assert proc.returncode == 1, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("build-kernels: the simulator build")]
    assert len(errors) == 1 and "File too large" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == []


def test_help_lists_every_command_and_version_names_the_package():
    shown = run_cli("--help")
    assert shown.returncode == 0 and not shown.stderr
    assert shown.stdout.startswith("usage: python -m simulator ")
    for command in ("run", "check", "build", "nvcc", "toolkit"):
        assert f"\n    {command} " in shown.stdout, command
    said = run_cli("--version")
    assert said.returncode == 0 and said.stdout.startswith("python -m simulator (torchlight ")
    wrong = run_cli("frobnicate")
    assert wrong.returncode == 2 and not wrong.stdout and "invalid choice: 'frobnicate'" in wrong.stderr


def test_a_cached_program_still_names_the_pip_command_when_libclang_is_missing(tmp_path):
    src = tmp_path / "cached.cu"
    src.write_text(
        '#include <cstdio>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); std::printf("ran\\n"); }\n'
    )
    assert run_cli("run", str(src)).stdout == "ran\n"
    # A ``clang`` package with no ``cindex`` ahead of the installed one: libclang as if missing.
    (tmp_path / "shadow" / "clang").mkdir(parents=True)
    (tmp_path / "shadow" / "clang" / "__init__.py").write_text("")
    proc = run_cli("run", str(src), env={"PYTHONPATH": str(tmp_path / "shadow")})
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert 'pip install "torchlight[simulator]"' in proc.stderr and "Traceback" not in proc.stderr
