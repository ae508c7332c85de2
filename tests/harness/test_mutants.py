"""The mutation session's machinery (ci/mutants): operators make the one change they name, the
registry finds sites for every operator in the real kernels, stages report the failing test, and
the report is written. The session itself (`nox -s mutants`) takes hours and is not run here."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ci.mutants import cuda_operators, equivalent, python_operators, registry, report, runner
from ci.mutants.model import Edit, Mutant
from ci.mutants.python_source import PythonSource
from ci.mutants.stages import Stage, stages_for
from simulator.host import find_cxx

ROOT = Path(__file__).resolve().parents[2]

CUDA_SNIPPET = """\
#include <cuda_runtime.h>
#include <stdint.h>
__global__ void k(const float* x, float* y, int64_t rows, int64_t n, int64_t msk) {
    extern __shared__ float sh[];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        float acc = 0.0f;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) acc += x[row * n + j * msk];
        for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
        sh[threadIdx.x] = acc;
        if (threadIdx.x == 0) {
            y[row] = sh[0];
        }
        __syncthreads();
    }
}
int launch(const float* hx, float* hy, int64_t rows, int64_t n) {
    float *dx, *dy;
    cudaMalloc((void**)&dx, rows * n * sizeof(float));
    cudaMalloc((void**)&dy, rows * sizeof(float));
    cudaMemcpy(dx, hx, rows * n * sizeof(float), cudaMemcpyHostToDevice);
    const size_t smem = 32 * sizeof(float);
    k<<<(rows + 3) / 4, 32, smem>>>(dx, dy, rows, n, 1);
    cudaMemcpy(hy, dy, rows * sizeof(float), cudaMemcpyDeviceToHost);
    return 0;
}
"""

PYTHON_SNIPPET = """\
def kernel(out, x, n_rows, n, msk):
    buf = cuda.shared.array(width, elem)
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    row = cuda.blockIdx.x
    while row < n_rows:
        part = zero
        j = t
        while j < n:
            part += x[row * n + j * msk]
            j += nt
        buf[t] = part
        if t == 0:
            out[row] = buf[0]
        cuda.syncthreads()
        row += cuda.gridDim.x
