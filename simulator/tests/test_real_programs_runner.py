"""``benchmarks/real_programs.py``: the runner behind the closing notes' counts of real programs.

A passing program is stopped at its check line (its benchmark loop never runs), a program without
the line fails with its status, one judged by its exit status passes on 0 unless it printed its
failure line, a refused build names the construct, and a bad manifest is an
argument error naming the entry. ``benchmarks/build_programs.py`` builds programs with their own
Makefiles and CMakeLists.txt and a given nvcc (a stand-in here) in copies of their folders, and
judges what they built the same way."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, processes_left_naming

RUNNER = REPO / "benchmarks" / "real_programs.py"

# Checks one kernel's result, prints its check line and then "benchmarks" far past the
# runner's limit.
CHECKS_THEN_LOOPS = r"""
#include <cstdio>
#include <unistd.h>
__global__ void one(int* out) { *out = 42; }
int main() {
    int* d; int h = 0;
    cudaMalloc(&d, sizeof(int));
    one<<<1, 1>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("value %d\n", h);
    if (h == 42) printf("All results match.\n");
    for (;;) sleep(1);
}
"""
WRONG = r"""
#include <cstdio>
int main() { printf("mismatch\n"); return 3; }
"""
# Checks by its exit status: prints a line only when its check fails, and exits 0 either way.
QUIET = r"""
#include <cstdio>
__global__ void twice(int* v) { v[threadIdx.x] *= 2; }
int main(int argc, char** argv) {
    int h[4] = {1, 2, 3, 4}; int* d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int expect = argc > 1 ? 3 : 2;  // an argument makes the check fail
    for (int i = 0; i < 4; ++i)
        if (h[i] != expect * (i + 1)) { printf("Arrays do not match at %d\n", i); break; }
    return 0;
}
"""
# Its check line, then a failure at its end (as racecheck's report comes when a program ends).
LATE_FAILURE = r"""
#include <cstdio>
int main() { printf("All results match.\n"); fflush(stdout); return 5; }
"""
PTX = r"""
__global__ void sad(unsigned* out) {
    unsigned d;
    asm("sad.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(1u), "r"(2u), "r"(0u));
    *out = d;
}
int main() { return 0; }
"""


def _runner():
    spec = importlib.util.spec_from_file_location("real_programs", RUNNER)
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_programs"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def root(tmp_path):
    programs = {
        "checks.cu": CHECKS_THEN_LOOPS,
        "wrong.cu": WRONG,
        "ptx.cu": PTX,
        "quiet.cu": QUIET,
        "late.cu": LATE_FAILURE,
    }
    for name, text in programs.items():
        (tmp_path / "src").mkdir(exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    return tmp_path


def _manifest(root, programs) -> str:
    path = root / "manifest.json"
    path.write_text(json.dumps({"defaults": {"cwd": "src", "passes": "results match"}, "programs": programs}))
    return str(path)


def test_runner_counts_passes_stops_at_the_check_and_names_refusals(root, tmp_path):
    manifest = _manifest(
        root,
        [
            {"name": "checks", "sources": ["src/checks.cu"]},
            {"name": "wrong", "sources": ["src/wrong.cu"]},
            {"name": "ptx", "sources": ["src/ptx.cu"]},
            {"name": "quiet", "sources": ["src/quiet.cu"], "exit_status": True, "fails": "do not match"},
            {
                "name": "quiet-fails",
                "sources": ["src/quiet.cu"],
                "args": ["wrong"],
                "exit_status": True,
                "fails": "do not match",
            },
            {"name": "wrong-status", "sources": ["src/wrong.cu"], "exit_status": True},
        ],
    )
    out = tmp_path / "out.json"
    limit = 240
    proc = subprocess.run(
        [
            sys.executable,
            str(RUNNER),
            manifest,
            "--root",
            str(root),
            "--limit",
            str(limit),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=3 * limit,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {o["name"]: o for o in json.loads(out.read_text())}
    # The program would loop forever after its check: it passed at the line, well before the limit.
    assert got["checks"]["verdict"] == "pass"
    assert got["checks"]["seconds"] < limit
    # ...and was stopped there, not left looping.
    assert not processes_left_naming("program-checks-fast"), "the program still runs after its check line"
    assert got["wrong"]["verdict"] == "exit 3, no check line"
    assert got["ptx"]["verdict"] == "build refused"
    assert "inline PTX instruction 'sad.u32'" in got["ptx"]["detail"]
    # Judged by exit status: 0 and no failure line passes; the failure line or another status fails.
    assert got["quiet"]["verdict"] == "pass"
    assert got["quiet-fails"]["verdict"] == "check failed"
    assert got["quiet-fails"]["detail"] == "Arrays do not match at 0"
    assert got["wrong-status"]["verdict"] == "exit 3"
    assert "2/6 pass" in proc.stdout


def test_to_the_end_waits_past_the_check_line_for_a_clean_exit(root, tmp_path):
    manifest = _manifest(root, [{"name": "late", "sources": ["src/late.cu"]}])
    verdicts = []
    for extra in ([], ["--to-the-end"]):
        out = tmp_path / "out.json"
        cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--json", str(out), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        verdicts.append(json.loads(out.read_text())[0]["verdict"])
    assert verdicts == ["pass", "exit 5 after the check line"]


@pytest.mark.parametrize("mode", ["memcheck", "racecheck", "synccheck"])
def test_runner_runs_programs_under_each_checker(root, tmp_path, mode):
    # Each checker's program is line-buffered too: one that would loop forever after its check
    # line passes at the line (memcheck once failed every program: its AddressSanitizer refused
    # the library a line-buffering wrapper preloaded).
    out = tmp_path / "out.json"
    manifest = _manifest(root, [{"name": "checks", "sources": ["src/checks.cu"]}])
    cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--mode", mode, "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (got,) = json.loads(out.read_text())
    assert got["verdict"] == "pass", got
    assert not processes_left_naming(f"program-checks-{mode}"), "the program still runs after its check line"


@pytest.mark.parametrize(
    "entry,message",
    [
        ({"name": "x", "sources": ["src/missing.cu"]}, "does not exist"),
        ({"name": "x"}, "needs 'name' and 'sources'"),
        ({"name": "x", "sources": ["src/checks.cu"], "colour": 1}, "unknown: colour"),
        ({"name": "x", "sources": "src/checks.cu"}, "lists of strings"),
        ({"name": "x", "sources": ["src/checks.cu"], "passes": "(["}, "not a regular expression"),
        ({"name": "x", "sources": ["src/checks.cu"], "fails": "no"}, "'fails' goes only with exit_status"),
        ({"name": "x", "sources": ["src/checks.cu"], "exit_status": "yes"}, "exit_status is true or false"),
        (
            {"name": "x", "sources": ["src/checks.cu"], "exit_status": True, "fails": "(["},
            "'fails' is not a regular expression",
        ),
    ],
)
def test_a_bad_manifest_entry_is_named(root, entry, message):
    with pytest.raises(ValueError, match=message):
        _runner().load_manifest(Path(_manifest(root, [entry])), root)


# --- build_programs.py: the programs' own build files, with a stand-in nvcc -------------------

BUILDER = REPO / "benchmarks" / "build_programs.py"
# nvcc's command line onto g++ (the test programs are plain C++ in .cu files)
MADE = "ok,wrong,broken,rodinia"  # the suite's Make programs
FAKE_NVCC = """\
import subprocess, sys
args, rest = [], iter(sys.argv[1:])
for a in rest:
    if a.startswith(("-arch", "--gpu-architecture")):
        continue
    args += next(rest).split(",") if a == "-Xcompiler" else [a]
cxx = ["-x", "c++"] if any(a.endswith(".cu") for a in args) else []
sys.exit(subprocess.call(["g++", *cxx, *args]))
"""
HEC_MAKEFILE = """\
CC = nvcc
ARCH = sm_60
main: main.o
\t$(CC) -arch=$(ARCH) main.o -o main
main.o: main.cu
\t$(CC) -std=c++17 -Xcompiler -Wall -arch=$(ARCH) -I../include -c main.cu -o main.o
run: main
\t./main 7
"""
CHECKS_ARGUMENT = """\
#include <cstdio>
#include <cstdlib>
#include "expected.h"
int main(int argc, char** argv) { puts(argc > 1 && atoi(argv[1]) == EXPECTED ? "PASS" : "FAIL"); }
"""
RODINIA_MAKEFILE = """\
include ../../common/make.config
prog: prog.cu
\t$(CUDA_DIR)/bin/nvcc prog.cu -o prog
"""


@pytest.fixture
def suite(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("needs GNU make to run the Makefiles")
    nvcc = tmp_path / "toolkit" / "bin" / "nvcc"
    files = {
        "hec/src/include/expected.h": "#define EXPECTED 7\n",
        "hec/src/ok-cuda/Makefile": HEC_MAKEFILE,
        "hec/src/ok-cuda/main.cu": CHECKS_ARGUMENT,
        "hec/src/wrong-cuda/Makefile": HEC_MAKEFILE,
        "hec/src/wrong-cuda/main.cu": CHECKS_ARGUMENT.replace("EXPECTED ?", "EXPECTED + 1 ?"),
        "hec/src/broken-cuda/Makefile": HEC_MAKEFILE,
        "hec/src/broken-cuda/main.cu": "int main() { return undeclared; }\n",
        "rod/common/make.config": "CUDA_DIR = /usr/local/cuda\n",
        "rod/cuda/prog/Makefile": RODINIA_MAKEFILE,
        "rod/cuda/prog/prog.cu": "int main() { return 0; }\n",
        "cm/CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(c LANGUAGES CXX)\n"
        "add_executable(c main.cpp)\n",
        "cm/main.cpp": '#include <cstdio>\nint main() { puts("PASS"); }\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    nvcc.parent.mkdir(parents=True)
    nvcc.write_text(f"#!{sys.executable}\n{FAKE_NVCC}")
    nvcc.chmod(0o755)
    hec = {"system": "make", "program": "main", "vars": {"CC": "{nvcc}", "ARCH": "sm_80"}}
    programs = [
        {
            "name": n,
            "cwd": f"hec/src/{n}-cuda",
            "args": ["7"],
            "passes": "^PASS",
            "build": {**hec, "dir": f"hec/src/{n}-cuda"},
        }
        for n in ("ok", "wrong", "broken")
    ]
    rodinia = {"system": "make", "dir": "rod/cuda/prog", "program": "prog", "vars": {"CUDA_DIR": "{toolkit}"}}
    programs.append({"name": "rodinia", "cwd": "rod/cuda/prog", "exit_status": True, "build": rodinia})
    cmake = {"system": "cmake", "dir": "cm", "program": "c"}
    programs.append({"name": "cmake", "cwd": "cm", "passes": "PASS", "build": cmake})
    (tmp_path / "manifest.json").write_text(json.dumps({"programs": programs}))
    return tmp_path, nvcc


def _build(root, nvcc, *extra):
    out = root / "out.json"
    cmd = [
        sys.executable,
        str(BUILDER),
        str(root / "manifest.json"),
        "--root",
        str(root),
        "--nvcc",
        str(nvcc),
    ]
    proc = subprocess.run([*cmd, "--json", str(out), *extra], capture_output=True, text=True, timeout=600)
    return proc, (json.loads(out.read_text()) if out.exists() else [])


def test_programs_build_with_their_own_files_and_nvcc_then_are_judged(suite):
    root, nvcc = suite
    before = sorted(p for p in root.rglob("*") if p.is_file())
    proc, outcomes = _build(root, nvcc, "--toolkit", str(nvcc.parent.parent), "--only", MADE)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {o["name"]: o for o in outcomes}
    # ../include resolves beside the copy; the argument reaches the program
    assert got["ok"]["verdict"] == "pass"
    assert got["wrong"]["verdict"] == "exit 0, no check line"
    assert got["broken"]["verdict"] == "build failed" and "undeclared" in got["broken"]["detail"]
    # CUDA_DIR is the toolkit folder: its bin/nvcc built the program, found ../../common/make.config
    assert got["rodinia"]["verdict"] == "pass"
    # the builds happened in copies: the checkout holds what it held
    assert sorted(p for p in root.rglob("*") if p.is_file() and p.name != "out.json") == before


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake to configure the project")
def test_a_cmake_project_builds_its_target_out_of_the_checkout(suite):
    root, nvcc = suite
    proc, (got,) = _build(root, nvcc, "--only", "cmake")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert got["verdict"] == "pass", got
    assert not (root / "cm" / "build-programs").exists()


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake to configure the project")
def test_run_in_build_runs_the_program_where_its_build_put_its_files(suite):
    """``"run_in": "build"``: the program runs in its build folder, where its CMake build wrote a
    file it reads (as a driver API program reads its -fatbin module); by default, in its cwd."""
    root, nvcc = suite
    (root / "cm" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(c LANGUAGES CXX)\nadd_executable(c main.cpp)\n"
        'file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/made.txt" "PASS")\n'
    )
    (root / "cm" / "main.cpp").write_text(
        '#include <cstdio>\nint main() { char w[8] = {0}; FILE* f = fopen("made.txt", "r");\n'
        '  if (f && fgets(w, sizeof w, f)) puts(w); else puts("missing"); }\n'
    )
    manifest = json.loads((root / "manifest.json").read_text())
    entry = next(e for e in manifest["programs"] if e["name"] == "cmake")
    _, (got,) = _build(root, nvcc, "--only", "cmake")
    assert got["verdict"] == "exit 0, no check line", got
    for run_in, verdict in (("build", "pass"), ("cwd", "exit 0, no check line")):
        entry["build"]["run_in"] = run_in
        (root / "manifest.json").write_text(json.dumps(manifest))
        _, (got,) = _build(root, nvcc, "--only", "cmake")
        assert got["verdict"] == verdict, (run_in, got)
    entry["build"]["run_in"] = "there"
    (root / "manifest.json").write_text(json.dumps(manifest))
    proc, _ = _build(root, nvcc, "--only", "cmake")
    assert proc.returncode == 2 and "'run_in' is one of cwd, build, not 'there'" in proc.stderr, proc.stderr


def _print_variable(root: Path, variable: str, label: str = "") -> None:
    """The suite's ``ok`` program prints ``label`` and ``variable``'s value (``unset`` without one)."""
    (root / "hec" / "src" / "ok-cuda" / "main.cu").write_text(
        "#include <cstdio>\n#include <cstdlib>\n"
        f'int main() {{ const char* v = getenv("{variable}"); printf("{label}%s\\n", v ? v : "unset"); }}\n'
    )


def test_a_launch_may_run_as_long_as_the_program(suite, monkeypatch):
    """The built program runs with SIMULATOR_TIMEOUT set to --limit, or to the caller's value."""
    root, nvcc = suite
    _print_variable(root, "SIMULATOR_TIMEOUT")
    manifest = json.loads((root / "manifest.json").read_text())
    for entry in manifest["programs"]:
        entry["passes"] = "^(37|5)$"
    (root / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.delenv("SIMULATOR_TIMEOUT", raising=False)
    proc, (got,) = _build(root, nvcc, "--only", "ok", "--limit", "37")
    assert proc.returncode == 0 and got["verdict"] == "pass", (got, proc.stdout + proc.stderr)
    monkeypatch.setenv("SIMULATOR_TIMEOUT", "5")
    proc, (got,) = _build(root, nvcc, "--only", "ok", "--limit", "37")
    assert got["verdict"] == "pass", got
    monkeypatch.setenv("SIMULATOR_TIMEOUT", "6")
    proc, (got,) = _build(root, nvcc, "--only", "ok", "--limit", "37")
    assert got["verdict"] != "pass", got


def test_a_built_program_sees_its_entrys_devices(suite, monkeypatch):
    """The built program runs with SIMULATOR_DEVICES set to its entry's ``devices`` (default 1)."""
    root, nvcc = suite
    _print_variable(root, "SIMULATOR_DEVICES", "devices ")
    manifest = json.loads((root / "manifest.json").read_text())
    monkeypatch.setenv("SIMULATOR_DEVICES", "3")  # the caller's value does not leak into an entry's run
    for devices, expected in ((None, "1"), (2, "2")):
        for entry in manifest["programs"]:
            entry["passes"] = f"^devices {expected}$"
            entry.pop("devices", None)
            if devices is not None:
                entry["devices"] = devices
        (root / "manifest.json").write_text(json.dumps(manifest))
        proc, (got,) = _build(root, nvcc, "--only", "ok")
        assert got["verdict"] == "pass", (devices, got, proc.stdout + proc.stderr)


def test_a_build_that_needs_a_toolkit_or_a_missing_nvcc_is_named(suite):
    root, nvcc = suite
    proc, outcomes = _build(root, nvcc, "--only", "rodinia")
    assert proc.returncode == 0 and outcomes[0]["detail"] == "its build needs --toolkit"
    proc, _ = _build(root, root / "no-nvcc")
    assert proc.returncode == 2 and "no-nvcc is not an executable file" in proc.stderr


def test_defines_reach_run_and_an_entry_with_only_a_build_is_left_to_the_builder(root):
    runner = _runner()
    entries = [
        {"name": "x", "sources": ["src/checks.cu"], "defines": ["N=4", "FAST"], "note": "why", "build": {}},
        {"name": "built", "cwd": "src", "build": {"system": "make", "dir": "src", "program": "p"}},
    ]
    by_hand, built = runner.load_manifest(Path(_manifest(root, entries)), root)
    command = runner._command(by_hand, root, "fast", 10)
    assert command[command.index("-D") : command.index("-D") + 4] == ["-D", "N=4", "-D", "FAST"]
    assert built.sources == [] and built.build["system"] == "make"
    with pytest.raises(ValueError, match="lists of strings"):
        runner.load_manifest(Path(_manifest(root, [{**entries[0], "defines": "N=4"}])), root)


def test_a_checkout_without_a_simulator_is_named(root, tmp_path):
    manifest = _manifest(root, [{"name": "checks", "sources": ["src/checks.cu"]}])
    cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--checkout", str(tmp_path / "none")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "holds no simulator/" in proc.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make to run the Makefile")
def test_a_build_past_its_limit_is_stopped_with_the_compilers_it_started(tmp_path):
    # make's recipe outlives make unless the whole group is stopped; the stand-in "compiler"
    # sleeps far past the build limit under a name no other process has
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "Makefile").write_text("main:\n\tsleep 987.25 && touch main\n")
    build = {"system": "make", "dir": "slow", "program": "main"}
    manifest = {"programs": [{"name": "slow", "cwd": "slow", "build": build}]}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    proc, (got,) = _build(tmp_path, shutil.which("true"), "--build-limit", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert got["verdict"] == "build over the limit" and got["detail"].startswith("make -C")
    assert not processes_left_naming("sleep 987.25")


@pytest.mark.parametrize(
    "output, expected",
    [
        # the echoed command line names -Werror; the compiler's diagnostic is what went wrong
        (
            "nvcc -Werror -c main.cu -o main.o\nmain.cu:3:5: error: 'x' was not declared\n"
            "make: *** [Makefile:4: main.o] Error 1",
            "main.cu:3:5: error: 'x' was not declared",
        ),
        ("nvcc fatal   : Unknown option '-fancy'\nmake: *** [Makefile:2: all] Error 1", "nvcc fatal"),
        (
            "-- The CUDA compiler identification is unknown\nCMake Error at CMakeLists.txt:2 (project):\n"
            "  No CMAKE_CUDA_COMPILER could be found.\n-- Configuring incomplete, errors occurred!",
            "CMake Error at CMakeLists.txt:2 (project): No CMAKE_CUDA_COMPILER could be found.",
        ),
        ("g++ main.o -lgsl -o main\n/usr/bin/ld: cannot find -lgsl", "/usr/bin/ld: cannot find -lgsl"),
        ("make: *** No rule to make target 'kernel.cu', needed by 'main'.  Stop.", "make: *** No rule"),
        ("building\nmake: *** [Makefile:9: run] Error 2", "make: *** [Makefile:9: run] Error 2"),
        ("building\nsomething odd happened", "something odd happened"),
        ("", ""),
    ],
)
def test_a_failed_build_is_named_by_its_first_error(output, expected, monkeypatch):
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    _runner()  # the module build_programs imports, loaded as the other tests load it
    sys.modules.pop("build_programs", None)
    import build_programs

    assert build_programs.first_error(output).startswith(expected)


def test_runner_builds_the_modules_an_entry_names(root, tmp_path):
    """``modules``: each is built with the simulator's nvcc before the program, which loads it; a
    module that does not build is the program's refused build; a malformed entry is refused."""
    kernels = REPO / "simulator" / "tests" / "kernels"
    for name in ("driver_module.cu", "driver_module_host.cpp"):
        shutil.copy(kernels / name, root / "src" / name)
    (root / "src" / "broken.cu").write_text("__global__ void k() { undeclared_name = 1; }\n")
    loads = {
        "name": "loads",
        "sources": ["src/driver_module_host.cpp"],
        "args": ["built.fatbin"],
        "passes": "^done=1",
        "modules": [{"source": "src/driver_module.cu", "output": "built.fatbin", "flags": ["-fatbin"]}],
    }
    broken = {
        **loads,
        "name": "broken",
        "modules": [{"source": "src/broken.cu", "output": "broken.fatbin", "flags": ["-fatbin"]}],
    }
    manifest = _manifest(root, [loads, broken])
    out = tmp_path / "out.json"
    cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {o["name"]: o for o in json.loads(out.read_text())}
    assert got["loads"]["verdict"] == "pass", got
    # the module was made in the program's folder for its run, and removed after it
    assert not (root / "src" / "built.fatbin").exists()
    assert got["broken"]["verdict"] == "build refused"
    assert got["broken"]["detail"].startswith("module broken.fatbin:")

    bad = _manifest(root, [{**loads, "modules": [{"source": "src/driver_module.cu", "output": "x.fatbin"}]}])
    proc = subprocess.run(
        [sys.executable, str(RUNNER), bad, "--root", str(root)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "modules is a list of objects" in proc.stderr, proc.stderr
