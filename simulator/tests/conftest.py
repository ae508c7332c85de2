"""Shared fixtures: paths, a CLI runner and cached fast builds of the test kernels.

Tests that compile with nvcc (every test whose name says ``nvcc``, and any marked ``kernels``) carry
the ``kernels`` marker: the kernels tier, which has nvcc, runs them; the sanitize tier leaves them out.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from simulator.modes import TABLE

from . import module_order

if TYPE_CHECKING:
    import numpy as np

# The runtime's progress lines (stderr) would mix into the output the tests compare;
# simulator/tests/test_progress.py checks them.
os.environ.setdefault("SIMULATOR_PROGRESS", "0")

TESTS = Path(__file__).resolve().parent
KERNELS = TESTS / "kernels"
REPO = TESTS.parent.parent
SHIPPED = REPO / "torchlight" / "cuda_kernels"


def pytest_configure(config: pytest.Config) -> None:
    """Order the modules by their measured seconds (module_order.py)."""
    module_order.configure(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of this folder that compiles with nvcc (its name says so) ``kernels``, and
    start the longest modules first."""
    for item in items:
        mine = TESTS in Path(item.path).resolve().parents
        if mine and "nvcc" in getattr(item, "originalname", item.name):
            item.add_marker(pytest.mark.kernels)
    module_order.longest_first(items, module_order.load_seconds())


