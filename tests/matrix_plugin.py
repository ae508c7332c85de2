"""pytest plugin for the test-matrix report and for splitting a run across CI runners.

Options:

* ``--matrix-json PATH``: write one record per test (op, backend, tier, outcome, skip reason)
  to PATH as JSON. The op is the ``op`` marker's argument, else the test module's name; the
  backend is the id of the ``backend`` fixture's parameter, else ``"-"``.
* ``--matrix-tier NAME``: the tier recorded (default: env ``TORCHLIGHT_TEST_TIER``, else ``cpu``).
* ``--shard I/N``: run only shard I (1-based) of N, a round-robin slice of the selected tests.

Under pytest-xdist the workers attach op and backend to each report as user properties and
the controller, which sees every report, writes the file.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

TIER_ENV = "TORCHLIGHT_TEST_TIER"
OP_KEY = "matrix_op"
BACKEND_KEY = "matrix_backend"
FORMAT_VERSION = 1
# Versions the report's header shows for each tier (each tier runs in its own environment).
REPORTED_PACKAGES = ("numpy", "numba", "numba-cuda")


def package_versions() -> dict[str, str]:
    """Installed versions of the packages the report names ("not installed" for a missing one)."""
    versions = {}
    for name in REPORTED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register --matrix-json, --matrix-tier and --shard."""
    group = parser.getgroup("torchlight-matrix", "torchlight test matrix")
    group.addoption("--matrix-json", metavar="PATH", default=None, help="write per-test matrix records here")
    group.addoption(
        "--matrix-tier", metavar="NAME", default=None, help=f"tier to record (default: ${TIER_ENV})"
    )
    group.addoption("--shard", metavar="I/N", default=None, help="run shard I (1-based) of N of the tests")


def parse_shard(text: str) -> tuple[int, int]:
    """``"2/4"`` -> ``(2, 4)``; UsageError naming the value otherwise."""
    try:
        index, total = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard {text!r}: expected I/N with integers, e.g. --shard 1/4") from None
    if total < 1 or not 1 <= index <= total:
        raise pytest.UsageError(f"--shard {text!r}: need 1 <= I <= N, e.g. --shard 1/{max(total, 1)}")
    return index, total


def pytest_configure(config: pytest.Config) -> None:
    """Check --shard early; start the recorder in the process that sees every report."""
    shard = config.getoption("shard")
    if shard:
        parse_shard(shard)
    path = config.getoption("matrix_json")
    # xdist workers carry `workerinput`; only the controller (or a plain run) writes the file.
    if path and not hasattr(config, "workerinput"):
        tier = config.getoption("matrix_tier") or os.environ.get(TIER_ENV) or "cpu"
        config.pluginmanager.register(MatrixRecorder(Path(path), tier), "torchlight-matrix-recorder")


def op_of(item: pytest.Item) -> str:
    """The matrix row of a test: its ``op`` marker, else its module's name."""
    marker = item.get_closest_marker("op")
    if marker is not None and marker.args:
        return str(marker.args[0])
    return Path(str(item.path)).stem


def backend_of(item: pytest.Item) -> str:
    """The id of the ``backend`` fixture parameter this test runs with, or ``"-"``."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "backend" not in callspec.params:
        return "-"
    value = callspec.params["backend"]
    if isinstance(value, str):
        return value
    return str(getattr(value, "name", value))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep this runner's shard (after -k/-m selection) and tag items with op and backend."""
    shard = config.getoption("shard")
    if shard:
        index, total = parse_shard(shard)
        keep = [item for n, item in enumerate(items) if n % total == index - 1]
        dropped = [item for n, item in enumerate(items) if n % total != index - 1]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    if config.getoption("matrix_json"):
        for item in items:
            item.user_properties.append((OP_KEY, op_of(item)))
            item.user_properties.append((BACKEND_KEY, backend_of(item)))


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The text a skip was given, without pytest's ``Skipped:`` prefix."""
    if hasattr(report, "wasxfail"):
        return f"xfail: {report.wasxfail}".rstrip(": ")
    longrepr = report.longrepr
    # A skip's longrepr is (path, line, message); xdist sends the tuple back as a list.
    if isinstance(longrepr, (tuple, list)) and len(longrepr) == 3:
        text = str(longrepr[2])
    else:
        text = str(longrepr or "")
    return text.removeprefix("Skipped: ").strip()


class MatrixRecorder:
    """Collects one record per test id from the reports and writes them at session end."""

    def __init__(self, path: Path, tier: str) -> None:
        self.path = path
        self.tier = tier
        self.records: dict[str, dict[str, Any]] = {}

    def _record(self, nodeid: str, props: dict[str, Any]) -> dict[str, Any]:
        if nodeid not in self.records:
            self.records[nodeid] = {
                "nodeid": nodeid,
                "op": props.get(OP_KEY) or Path(nodeid.split("::")[0]).stem,
                "backend": props.get(BACKEND_KEY) or "-",
                "tier": self.tier,
                "outcome": None,
                "reason": "",
            }
        return self.records[nodeid]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Fold the setup/call/teardown reports of one test into its outcome."""
        record = self._record(report.nodeid, dict(report.user_properties))
        if report.failed:
            if report.when == "call":
                record["outcome"] = "failed"
            elif record["outcome"] != "failed":
                record["outcome"] = "error"
            record["reason"] = record["reason"] or _summary(report)
        elif report.skipped:
            record["outcome"] = "skipped"
            record["reason"] = skip_reason(report)
        elif report.when == "call" and record["outcome"] is None:
            record["outcome"] = "passed"

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A module that fails to import, or skips as a whole, counts as one record."""
        if report.failed:
            record = self._record(report.nodeid or "<collection>", {})
            record["outcome"] = "error"
            record["reason"] = f"collection error: {_summary(report)}"
        elif report.skipped:
            record = self._record(report.nodeid or "<collection>", {})
            record["outcome"] = "skipped"
            record["reason"] = skip_reason(report)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Write the records (outcome-less ones, e.g. interrupted tests, count as errors)."""
        for record in self.records.values():
            if record["outcome"] is None:
                record["outcome"] = "error"
                record["reason"] = record["reason"] or "no outcome reported (interrupted?)"
        payload = {
            "format": FORMAT_VERSION,
            "tier": self.tier,
            "exitstatus": int(exitstatus),
            "backends_env": os.environ.get("TORCHLIGHT_TEST_BACKENDS", ""),
            "python": platform.python_version(),
            "packages": package_versions(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "results": sorted(self.records.values(), key=lambda r: r["nodeid"]),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(payload, indent=1) + "\n")
        tmp.replace(self.path)


def _summary(report: pytest.TestReport | pytest.CollectReport) -> str:
    # The crash line ("RuntimeError: setup broke") says most; xdist keeps it across processes.
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", ""):
        return str(crash.message).splitlines()[0][:300]
    lines = [line for line in str(report.longrepr or "").splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""
