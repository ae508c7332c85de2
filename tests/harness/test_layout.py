"""The layout rules hold: backend modules form no import cycle, no module assigns another module's
globals, every test folder runs in some tier, and the backend marker demands a reason."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ROOT / "torchlight" / "backends"
PACKAGE = "torchlight.backends"


def backend_modules() -> list[str]:
    """The module names of torchlight/backends (``__init__`` included)."""
    return sorted(p.stem for p in BACKENDS.glob("*.py"))


def sibling_imports(path: Path, siblings: set[str]) -> set[str]:
    """Which sibling backend modules ``path`` imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:  # from . import a, b
                found.update(alias.name for alias in node.names if alias.name in siblings)
            elif node.level == 1 and node.module in siblings:  # from .a import x
                found.add(node.module)
            elif node.level == 0 and node.module and node.module.startswith(PACKAGE + "."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.split(".")[2])
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_find_cycle_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_backend_modules_import_each_other_without_cycles():
    names = set(backend_modules())
    graph = {name: sibling_imports(BACKENDS / f"{name}.py", names) - {name} for name in names}
    assert graph["cuda_backend"] >= {"cuda_c", "cuda_provider"}  # the walk does see imports
    cycle = find_cycle(graph)
    assert cycle is None, f"backend modules import each other in a cycle: {' -> '.join(cycle)}"


def test_every_backend_module_imports_alone_without_numba():
    code = textwrap.dedent(
        """
        import importlib, subprocess, sys
        for name in sys.argv[1:]:
            module = "torchlight.backends" + ("" if name == "__init__" else "." + name)
            heavy = "sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numba_cuda'))"
            probe = f"import sys, {module}; print({heavy})"
            done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
            print(name, done.returncode, done.stdout.strip(), done.stderr.strip().splitlines()[-1:])
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, *backend_modules()],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    lines = done.stdout.strip().splitlines()
    assert len(lines) == len(backend_modules())
    for line in lines:
        assert line.split(" ", 2)[1:] == ["0", "[] []"], f"importing a backend module alone: {line}"


def module_aliases(tree: ast.AST) -> set[str]:
    """Names a file binds to imported modules (``import x``, ``from . import x``, ``import a.b as c``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is None:
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def foreign_global_assignments(path: Path, root: Path = ROOT) -> list[str]:
    """``module.name = ...`` statements in ``path`` whose target is an imported module."""
    tree = ast.parse(path.read_text())
    modules = module_aliases(tree)
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id in modules
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(target)} = ...")
    return found


def test_the_foreign_global_check_sees_a_patch(tmp_path):
    planted = tmp_path / "patch.py"
    planted.write_text("from . import autograd\n\n\ndef bind():\n    autograd._wrap = None\n    local = 1\n")
    assert foreign_global_assignments(planted, tmp_path) == ["patch.py:5: autograd._wrap = ..."]


def test_no_library_module_assigns_another_modules_globals():
    found = [
        hit
        for path in sorted((ROOT / "torchlight").rglob("*.py"))
        for hit in foreign_global_assignments(path)
    ]
    assert not found, "modules patch other modules' globals:\n" + "\n".join(found)


def tier_test_paths() -> dict[str, list[str]]:
    """Each tier's test folders, from the tier table (ci/tiers.py)."""
    from ci import tiers

    return {name: list(tier.tests) for name, tier in tiers.TIERS.items()}


def test_every_test_file_runs_in_some_tier_and_every_tier_path_exists():
    tiers = tier_test_paths()
    assert {"cpu", "cudasim", "kernels", "gpu"} <= set(tiers)
    paths = {path for folders in tiers.values() for path in folders}
    for path in paths:
        assert (ROOT / path).is_dir(), f"ci/tiers.py names {path}, which does not exist"
    for tier in ("cpu", "cudasim", "gpu"):
        assert "tests/generic" in tiers[tier], f"the {tier} tier must run the generic suite"
    for test_file in sorted((ROOT / "tests").rglob("test_*.py")):
        rel = test_file.relative_to(ROOT).as_posix()
        assert any(rel.startswith(path + "/") for path in paths), f"no tier runs {rel}"


MARKED = """
import pytest

@pytest.mark.requires_backend("cpu"{kwargs})
def test_marked():
    pass
"""


def run_marked(tmp_path: Path, kwargs: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_marked.py").write_text(MARKED.format(kwargs=kwargs))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT)])}
    env["TORCHLIGHT_TEST_BACKENDS"] = "cpu"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "test_marked.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [("", "needs reason="), (', reason=""', "needs reason="), (', reason="x", why="y"', "unknown keyword")],
    ids=["missing", "empty", "unknown-keyword"],
)
def test_requires_backend_without_a_reason_stops_collection(tmp_path, kwargs, error):
    done = run_marked(tmp_path, kwargs)
    assert done.returncode == 4, done.stdout + done.stderr  # pytest's usage-error exit code
    assert error in done.stdout + done.stderr
    assert "test_marked.py::test_marked" in done.stdout + done.stderr


def test_requires_backend_with_a_reason_runs_where_the_backend_builds(tmp_path):
    done = run_marked(tmp_path, ', reason="uses the cpu backend"')
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_the_matrix_report_orders_its_columns_by_the_backend_registry():
    from ci import matrix_report
    from torchlight.backends.registry import BACKENDS

    assert matrix_report.BACKEND_ORDER == [*BACKENDS, "-"]