def run_cli(
    *args: str,
    timeout: float = 280.0,
    env: dict[str, str] | None = None,
    prefix: tuple[str, ...] = (),
) -> subprocess.CompletedProcess:
    """Run ``python -m simulator ARGS`` from the repository root (``env``: variables to add;
    ``prefix``: a command that runs it, such as ``taskset -c 0``)."""
    env = {**os.environ, **(env or {})}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [*prefix, sys.executable, "-m", "simulator", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


_Run = TypeVar("_Run", bound=Callable)


def once_per_arguments(run: _Run) -> _Run:
    """``run``, a module's helper that runs its test program, run once per distinct arguments in
    this test process: several tests of a module compare against the same reference run (the
    fast build's, or the fibers'), and the test programs print the same on every run, so the
    first run's result serves them all. Each test still checks everything it checked before."""
    return functools.cache(run)  # type: ignore[return-value]


# SIMULATOR_LAUNCH_LOG=1's line per launch: mode, kernel (template arguments dropped), how it ran
# and, for fibers, why.
LAUNCH_LOG = re.compile(
    r"launch log \((\w+)\): kernel '([^'<]+)(?:<[^']*>)?' \(launched at [^)]*\) runs ([^:]+)(?:: (.+))?$"
)


def launch_ways(stderr: str, mode: str | None = None) -> dict[str, str]:
    """{kernel: how it ran} from a run's launch-log lines (each checked to be of ``mode`` if given)."""
    ways = {}
    for ln in stderr.splitlines():
        if m := LAUNCH_LOG.match(ln):
            assert mode is None or m.group(1) == mode, ln
            ways[m.group(2)] = m.group(3)
    return ways


def launch_reasons(stderr: str) -> dict[str, str | None]:
    """{kernel: why it ran with fibers (None for a loop)} from a run's launch-log lines."""
    return {m.group(2): m.group(4) for ln in stderr.splitlines() if (m := LAUNCH_LOG.match(ln))}


# The reason a build passes beside a launch of fibers (its template arguments dropped).
_TRANSLATED_REASON = re.compile(
    r'::__sim::launcher\("(\w+)(?:<\w+>)?"[^\n]*::__sim::BarrierKind\{false, false, "([^"]*)"\}'
)


def translated_reasons(src: Path, text: str) -> tuple[dict[str, str], dict[str, int]]:
    """Write ``text`` to ``src`` and translate it: ({kernel: the reason for fibers the build passes
    beside its launch}, {marker: line} of the text's ``// why: MARKER`` comments)."""
    from simulator.build import translate_source

    src.write_text(text)
    why = dict(_TRANSLATED_REASON.findall(translate_source(src)))
    markers = re.compile(r"// why: (\w+)$")
    lines = {m.group(1): i for i, ln in enumerate(text.splitlines(), 1) if (m := markers.search(ln))}
    return why, lines


def run_logged(program: Path, mode: str, fibers: str, *args: str) -> tuple[str, dict[str, str]]:
    """(stdout, {kernel: how it ran}) of ``program`` run in ``mode`` with ``args``; ``fibers`` "1"
    forces fibers (SIMULATOR_FIBERS)."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers}
    proc = run_cli("run", str(program), "--mode", mode, *(("--", *args) if args else ()), env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, launch_ways(proc.stderr, mode)


def run_apart(program: Path, mode: str, fibers: str, *args: str) -> tuple[str, str, dict[str, str]]:
    """(stdout, stderr without the launch log and build progress, {kernel: how it ran}) of
    ``program`` run in ``mode`` with ``args``; ``fibers`` "1" forces fibers (SIMULATOR_FIBERS)."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers}
    proc = run_cli("run", str(program), "--mode", mode, *(("--", *args) if args else ()), env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    rest = [
        ln
        for ln in proc.stderr.splitlines()
        if not LAUNCH_LOG.match(ln) and not ln.startswith("simulator: building")
    ]
    return proc.stdout, "\n".join(rest), launch_ways(proc.stderr)


# Every way a test program runs "in every mode" (simulator/modes.py): each mode, and each other
# build a mode's option picks (racecheck twice, with its default detector, __shared__ memory by
# the simulator's own, and with ThreadSanitizer over every access, --racecheck-memory all), so
# that each is shown to stay quiet on a correct program.
EVERY_MODE = tuple(
    name
    for row in TABLE
    for name in (
        row.name,
        *(f"{row.name}-{value}" for value, built in row.run_variants.items() if built != row.run_build),
    )
)


def mode_args(mode: str) -> list[str]:
    """``run``'s options for ``mode``, one of ``EVERY_MODE``."""
    if mode == "racecheck-all":
        return ["--mode", "racecheck", "--racecheck-memory", "all"]
    return ["--mode", mode]


def line_of(path: Path, marker: str) -> int:
    """The 1-based line of ``path`` that carries ``marker`` (exactly one)."""
    lines = [i for i, text in enumerate(path.read_text().splitlines(), 1) if marker in text]
    assert len(lines) == 1, (path.name, marker, lines)
    return lines[0]


def run_findings(stderr: str) -> list[str]:
    """The findings ``run`` lists on stderr after the program's output."""
    out, inside = [], False
    for ln in stderr.splitlines():
        if re.match(r"simulator: run \(\w+\): \d+ finding\(s\):", ln):
            inside = True
        elif inside and ln.startswith("  "):
            out.append(ln.strip())
        elif inside:
            break
    return out


def memcheck_faults_as_fibers(
    loops, fibers, findings, program: Path, marker: str, thread: str, what: str
) -> None:
    """Check that memcheck's run with block loops (``loops``) faulted as the fibers' run (``fibers``)
    did: the same findings as ``findings(stderr)`` reads them (at least one), status 1 and output,
    each finding at ``program``'s line that carries ``marker`` naming ``thread``, and ``what`` said."""
    found = findings(loops.stderr)
    assert found, loops.stderr[-3000:]
    assert found == findings(fibers.stderr)
    assert (loops.returncode, loops.stdout) == (fibers.returncode, fibers.stdout)
    assert loops.returncode == 1, loops.stderr[-3000:]
    where = f"{program}:{line_of(program, marker)}"
    assert all(where in f and f.endswith(f"thread {thread}") for f in found), found
    assert what in loops.stderr, loops.stderr[-3000:]


def racecheck_run(program: Path, case: str, fibers: str, memory: str = "shared"):
    """(process, how each kernel ran) of ``program``'s ``case`` under racecheck of ``memory``."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli(
        "run", str(program), "--mode", "racecheck", "--racecheck-memory", memory, "--", case, env=env
    )
    return proc, launch_ways(proc.stderr)


def finding_lines(program: Path, findings: list[str]) -> set[tuple[int, ...]]:
    """Each finding's lines of ``program``: the later access's, then the earlier one's."""
    return {tuple(int(n) for n in re.findall(rf"{program.name}:(\d+)", f)) for f in findings}


def racecheck_both_ways(
    program: Path, case: str, kernel: str, way: str = "as block loops", *, whole_text: bool = False
):
    """(the run, the fibers' run) of ``case`` (``kernel`` runs ``way``) under racecheck of shared
    memory, after checking the run's output, status and findings against the fibers' (every access
    judged): the findings' lines, or with ``whole_text`` their whole text."""
    loops, ways = racecheck_run(program, case, "0")
    fibers, fiber_ways = racecheck_run(program, case, "1")
    assert ways == {kernel: way}, loops.stderr[-3000:]
    assert fiber_ways == {kernel: "with fibers"}, fibers.stderr[-3000:]
    assert loops.returncode == fibers.returncode, loops.stderr[-3000:]
    assert loops.stdout == fibers.stdout
    if whole_text:
        assert run_findings(loops.stderr) == run_findings(fibers.stderr)
    else:
        lines = finding_lines(program, run_findings(loops.stderr))
        assert lines == finding_lines(program, run_findings(fibers.stderr))
    return loops, fibers


def sigint_as_from_a_terminal() -> None:
    """A child's SIGINT as a terminal's foreground process has it (Popen's preexec_fn): a test run
    started in the background inherits SIGINT ignored, and Python keeps it ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def processes_naming(marker: str) -> list[str]:
    """The command lines of the running processes that contain ``marker``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text:
            found.append(text)
    return found


def processes_left_naming(marker: str, within: float = 10.0) -> list[str]:
    """:func:`processes_naming` once no process names ``marker`` or ``within`` seconds passed: a
    stopped program's reaper ends its tree as the run ends, which a loaded machine may finish a
    moment after the caller returned; a program that was never stopped is still there."""
    end = time.monotonic() + within
    while (found := processes_naming(marker)) and time.monotonic() < end:
        time.sleep(0.05)
    return found


def shipped_sources() -> list[Path]:
    """The shipped kernel sources, or a skip when they are not in this checkout."""
    names = ["softmax_kernel.cu", "layernorm_kernel.cu"]
    missing = [n for n in names if not (SHIPPED / n).is_file()]
    if missing:
        pytest.skip(f"shipped kernel sources missing from torchlight/cuda_kernels: {', '.join(missing)}")
    return [SHIPPED / n for n in names]


@pytest.fixture(scope="session")
def sim_lib_dir(tmp_path_factory) -> Path:
    """Fast-mode builds of the semantics kernels and of the shipped kernels (when present)."""
    from simulator import build_shared

    out = tmp_path_factory.mktemp("sim-libs")
    build_shared(KERNELS / "semantics.cu", out, "fast")
    for name in ("softmax_kernel.cu", "layernorm_kernel.cu"):
        if (SHIPPED / name).is_file():
            build_shared(SHIPPED / name, out, "fast")
    return out


@pytest.fixture(scope="session")
def sem(sim_lib_dir) -> ctypes.CDLL:
    """The semantics kernels, loaded with ctypes."""
    return ctypes.CDLL(str(sim_lib_dir / "semantics.so"))


@pytest.fixture(scope="session")
def feature_lib(tmp_path_factory):
    """Build ``simulator/tests/kernels/NAME.cu`` (fast mode) once and load it with ctypes."""
    from simulator import build_shared

    out = tmp_path_factory.mktemp("sim-feature-libs")
    loaded: dict[str, ctypes.CDLL] = {}

    def load(name: str) -> ctypes.CDLL:
        if name not in loaded:
            loaded[name] = ctypes.CDLL(str(build_shared(KERNELS / f"{name}.cu", out, "fast")))
        return loaded[name]

    return load


def ptr(a: np.ndarray) -> ctypes.c_void_p:
    """A C-contiguous numpy array's data, as a pointer argument of a launcher called with ctypes."""
    assert a.flags.c_contiguous
    return ctypes.c_void_p(a.ctypes.data)


def nvcc_compile(
    program: Path, tmp_path: Path, needs_header: str | None = None, rdc: bool = False, arch: str = "sm_80"
) -> subprocess.CompletedProcess:
    """``nvcc -arch=ARCH -c PROGRAM`` (``-rdc=true`` with ``rdc``, as device-side launches need); a skip
    when nvcc, or the library ``needs_header``, is absent."""
    import shutil

    nvcc = shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None
    )
    if nvcc is None:
        pytest.skip("nvcc is not installed: cannot check that the program builds for a GPU unchanged")
    if needs_header is not None:
        probe = tmp_path / "probe.cu"
        probe.write_text(f"#include <{needs_header}>\n")
        if subprocess.run([nvcc, "-E", str(probe)], capture_output=True, timeout=120).returncode != 0:
            pytest.skip(
                f"this CUDA toolkit has no <{needs_header}> (its library's -dev package is not installed)"
            )
    return subprocess.run(
        [nvcc, f"-arch={arch}", "-c", *(["-rdc=true"] * rdc), str(program), "-o", str(tmp_path / "p.o")],
        capture_output=True,
        text=True,
        timeout=240,
    )


def int_values(stdout: str) -> dict[str, int]:
    """The ``key=integer`` lines a self-checking test program prints."""
    import re

    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)=(-?\d+)$", stdout, re.M)}


