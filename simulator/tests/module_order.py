"""The order this folder's test modules start in: the longest first, from measured seconds.

The sanitize tier runs ``--dist loadscope`` on two workers: each worker takes whole modules, and
pytest-xdist hands them out by test count, largest first, so modules of one or two slow tests (a
CUB or Thrust build under memcheck) come last and one worker finishes them alone while the other
waits. Handing out the modules that take longest first (longest processing time first) leaves only
short modules for the end. ``module_seconds.json`` holds each module's seconds (setup, call and
teardown of its tests) from a run of the tier; a module it does not name (a new one) starts first,
as the cautious guess. Only the order changes: every test runs, in its module's own order.

``SIMULATOR_RECORD_MODULE_SECONDS=PATH`` writes a run's seconds to ``PATH`` (the controller's
view under xdist), the way ``module_seconds.json`` is refreshed.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

SECONDS = Path(__file__).resolve().with_name("module_seconds.json")
RECORD_VARIABLE = "SIMULATOR_RECORD_MODULE_SECONDS"


def module_of(nodeid: str) -> str:
    """The module part of a test id (``simulator/tests/test_x.py::test_y[a]`` gives the path)."""
    return nodeid.split("::", 1)[0]


def load_seconds(path: Path = SECONDS) -> dict[str, float]:
    """Seconds by module (its path in a test id) as ``path`` records them; {} without the file."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(
            f"{path}: cannot read the modules' seconds ({exc}); delete it or record it again"
        ) from None
    return {str(k): float(v) for k, v in data.items()}


def longest_first(items: list[pytest.Item], seconds: dict[str, float]) -> None:
    """Reorder ``items`` in place, whole modules by ``seconds`` descending, unknown modules first,
    each module's tests in their own order (the sort is stable)."""
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(module_of(item.nodeid), len(first_seen))

    def key(item: pytest.Item) -> tuple[float, int]:
        module = module_of(item.nodeid)
        return (-seconds.get(module, float("inf")), first_seen[module])

    items.sort(key=key)


class Recorder:
    """Adds up each module's seconds from the test reports and writes them at the end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seconds: dict[str, float] = defaultdict(float)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count a test phase's duration to its module."""
        self.seconds[module_of(report.nodeid)] += report.duration

    @pytest.hookimpl
    def pytest_sessionfinish(self) -> None:
        """Write the modules' seconds, longest first, rounded to a tenth."""
        rows = sorted(self.seconds.items(), key=lambda kv: -kv[1])
        self.path.write_text(json.dumps({k: round(v, 1) for k, v in rows}, indent=1) + "\n")


def configure(config: pytest.Config) -> None:
    """Take the order over from xdist's count-based one when seconds are known; start recording when asked."""
    if load_seconds() and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    target = os.environ.get(RECORD_VARIABLE)
    if target and not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        config.pluginmanager.register(Recorder(Path(target)), "simulator-module-seconds")
