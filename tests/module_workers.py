"""pytest-xdist: the test modules whose module-scoped fixture is costly run on one worker each,
the work that takes longest starts first, and each worker does its linear algebra on one thread.

Under ``-n N`` with xdist's default ``--dist load``, a module's tests are spread over the
workers, and a module-scoped fixture runs once in every worker that gets one of them: the README
check's fresh virtualenv and install, or the pip install of the checkout, twice on two workers.
This plugin hands such a module out whole (xdist's ``loadscope`` scheduler with every other test
its own unit). ``--dist loadgroup`` would do it with marks, but the xdist release the tiers
install cannot rename the test ids it groups by under pytest 9.

The scheduler hands units out one at a time as workers run dry, in the workers' collection
order; each worker sorts its collection by the units' measured seconds (``unit_seconds.json``),
longest first, so that a long test never starts last while the other workers wait. A listed
module that has no record yet counts as the longest (the cautious guess); any other unit without
one (under a second when it was measured, or new) keeps its place after them. Only the order
changes: every test runs. ``TORCHLIGHT_RECORD_UNIT_SECONDS=PATH`` merges a run's seconds into
``PATH``, keeping the larger of two records of a unit (a module the cpu and kernels tiers both
run): ``unit_seconds.json`` is refreshed by deleting it and running each tier once with it.

The tiers start one worker per CPU, so a worker whose BLAS (numpy's and scipy's OpenBLAS) starts
a thread per CPU too oversubscribes the machine: its threads spin waiting for each other while the
other workers hold the CPUs (the README's training example took 58 s instead of 15 s that way).
Under xdist, ``OPENBLAS_NUM_THREADS`` is 1 unless the caller set it.

Only runs with ``--dist load`` (the default with ``-n``) take this schedule; others keep theirs.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

SECONDS = Path(__file__).resolve().with_name("unit_seconds.json")
RECORD_VARIABLE = "TORCHLIGHT_RECORD_UNIT_SECONDS"
# Units faster than this are not recorded: their order hardly matters and the file stays short.
RECORD_THRESHOLD_S = 1.0
BLAS_THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"

# Test module (path from the repository root) -> its costly module-scoped fixture.
ONE_WORKER_MODULES: dict[str, str] = {
    "tests/harness/test_readme_blocks.py": "sandbox: a fresh virtualenv with the README's install",
    "tests/library/test_build_kernels.py": "installed: a fresh virtualenv with the checkout pip-installed",
    "tests/backends/numba/test_numba_twin.py": "bodies: every kernel body compiled by numba",
    "tests/backends/cuda_c/test_cuda_c_library.py": "two_block_grid: the kernels built by the simulator",
    "tests/harness/test_mutants.py": "cuda_source: a CUDA snippet compiled and parsed by libclang",
    "tests/library/test_shared_object.py": "library: a shared library compiled with cc",
    "tests/library/test_checkpoint_bounds.py": "bomb: a 2 MB archive that inflates to 2 GiB",
    "tests/backends/cuda_c/test_kernel_library_elf_check.py": "library: a shared library compiled with cc",
}


def work_unit(nodeid: str) -> str:
    """What xdist hands out with the test ``nodeid``: its module if listed above, else the test."""
    module = nodeid.split("::", 1)[0]
    return module if module in ONE_WORKER_MODULES else nodeid


def load_seconds(path: Path = SECONDS) -> dict[str, float]:
    """Seconds by work unit as ``path`` records them; {} without the file."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(
            f"{path}: cannot read the work units' seconds ({exc}); delete it or record it again"
        ) from None
    return {str(k): float(v) for k, v in data.items()}


def longest_first(items: list[pytest.Item], seconds: dict[str, float]) -> None:
    """Reorder ``items`` in place: units by ``seconds`` descending, a listed module without a
    record first, other unrecorded units after the recorded ones in their own order (stable)."""

    def key(item: pytest.Item) -> float:
        unit = work_unit(item.nodeid)
        unknown = float("inf") if unit in ONE_WORKER_MODULES else 0.0
        return -seconds.get(unit, unknown)

    items.sort(key=key)


class Recorder:
    """Adds up each work unit's seconds from the test reports and merges them into a file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count a test phase's duration to its unit."""
        self.seconds[work_unit(report.nodeid)] += report.duration

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        """Merge this run's units into the file, each at the most any run recorded for it."""
        merged = load_seconds(self.path)
        for unit, took in self.seconds.items():
            # A module two tiers run (the README check) takes the longer tier's seconds.
            if took >= RECORD_THRESHOLD_S:
                merged[unit] = max(merged.get(unit, 0.0), round(took, 1))
        rows = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))
        self.path.write_text(json.dumps(dict(rows), indent=1) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    """One BLAS thread per worker when xdist starts workers; record the units' seconds when asked."""
    if hasattr(config, "workerinput"):
        return
    # The workers inherit the controller's environment when xdist starts them, after this hook.
    if config.getoption("numprocesses", None):
        os.environ.setdefault(BLAS_THREADS_VARIABLE, "1")
    target = os.environ.get(RECORD_VARIABLE)
    if target:
        config.pluginmanager.register(Recorder(Path(target)), "torchlight-unit-seconds")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the longest units first (``unit_seconds.json``); the rest keep their order."""
    if not hasattr(config, "workerinput"):
        return
    longest_first(items, load_seconds())


# tryfirst: xdist's own implementation answers with its scheduler otherwise.
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's loadscope scheduler over ``work_unit``, for runs with ``--dist load``."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    # The workers' collection order (longest first), not xdist's most-tests-first.
    config.option.loadscopereorder = False

    class ModuleFixtureScheduling(LoadScopeScheduling):
        """Whole modules for ONE_WORKER_MODULES, single tests otherwise."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ModuleFixtureScheduling(config, log)