"""


@pytest.fixture(scope="module")
def cuda_source(tmp_path_factory):
    """The CUDA snippet parsed by libclang, or a skip saying what is missing."""
    pytest.importorskip(
        "clang.cindex", reason="the CUDA C operators parse with libclang (the simulator extra)"
    )
    if find_cxx() is None:
        pytest.skip("no C++ compiler: the CUDA C parse takes <stddef.h> from it")
    from ci.mutants.cuda_source import CudaSource

    path = tmp_path_factory.mktemp("cu") / "snippet.cu"
    path.write_text(CUDA_SNIPPET)
    return CudaSource(path, "snippet.cu")


def _changes(mutants: list[Mutant]) -> list[tuple[int, str, str]]:
    return [(m.line, m.original, m.mutated) for m in mutants]


def _changed_lines(before: bytes, after: bytes) -> list[int]:
    old, new = before.decode().splitlines(), after.decode().splitlines()
    return [i for i, (a, b) in enumerate(zip(old, new), 1) if a != b]


@pytest.mark.parametrize(
    "operator, expected",
    [
        ("barrier_removed", [(13, "__syncthreads()", "(void)0")]),
        (
            "barrier_in_branch",
            [
                (
                    12,
                    "__syncthreads() after if (threadIdx.x == 0)",
                    "__syncthreads() inside if (threadIdx.x == 0)",
                )
            ],
        ),
        ("shuffle_offset", [(8, "0", "1"), (8, "16", "8")]),
        (
            "shuffle_width",
            [
                (
                    8,
                    "__shfl_xor_sync(0xffffffffu, acc, offset)",
                    "__shfl_xor_sync(0xffffffffu, acc, offset, 16)",
                )
            ],
        ),
        ("shuffle_mask", [(8, "0xffffffffu", "0x0000ffffu")]),
        ("reduction_identity", [(6, "0.0f", "1.0f")]),
        ("bounds_guard", [(5, "row < rows", "row <= rows"), (7, "j < n", "j <= n")]),
        ("block_stride", [(7, "j += blockDim.x", "j = n"), (7, "blockDim.x", "32")]),
        ("grid_stride", [(5, "row += gridDim.x", "row = rows")]),
        ("shared_extent", [(21, "32 * sizeof(float)", "(32 * sizeof(float)) - sizeof(float)")]),
        ("broadcast_index", [(7, "j * msk", "j")]),
        (
            "host_copy_extent",
            [
                (20, "rows * n * sizeof(float)", "(rows * n * sizeof(float)) - sizeof(float)"),
                (23, "rows * sizeof(float)", "(rows * sizeof(float)) - sizeof(float)"),
            ],
        ),
        (
            "host_copy_direction",
            [
                (20, "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost"),
                (
                    20,
                    "cudaMemcpy(dx, hx, rows * n * sizeof(float), cudaMemcpyHostToDevice)",
                    "cudaMemcpy(hx, dx, rows * n * sizeof(float), cudaMemcpyHostToDevice)",
                ),
                (23, "cudaMemcpyDeviceToHost", "cudaMemcpyHostToDevice"),
                (
                    23,
                    "cudaMemcpy(hy, dy, rows * sizeof(float), cudaMemcpyDeviceToHost)",
                    "cudaMemcpy(dy, hy, rows * sizeof(float), cudaMemcpyDeviceToHost)",
                ),
            ],
        ),
        ("launch_grid_rounding", [(22, "(rows + 3)", "rows")]),
    ],
)
def test_each_cuda_operator_makes_the_change_it_names(cuda_source, operator, expected):
    found = getattr(cuda_operators, operator)(cuda_source)
    assert sorted(_changes(found)) == sorted(expected)
    for m in found:
        after = m.apply(cuda_source.data)
        assert after != cuda_source.data
        lines = _changed_lines(cuda_source.data, after)
        if operator != "barrier_in_branch":  # a move deletes one line and writes it into the branch
            assert lines == [m.line], (m, lines)


def test_a_cuda_barrier_without_a_branch_before_it_is_guarded(tmp_path, cuda_source):
    from ci.mutants.cuda_source import CudaSource

    path = tmp_path / "plain.cu"
    path.write_text(
        "#include <cuda_runtime.h>\n"
        "__global__ void k(float* a) {\n    a[0] = 1.0f;\n    __syncthreads();\n}\n"
    )
    (m,) = cuda_operators.barrier_in_branch(CudaSource(path, "plain.cu"))
    assert m.mutated == "if (threadIdx.x % 2 == 0) __syncthreads()" and m.line == 4


@pytest.mark.parametrize(
    "operator, expected",
    [
        ("barrier_removed", [(15, "cuda.syncthreads()", "pass")]),
        ("barrier_in_branch", [(15, "syncthreads() after if t == 0", "syncthreads() inside if t == 0")]),
        ("reduction_identity", [(7, "zero", "1.0")]),
        ("bounds_guard", [(6, "row < n_rows", "row <= n_rows"), (9, "j < n", "j <= n")]),
        ("block_stride", [(11, "j += nt", "j = n"), (11, "nt", "32")]),
        ("grid_stride", [(16, "row += cuda.gridDim.x", "row = n_rows")]),
        ("shared_extent", [(2, "width", "width - 1")]),
        ("broadcast_index", [(10, "j * msk", "j")]),
    ],
)
def test_each_python_operator_makes_the_change_it_names(tmp_path, operator, expected):
    path = tmp_path / "kernels.py"
    path.write_text(PYTHON_SNIPPET)
    src = PythonSource(path, "kernels.py")
    found = getattr(python_operators, operator)(src)
    assert sorted(_changes(found)) == sorted(expected)
    for m in found:
        ast.parse(m.apply(src.data))  # still Python


def test_python_bounds_guard_leaves_comparisons_of_values_alone(tmp_path):
    path = tmp_path / "kernels.py"
    path.write_text(
        textwrap.dedent(
            """\
            def kernel(x, n):
                best = -inf
                j = cuda.threadIdx.x
                while j < n:
                    if x[j] > best:
                        best = x[j]
                    j += cuda.blockDim.x
            """
        )
    )
    found = python_operators.bounds_guard(PythonSource(path, "kernels.py"))
    assert _changes(found) == [(4, "j < n", "j <= n")]


def test_every_operator_finds_sites_in_the_kernels_and_every_listed_equivalent_exists():
    pytest.importorskip(
        "clang.cindex", reason="the CUDA C operators parse with libclang (the simulator extra)"
    )
    if find_cxx() is None:
        pytest.skip("no C++ compiler: the CUDA C parse takes <stddef.h> from it")
    mutants = registry.generate(ROOT)
    assert {m.operator for m in mutants} == set(registry.OPERATORS)
    assert {m.path for m in mutants} == {*registry.CUDA_TARGETS, *registry.PYTHON_TARGETS}
    for e in equivalent.EQUIVALENT:
        assert any(equivalent.reason_for(m) == e.reason for m in mutants), f"no mutant matches {e}"
    for m in mutants:
        assert stages_for(m.path), m.path
        assert m.source_line, m  # the registry records each site's line
        if m.path.endswith(".py"):
            ast.parse(m.apply((ROOT / m.path).read_bytes()))


def test_an_equivalence_entry_naming_its_line_number_leaves_the_same_change_elsewhere_alone():
    entry = next(e for e in equivalent.EQUIVALENT if e.line)
    change = (entry.path, entry.function, entry.operator, entry.original, entry.mutated, "j += nt")
    assert equivalent.reason_for_change(*change, entry.line) == entry.reason
    assert equivalent.reason_for_change(*change, entry.line + 14) is None
    assert equivalent.reason_for_change(*change) is None  # a row recorded without its line


def test_an_equivalence_entry_naming_its_line_leaves_a_like_change_on_another_line_alone():
    entry = next(e for e in equivalent.EQUIVALENT if e.in_line)
    change = (entry.path, entry.function, entry.operator, entry.original, entry.mutated)
    assert equivalent.reason_for_change(*change, f"x = {entry.in_line} y") == entry.reason
    assert equivalent.reason_for_change(*change, "another line with the same change") is None
    assert equivalent.reason_for_change(*change) is None  # a row recorded without its line


def test_a_stage_names_the_first_failing_test(tmp_path):
    script = "print('FAILED tests/x.py::test_y[a] - AssertionError: boom'); raise SystemExit(1)"
    result = runner.run_stage(tmp_path, Stage("demo", "cpu", ("-c", script)), 1, tmp_path)
    assert (
        not result.passed
        and result.test == "tests/x.py::test_y[a]"
        and result.detail == "AssertionError: boom"
    )
    quiet = runner.run_stage(tmp_path, Stage("demo", "cpu", ("-c", "raise SystemExit(3)")), 1, tmp_path)
    assert not quiet.passed and quiet.test is None and quiet.detail.startswith("exit 3")
    hang = runner.run_stage(
        tmp_path, Stage("demo", "cpu", ("-c", "import time; time.sleep(60)"), timeout_s=1), 1, tmp_path
    )
    assert hang.timed_out and "stopped after 1 s" in hang.detail


def test_a_mutant_edit_is_applied_and_undone_by_the_runner(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    mutant = Mutant("bounds-guard", "f.py", 1, "f", "1", "2", (Edit(4, 5, "2"),))
    check = "import sys; sys.exit(0 if open('f.py').read() == 'x = 2\\n' else 1)"
    stage = Stage("sees the mutant", "cpu", ("-c", check))

    class Pool:
        threads, cache, reach = 1, tmp_path, {}

    import ci.mutants.runner as r

    original = r.stages_for
    r.stages_for = lambda path: (stage,)
    try:
        outcome = runner.run_mutant(tmp_path, "M001", mutant, Pool(), {})
    finally:
        r.stages_for = original
    assert outcome.status == "survived"  # the stage saw the mutated file and passed
    assert (tmp_path / "f.py").read_text() == "x = 1\n"  # and the file is restored


def test_the_report_is_written_with_score_survivors_and_equivalents(tmp_path):
    listed = equivalent.EQUIVALENT[0]
    m_eq = Mutant(listed.operator, listed.path, 47, listed.function, listed.original, listed.mutated, ())
    m_kill = Mutant(
        "barrier-removed", "torchlight/cuda_kernels/tl_common.cuh", 97, "f", "__syncthreads()", "(void)0", ()
    )
    m_live = Mutant(
        "grid-stride",
        "torchlight/cuda_kernels/softmax_kernel.cu",
        115,
        "g",
        "row += gridDim.x",
        "row = rows",
        (),
    )
    outcomes = [
        runner.Outcome("M001", m_eq, "survived", 3.0),
        runner.Outcome(
            "M002", m_kill, "killed", 2.0, "cudasim: CUDA C library tests", "tests/a.py::test_b", "boom"
        ),
        runner.Outcome("M003", m_live, "survived", 9.0),
    ]
    meta = {
        "date": "today",
        "commit": "abc",
        "cpus": 2,
        "jobs": 2,
        "wall_seconds": 14.0,
        "tiers_not_run": {"cpu": "no numba"},
        "baseline": [],
        "selection": "",
    }
    md, js = report.write(tmp_path, report.to_json(outcomes, meta))
    text = md.read_text()
    assert "**Score: 1 of 2 non-equivalent mutants killed (50.0%)**" in text
    assert "1 equivalent" in text and listed.reason in text
    assert "cudasim: CUDA C library tests: `tests/a.py::test_b`" in text
    assert "| M003 | grid-stride | softmax_kernel.cu:115 | `g` |" in text  # the survivor
    assert "Tier that cannot run here: cpu** (no numba)" in text
    rejudged = report.rejudge(__import__("json").loads(js.read_text()))
    assert rejudged["summary"] == report.to_json(outcomes, meta)["summary"]


def test_the_cli_lists_mutants_and_refuses_unknown_operators(capsys):
    from ci.mutants.__main__ import main

    assert main(["--operators", "no-such-operator"]) == 2
    assert "unknown operator(s) no-such-operator" in capsys.readouterr().err
    assert (
        main(["--list", "--files", "torchlight/backends/kernel_bodies.py", "--operators", "bounds-guard"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines and all("bounds-guard" in ln and "kernel_bodies.py" in ln for ln in lines)
    assert sys.modules["ci.mutants.registry"] is registry


def test_reach_reads_which_test_ran_each_line_and_selects_by_the_changed_lines(tmp_path):
    coverage = pytest.importorskip("coverage", reason="the test selection reads coverage data")
    from ci.mutants import reach

    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\n")
    data = coverage.CoverageData(basename=str(tmp_path / ".cov"))
    data.set_context("tests/t.py::test_one[x]|run")
    data.add_lines({str(tmp_path / "f.py"): [1, 2]})
    data.set_context("tests/t.py::test_two|setup")
    data.add_lines({str(tmp_path / "f.py"): [2]})
    data.write()
    by_file = reach.read(tmp_path / ".cov", tmp_path)
    assert by_file["f.py"][2] == {"tests/t.py::test_one[x]", "tests/t.py::test_two"}
    mutant = Mutant("bounds-guard", "f.py", 2, "f", "2", "5", (Edit(10, 11, "5"),))
    assert reach.changed_lines(mutant, (tmp_path / "f.py").read_bytes()) == {2}
    assert reach.tests_for(by_file, "f.py", {2}) == ["tests/t.py::test_one[x]", "tests/t.py::test_two"]
    assert reach.tests_for(by_file, "f.py", {3}) == []
    source = b"class K:\n    def layernorm_fw(self):\n        x = 1\n        return x\n"
    source += b"\n    def other(self):\n        pass\n"
    assert reach.method_lines(source, ("layernorm_fw",)) == {3, 4}


def test_a_selective_stage_runs_only_the_tests_that_ran_the_changed_lines(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    (tmp_path / "test_f.py").write_text(
        "def test_sees_the_mutant():\n    assert open('f.py').read() == 'x = 1\\n'\n\n"
        "def test_never_selected():\n    raise AssertionError('a test that did not run the line ran')\n"
    )
    mutant = Mutant("bounds-guard", "f.py", 1, "f", "1", "2", (Edit(4, 5, "2"),))
    stage = Stage("selective", "cpu", ("-m", "pytest", str(tmp_path)), selective=True)

    class Pool:
        threads, cache = 1, tmp_path
        reach = {"selective": {"f.py": {1: frozenset({"test_f.py::test_sees_the_mutant"})}}}

    import ci.mutants.runner as r

    original = r.stages_for
    r.stages_for = lambda path: (stage,)
    try:
        killed = runner.run_mutant(tmp_path, "M001", mutant, Pool(), {})
        Pool.reach = {"selective": {"f.py": {}}}  # no test ran the line
        unreached = runner.run_mutant(tmp_path, "M002", mutant, Pool(), {})
    finally:
        r.stages_for = original
    assert killed.status == "killed" and killed.test == "test_f.py::test_sees_the_mutant"
    assert (
        unreached.status == "survived" and "no test of selective runs the changed lines" in unreached.detail
    )


def test_a_journal_keeps_final_outcomes_for_a_resumed_run_of_the_same_checkout(tmp_path):
    from ci.mutants import journal

    path = tmp_path / journal.NAME
    killed = Mutant("bounds-guard", "f.py", 1, "f", "1", "2", (Edit(4, 5, "2"),))
    blocked = Mutant("grid-stride", "f.py", 2, "f", "3", "4", (Edit(9, 10, "4"),))
    first = journal.Journal.open(path, "abc", resume=False)
    first.record(runner.Outcome("M001", killed, "killed", 2.0, "stage", "tests/t.py::test_x", "boom"))
    first.record(runner.Outcome("M002", blocked, "not run", 0.0, detail="cpu: no numba"))
    with path.open("a") as f:
        f.write('{"key": "cut off')  # a run stopped while writing its last line
    again = journal.Journal.open(path, "abc", resume=True)
    kept = again.recorded("M007", killed)  # ids follow the selection; the key is the change itself
    assert kept is not None and (kept.id, kept.status, kept.test) == ("M007", "killed", "tests/t.py::test_x")
    assert again.recorded("M002", blocked) is None  # a tier that could not run is tried again
    with pytest.raises(journal.JournalError, match="another state of the checkout"):
        journal.Journal.open(path, "changed", resume=True)
    with pytest.raises(journal.JournalError, match="no journal"):
        journal.Journal.open(tmp_path / "none.jsonl", "abc", resume=True)


def test_a_journal_adds_up_the_wall_time_of_each_run_it_records():
    from ci.mutants import journal

    records = [{"fingerprint": "x"}, {"start": 100.0}, {"key": "a", "finished_at": 130.0}, {"start": 500.0}]
    records += [{"key": "b", "finished_at": 510.0}, {"key": "c", "finished_at": 520.0}, {"start": 900.0}]
    assert journal.earlier_seconds(records) == 50.0  # 30 s, then 20 s; the last run finished nothing


def _in_a_git_checkout(root: Path) -> bool:
    """Whether ``root`` is a git checkout git can list (the images copy the tree without .git)."""
    if shutil.which("git") is None:
        return False
    probe = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=root, capture_output=True)
    return probe.returncode == 0


def test_the_cli_resumes_from_a_journal_and_runs_only_what_it_lacks(tmp_path, capsys):
    from ci.mutants import journal
    from ci.mutants.__main__ import ROOT as CLI_ROOT
    from ci.mutants.__main__ import blocked_tiers, main

    if not _in_a_git_checkout(CLI_ROOT):
        pytest.skip("the mutation tool lists the checkout's files with git; this tree is no git checkout")

    selection = ["--files", "torchlight/backends/kernel_bodies.py", "--operators", "bounds-guard"]
    mutants = registry.generate(CLI_ROOT, ["bounds-guard"], ["torchlight/backends/kernel_bodies.py"])
    checkout = journal.fingerprint(CLI_ROOT, runner.workspace_files(CLI_ROOT))
    record = journal.Journal.open(tmp_path / journal.NAME, checkout, resume=False)
    for i, m in enumerate(mutants):
        record.record(runner.Outcome(f"M{i}", m, "killed", 1.0, "stage", f"tests/t.py::test_{i}", ""))
    status = main([*selection, "--resume", "--out", str(tmp_path)])
    assert status == (1 if blocked_tiers() else 0)
    out = capsys.readouterr().out
    assert f"{len(mutants)} outcomes kept" in out and "0 mutants to run" not in out  # no workspace made
    data = __import__("json").loads((tmp_path / "mutants.json").read_text())
    assert data["resumed"] == len(mutants) and data["summary"]["killed"] == len(mutants)
    assert "Resumed (`--resume`)" in (tmp_path / "mutants.md").read_text()
