"""The layout rules hold: backend modules form no import cycle, no module assigns another module's
globals, every test folder runs in some tier, and the backend marker demands a reason."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BACKENDS = ROOT / "torchlight" / "backends"
CORE = ROOT / "torchlight" / "core"


def package_modules(folder: Path, root: Path = ROOT) -> dict[str, Path]:
    """Every module under ``folder`` by dotted name; a package by its own name (its ``__init__``)."""
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` except those under ``if TYPE_CHECKING:`` (annotations only, never run)."""
    found = []
    stack = [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def module_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """Which of the ``known`` modules ``name`` (at ``path``) imports, at module level or inside functions.

    Relative imports are resolved against the module's package; ``from pkg import a`` counts as
    importing ``pkg.a`` when that is a module, else ``pkg`` itself.
    """
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            target = ".".join(base + (node.module.split(".") if node.module else []))
            for alias in node.names:
                if f"{target}.{alias.name}" in known:
                    found.add(f"{target}.{alias.name}")
                elif target in known:
                    found.add(target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
    return found - {name}


def import_graph(folder: Path, root: Path = ROOT) -> dict[str, set[str]]:
    """The modules under ``folder`` and which of them each imports."""
    modules = package_modules(folder, root)
    return {name: module_imports(name, path, set(modules)) for name, path in modules.items()}


def backend_modules() -> list[str]:
    """The dotted names of torchlight.backends' modules (packages included)."""
    return sorted(package_modules(BACKENDS))


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


def test_import_graph_resolves_relative_imports_in_a_planted_package(tmp_path):
    pkg = tmp_path / "top" / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import x\n")
    (pkg / "a.py").write_text(
        "def f():\n    from .sub import b\n\n\nif TYPE_CHECKING:\n    from . import sub\n"
    )
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\nfrom ...pkg import sub\n")
    graph = import_graph(pkg, tmp_path)
    assert graph == {
        "top.pkg": {"top.pkg.a"},
        "top.pkg.a": {"top.pkg.sub.b"},
        "top.pkg.sub": set(),
        "top.pkg.sub.b": {"top.pkg.a", "top.pkg.sub"},
    }
    assert find_cycle(graph) == ["top.pkg.a", "top.pkg.sub.b", "top.pkg.a"]


def test_backend_modules_import_each_other_without_cycles():
    graph = import_graph(BACKENDS)
    # The walk does see imports, inside functions too: the registry builds every backend.
    assert graph["torchlight.backends.registry"] >= {
        "torchlight.backends.numba_cuda.backend",
        "torchlight.backends.cuda_c.provider",
        "torchlight.backends.numba_twin.backend",
    }
    cycle = find_cycle(graph)
    assert cycle is None, f"backend modules import each other in a cycle: {' -> '.join(cycle)}"


def test_only_the_registry_chooses_between_backends():
    """No backend module imports the registry, and CudaBackend imports neither other target."""
    graph = import_graph(BACKENDS)
    users = sorted(name for name, imported in graph.items() if "torchlight.backends.registry" in imported)
    assert users == ["torchlight.backends"], f"only get_backend reads the registry, not {users}"
    cuda = graph["torchlight.backends.numba_cuda.backend"]
    assert not {
        m for m in cuda if m.startswith(("torchlight.backends.cuda_c", "torchlight.backends.numba_twin"))
    }


def test_core_modules_import_each_other_without_cycles():
    graph = import_graph(CORE)
    assert graph["torchlight.core.tensor"] >= {"torchlight.core.functions", "torchlight.core.autograd"}
    cycle = find_cycle(graph)
    assert cycle is None, f"core modules import each other in a cycle: {' -> '.join(cycle)}"


def test_core_imports_nothing_above_it():
    """core/ is the bottom layer: it never reaches up into backends/, nn/ or optim/."""
    library = set(package_modules(ROOT / "torchlight"))
    upward = {
        f"{name} imports {target}"
        for name, path in package_modules(CORE).items()
        for target in module_imports(name, path, library)
        if not target.startswith("torchlight.core")
    }
    assert not upward, "core reaches above itself: " + "; ".join(sorted(upward))


def test_every_backend_module_imports_alone_without_numba():
    code = textwrap.dedent(
        """
        import importlib, subprocess, sys
        for module in sys.argv[1:]:
            heavy = "sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numba_cuda'))"
            probe = f"import sys, {module}; print({heavy})"
            done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
            print(module, done.returncode, done.stdout.strip(), done.stderr.strip().splitlines()[-1:])
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
        assert (ROOT / path).exists(), f"ci/tiers.py names {path}, which does not exist"
    for tier in ("cpu", "cudasim", "gpu"):
        assert "tests/generic" in tiers[tier], f"the {tier} tier must run the generic suite"
    for test_file in sorted((ROOT / "tests").rglob("test_*.py")):
        rel = test_file.relative_to(ROOT).as_posix()
        assert any(rel == path or rel.startswith(path + "/") for path in paths), f"no tier runs {rel}"


def module_scoped_fixtures(path: Path) -> list[str]:
    """The fixtures a test module defines with ``scope="module"``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and ast.unparse(deco.func).endswith("fixture"):
                    scopes = [k.value for k in deco.keywords if k.arg == "scope"]
                    if any(isinstance(v, ast.Constant) and v.value == "module" for v in scopes):
                        found.append(node.name)
    return found


def test_every_module_kept_on_one_xdist_worker_has_the_module_fixture_it_names():
    sys.path.insert(0, str(ROOT / "tests"))
    from module_workers import ONE_WORKER_MODULES, work_unit

    for module, why in ONE_WORKER_MODULES.items():
        fixture = why.split(":", 1)[0]
        assert fixture in module_scoped_fixtures(ROOT / module), f"{module} has no module-scoped {fixture!r}"
        assert work_unit(f"{module}::test_x[a]") == work_unit(f"{module}::test_y") == module
    assert work_unit("tests/generic/test_nn.py::test_x[cpu]") == "tests/generic/test_nn.py::test_x[cpu]"


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


NO_BACKEND_PLUGIN = """
def pytest_collection_finish(session):
    for item in session.items:
        # fixturenames is the whole closure: a fixture that takes `backend` counts too.
        print("USES-BACKEND" if "backend" in item.fixturenames else "NO-BACKEND", item.nodeid)
"""


def test_every_generic_test_takes_the_backend_fixture(tmp_path):
    """tests/generic is the matrix every tier reruns: a test that takes no backend belongs elsewhere."""
    (tmp_path / "report_backend_use.py").write_text(NO_BACKEND_PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env["TORCHLIGHT_TEST_BACKENDS"] = "cpu"
    control = "tests/library/test_device_resolution.py"  # takes no backend: the check must see that
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-p", "report_backend_use", "tests/generic", control],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("USES-", "NO-"))]
    generic = [nodeid for verdict, nodeid in lines if nodeid.startswith("tests/generic/")]
    assert len(generic) > 100, done.stdout  # the generic suite was collected
    lacking = sorted({nodeid.split("[")[0] for verdict, nodeid in lines if verdict == "NO-BACKEND"})
    assert any(nodeid.startswith(control) for nodeid in lacking), "the check must flag the control file"
    misplaced = [nodeid for nodeid in lacking if nodeid.startswith("tests/generic/")]
    assert not misplaced, (
        "tests in tests/generic that take no backend (move them to tests/library):\n" + "\n".join(misplaced)
    )


SIM_RUNTIME = ROOT / "simulator" / "runtime"
# A runtime source past this many lines is split by role (simulator/README.md, "How it works").
RUNTIME_FILE_LINES = 720


def test_every_simulator_runtime_file_is_split_by_role():
    sizes = {p.name: len(p.read_text().splitlines()) for p in sorted(SIM_RUNTIME.glob("*.[ch]*"))}
    assert "scheduler.cpp" in sizes and "host_api.h" in sizes
    big = {name: n for name, n in sizes.items() if n > RUNTIME_FILE_LINES}
    assert not big, f"split these runtime files by role (at most {RUNTIME_FILE_LINES} lines each): {big}"


def test_the_host_api_is_declared_in_host_api_h_only():
    device_header = (SIM_RUNTIME / "cuda_sim.h").read_text()
    host_header = (SIM_RUNTIME / "host_api.h").read_text()
    call = re.compile(r"\bcuda[A-Z]\w*\s*\(")
    assert call.search(host_header) is not None
    assert call.findall(device_header) == [], "cuda* host calls belong in runtime/host_api.h"
