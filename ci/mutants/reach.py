"""Which tests run the code a mutant changes: line coverage per test, recorded on the unmutated code.

A selective stage (the device-generic suites, the numba-cuda tests) runs, for a mutant, only the
tests that ran one of its changed lines when the baseline ran that stage under coverage
(pytest-cov's ``--cov-context=test`` names the test of every line it records). A test that never
runs a changed line behaves exactly as on the unmutated code, so it cannot kill the mutant. numba's
simulator runs the numba-cuda kernels and the shared bodies as Python, so their lines are seen; the
CUDA C kernels are not Python, so for them the lines are those of the loader methods that call their
launchers. Without pytest-cov every stage runs whole.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

from .model import Mutant
from .registry import CUDA_TARGETS

LOADER = "torchlight/backends/cuda_c/loader.py"
COVERED = "torchlight/backends"
# The CudaCKernels methods that call each CUDA C file's launchers.
LAUNCHER_METHODS = {
    "torchlight/cuda_kernels/softmax_kernel.cu": ("attn_softmax_fw", "attn_softmax_bw"),
    "torchlight/cuda_kernels/layernorm_kernel.cu": ("layernorm_fw", "layernorm_bw"),
    "torchlight/cuda_kernels/tl_common.cuh": (
        "attn_softmax_fw",
        "attn_softmax_bw",
        "layernorm_fw",
        "layernorm_bw",
    ),
}
PHASES = ("|run", "|setup", "|teardown")

# stage name -> repository-relative file -> line -> node ids of the tests that ran it
Reach = dict[str, dict[str, dict[int, frozenset[str]]]]


def available() -> bool:
    """Whether pytest-cov (and so coverage) is installed."""
    return importlib.util.find_spec("pytest_cov") is not None


def coverage_args() -> tuple[str, ...]:
    """pytest arguments that record which test ran each line of the backends."""
    return (f"--cov={COVERED}", "--cov-context=test", "--cov-report=")


def read(data_file: Path, workspace: Path) -> dict[str, dict[int, frozenset[str]]]:
    """The tests that ran each line, by file relative to ``workspace``, from a coverage data file."""
    import coverage

    data = coverage.CoverageData(basename=str(data_file))
    data.read()
    out: dict[str, dict[int, frozenset[str]]] = {}
    for measured in data.measured_files():
        path = Path(measured)
        if workspace not in path.parents:
            continue
        lines = {}
        for line, contexts in data.contexts_by_lineno(measured).items():
            tests = frozenset(_node_id(c) for c in contexts if c)
            if tests:
                lines[line] = tests
        out[path.relative_to(workspace).as_posix()] = lines
    return out


def _node_id(context: str) -> str:
    for phase in PHASES:
        if context.endswith(phase):
            return context[: -len(phase)]
    return context


def changed_lines(mutant: Mutant, original: bytes) -> set[int]:
    """The lines of the original file that the mutant's edits touch (1-based)."""
    lines = set()
    for edit in mutant.edits:
        first = original.count(b"\n", 0, edit.start) + 1
        last = original.count(b"\n", 0, max(edit.start, edit.end - 1)) + 1
        lines.update(range(first, last + 1))
    return lines


def method_lines(source: bytes, names: tuple[str, ...]) -> set[int]:
    """The lines of the bodies of the methods ``names`` (any class) in a Python source."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name in names:
            for stmt in node.body:
                lines.update(range(stmt.lineno, stmt.end_lineno + 1))
    return lines


def key_lines(mutant: Mutant, original: bytes, root: Path) -> tuple[str, set[int]]:
    """``(file, lines)`` whose tests can see the mutant: its own changed lines (``original`` is the
    unmutated file), or for CUDA C the loader methods that call the mutated file's launchers."""
    if mutant.path in CUDA_TARGETS:
        return LOADER, method_lines((root / LOADER).read_bytes(), LAUNCHER_METHODS[mutant.path])
    return mutant.path, changed_lines(mutant, original)


def tests_for(by_file: dict[str, dict[int, frozenset[str]]], where: str, lines: set[int]) -> list[str]:
    """The node ids of the tests that ran any of ``lines`` of ``where``, sorted."""
    covered = by_file.get(where, {})
    return sorted(set().union(*(covered.get(line, frozenset()) for line in lines)))