def token_values(stdout: str) -> dict[str, str]:
    """Every ``key=value`` token (whitespace-separated) a test program prints."""
    out = {}
    for token in stdout.split():
        key, sep, value = token.partition("=")
        if sep:
            out[key] = value
    return out


def case_lines(stdout: str) -> dict:
    """The ``case NAME STATUS v1 v2 ...`` lines a GEMM test program prints: name -> (status, values)."""
    import numpy as np

    out = {}
    for line in stdout.splitlines():
        if line.startswith("case "):
            _, name, status, *values = line.split()
            out[name] = (int(status), np.array(values, dtype=np.float64))
    return out


def hashed_values(which: int, count: int, spread: int, scale: float):
    """A cuBLAS test program's ``value(which, i)`` for i < count: its 32-bit hash of (which, i)
    taken mod ``2 * spread + 1``, less ``spread``, over ``scale``, as float32."""
    import numpy as np

    mask = np.uint64(0xFFFFFFFF)
    i = np.arange(count, dtype=np.uint64)
    x = ((i * np.uint64(2654435761)) & mask) ^ np.uint64((which * 40503 + 0x9E3779B9) & 0xFFFFFFFF)
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x2C1B3C6D)) & mask
    x ^= x >> np.uint64(12)
    return (((x % np.uint64(2 * spread + 1)).astype(np.int64) - spread) / scale).astype(np.float32)


def col_major(values, rows: int, cols: int):
    """``values`` read as a column-major rows x cols matrix (cuBLAS's layout)."""
    return values.reshape(cols, rows).T


# ---- the inline-PTX test programs (test_ptx_*.py) ---------------------------------------------------
PTX_SCALAR = KERNELS / "program_ptx.cu"
PTX_THREADS = KERNELS / "program_ptx_threads.cu"


@pytest.fixture(scope="session")
def scalar_run() -> tuple[str, int, int]:
    """``program_ptx.cu`` run once: its stdout and the host clock's nanoseconds before and after."""
    began = time.time_ns()
    proc = run_cli("run", str(PTX_SCALAR))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "done=1" in proc.stdout
    return proc.stdout, began, time.time_ns()


@pytest.fixture(scope="session")
def threads_run() -> str:
    """``program_ptx_threads.cu`` run once, clean: its stdout."""
    proc = run_cli("run", str(PTX_THREADS))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    assert "done=1" in proc.stdout and proc.stderr == "", proc.stderr
    return proc.stdout
