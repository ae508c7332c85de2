"""The test matrix: a ``backend`` fixture per name in ``TORCHLIGHT_TEST_BACKENDS``, the tier knob,
and the one marker for tests that need a particular backend.

* ``TORCHLIGHT_TEST_BACKENDS``: comma list of backend names (default ``cpu``) from the backend
  registry, ``torchlight.backends.registry.BACKENDS`` (a new backend joins the matrix with its
  registry entry). A name that was asked for but cannot be built stops the run before any
  test, with the reason.
* ``TORCHLIGHT_TEST_TIER``: ``cpu`` (default), ``cudasim`` or ``gpu``; selects the hypothesis
  profile and the shape limits in ``tl_testing.LIMITS`` (also served by the ``limits`` fixture).
* ``@pytest.mark.requires_backend(name, reason=...)``: the test needs backend ``name`` to build
  here, and is skipped with ``reason`` plus the registry's why-not where it does not.
  ``installed=True`` needs only the backend's packages (for tests of what happens when the
  backend cannot run). A ``requires_backend`` without a reason is a collection error.
* The numba twin compiles what it runs: a test during which the twin of the matrix ran an op on
  its numpy path because numba could not compile the op's kernel fails, naming the op (the
  twin's own fallback tests use instances of their own).

The folders: ``generic/`` (the device-generic suite every tier runs: only tests that take
``backend``, which ``harness/test_layout.py`` checks), ``backends/<name>/``
(one backend's internals), ``library/`` (backend-independent library behaviour) and
``harness/`` (the repository itself); this file and ``tl_testing.py`` serve them all, and
``module_workers.py`` keeps each module with a costly module-scoped fixture on one xdist worker.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

try:
    import tl_testing
except ValueError as err:  # an unknown TORCHLIGHT_TEST_TIER: stop before collecting anything
    raise pytest.UsageError(str(err)) from None

from torchlight.backends.registry import BACKENDS

BACKENDS_ENV = "TORCHLIGHT_TEST_BACKENDS"
# The simulator runtime's progress lines (stderr) would mix into the output tests compare.
os.environ.setdefault("SIMULATOR_PROGRESS", "0")
MARKER = "requires_backend"

# The harness plugin records the matrix report; it is optional so this suite also runs alone.
# module_workers keeps each module with a costly module-scoped fixture on one xdist worker.
pytest_plugins = ["module_workers"]
if (Path(__file__).parent / "matrix_plugin.py").exists():
    pytest_plugins.append("matrix_plugin")

_BUILT: dict[str, object] = {}
_WHY_NOT: dict[tuple[str, bool], str | None] = {}


def requested_backends() -> list[str]:
    """Backend names from ``TORCHLIGHT_TEST_BACKENDS``; UsageError naming an unknown one."""
    raw = os.environ.get(BACKENDS_ENV, "")
    names = [n.strip() for n in raw.split(",") if n.strip()] or ["cpu"]
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise pytest.UsageError(
            f"{BACKENDS_ENV}={raw!r} names unknown backend(s) {unknown}: "
            f"accepted names are {', '.join(BACKENDS)}"
        )
    return list(dict.fromkeys(names))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(name, reason, installed=False): needs backend `name` (a registry name) to build "
        "here, or with installed=True only its packages; skipped with the reason otherwise",
    )
    tl_testing.register_profiles()
    settings.load_profile(tl_testing.LIMITS.tier)
    for name in requested_backends():
        try:
            _BUILT[name] = BACKENDS[name].build()
        except Exception as err:
            raise pytest.UsageError(
                f"backend {name!r} was requested by {BACKENDS_ENV} but could not be built: "
                f"{type(err).__name__}: {err}"
            ) from err


def pytest_report_header(config: pytest.Config) -> str:
    return f"torchlight tier: {tl_testing.LIMITS.tier}; backends: {', '.join(_BUILT)}"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        names = list(_BUILT)
        metafunc.parametrize("backend", names, ids=names, indirect=True, scope="session")


def _marker_backend(item: pytest.Item, marker: pytest.Mark) -> tuple[str, str, bool]:
    """``(name, reason, installed)`` of one ``requires_backend`` marker; UsageError when malformed."""
    where = f"{item.nodeid}: @pytest.mark.{MARKER}"
    if len(marker.args) != 1 or marker.args[0] not in BACKENDS:
        names = ", ".join(BACKENDS)
        raise pytest.UsageError(f"{where} takes one backend name from {names}, got {marker.args}")
    reason = marker.kwargs.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise pytest.UsageError(f"{where}({marker.args[0]!r}) needs reason='why the test needs it'")
    unknown = set(marker.kwargs) - {"reason", "installed"}
    if unknown:
        raise pytest.UsageError(f"{where} got unknown keyword(s) {sorted(unknown)}: use reason=, installed=")
    return marker.args[0], reason, bool(marker.kwargs.get("installed", False))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for marker in item.iter_markers(MARKER):
            _marker_backend(item, marker)


def why_not(name: str, installed: bool = False) -> str | None:
    """Why backend ``name`` cannot be used here (None when it can), cached per process."""
    key = (name, installed)
    if key not in _WHY_NOT:
        entry = BACKENDS[name]
        if name in _BUILT:
            _WHY_NOT[key] = None
        elif installed:
            _WHY_NOT[key] = entry.missing_packages()
        else:
            _WHY_NOT[key] = entry.unavailable_reason()
    return _WHY_NOT[key]


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers(MARKER):
        name, reason, installed = _marker_backend(item, marker)
        problem = why_not(name, installed)
        if problem:
            pytest.skip(f"{reason}; backend {name!r} is unavailable here: {problem}")


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest):
    """The backend instance for this matrix column (param and id: its name)."""
    return _BUILT[request.param]


@pytest.fixture(autouse=True)
def _twin_compiles_what_it_runs():
    """Fail a test during which the matrix's numba twin fell back to numpy for an op."""
    twin = _BUILT.get("numba")
    before = set(getattr(twin, "fallbacks", ()))
    yield
    if twin is not None:
        tl_testing.fail_on_new_fallbacks(twin, before)


@pytest.fixture(scope="session")
def limits() -> tl_testing.Limits:
    """Shape limits and example counts of the selected tier."""
    return tl_testing.LIMITS
