"""The test matrix: a ``backend`` fixture per name in ``TORCHLIGHT_TEST_BACKENDS``, and the tier knob.

* ``TORCHLIGHT_TEST_BACKENDS``: comma list of backend names (default ``cpu``); a new backend
  joins the matrix with one entry in ``BACKEND_BUILDERS``. A name that was asked for but cannot
  be built stops the run before any test, with the reason.
* ``TORCHLIGHT_TEST_TIER``: ``cpu`` (default), ``cudasim`` or ``gpu``; selects the hypothesis
  profile and the shape limits in ``tl_testing.LIMITS`` (also served by the ``limits`` fixture).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

try:
    import tl_testing
except ValueError as err:  # an unknown TORCHLIGHT_TEST_TIER: stop before collecting anything
    raise pytest.UsageError(str(err)) from None

BACKENDS_ENV = "TORCHLIGHT_TEST_BACKENDS"

# The harness plugin records the matrix report; it is optional so this suite also runs alone.
pytest_plugins = ["matrix_plugin"] if (Path(__file__).parent / "matrix_plugin.py").exists() else []


def _cpu():
    from torchlight.backends.cpu import cpu_backend

    return cpu_backend()


def _numba():
    from torchlight.backends.cuda import numba_backend

    return numba_backend()


def _cuda():
    from torchlight.backends.cuda import CudaBackend, CudaProvider

    return CudaBackend(provider=CudaProvider())


def _cuda_c():
    from torchlight.backends.cuda import CudaBackend, CudaCKernelProvider

    return CudaBackend(provider=CudaCKernelProvider())


BACKEND_BUILDERS: dict[str, Callable[[], object]] = {
    "cpu": _cpu,
    "numba": _numba,
    "cuda": _cuda,
    "cuda-c": _cuda_c,
}

_BUILT: dict[str, object] = {}


def requested_backends() -> list[str]:
    """Backend names from ``TORCHLIGHT_TEST_BACKENDS``; UsageError naming an unknown one."""
    raw = os.environ.get(BACKENDS_ENV, "")
    names = [n.strip() for n in raw.split(",") if n.strip()] or ["cpu"]
    unknown = [n for n in names if n not in BACKEND_BUILDERS]
    if unknown:
        raise pytest.UsageError(
            f"{BACKENDS_ENV}={raw!r} names unknown backend(s) {unknown}: "
            f"accepted names are {', '.join(BACKEND_BUILDERS)}"
        )
    return list(dict.fromkeys(names))


def pytest_configure(config: pytest.Config) -> None:
    tl_testing.register_profiles()
    settings.load_profile(tl_testing.LIMITS.tier)
    for name in requested_backends():
        try:
            _BUILT[name] = BACKEND_BUILDERS[name]()
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


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest):
    """The backend instance for this matrix column (param and id: its name)."""
    return _BUILT[request.param]


@pytest.fixture(scope="session")
def limits() -> tl_testing.Limits:
    """Shape limits and example counts of the selected tier."""
    return tl_testing.LIMITS
