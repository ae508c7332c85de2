"""tests/module_workers.py: the longest work units first, their recorded seconds, one BLAS thread
per xdist worker."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

import module_workers as mw  # noqa: E402

LISTED = next(iter(mw.ONE_WORKER_MODULES))


def _items(*nodeids: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_units_start_longest_first_and_unrecorded_ones_keep_their_order():
    items = _items(
        "tests/a.py::fast",
        "tests/a.py::slow",
        f"{LISTED}::test_one",
        "tests/b.py::new",
        "tests/a.py::middle",
        f"{LISTED}::test_two",
    )
    mw.longest_first(items, {"tests/a.py::slow": 9.0, "tests/a.py::middle": 3.0})
    # The listed module has no record: it counts as the longest and stays whole, in its order.
    assert [i.nodeid for i in items] == [
        f"{LISTED}::test_one",
        f"{LISTED}::test_two",
        "tests/a.py::slow",
        "tests/a.py::middle",
        "tests/a.py::fast",
        "tests/b.py::new",
    ]


def test_a_recorded_listed_module_takes_its_place_by_its_seconds():
    items = _items("tests/a.py::slow", f"{LISTED}::test_one", "tests/a.py::fast")
    mw.longest_first(items, {LISTED: 5.0, "tests/a.py::slow": 8.0})
    assert [i.nodeid for i in items] == ["tests/a.py::slow", f"{LISTED}::test_one", "tests/a.py::fast"]


def test_the_recorder_adds_phases_per_unit_and_merges_into_the_file(tmp_path):
    path = tmp_path / "seconds.json"
    path.write_text(json.dumps({"tests/old.py::kept": 4.0, "tests/a.py::slow": 5.0, "tests/a.py::grew": 1.0}))
    recorder = mw.Recorder(path)
    for nodeid, took in (
        ("tests/a.py::slow", 1.5),
        ("tests/a.py::slow", 2.0),  # setup and call of one test
        ("tests/a.py::grew", 2.5),
        (f"{LISTED}::test_one", 0.75),
        (f"{LISTED}::test_two", 0.75),
        ("tests/a.py::fast", 0.25),
    ):
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=took))
    recorder.pytest_sessionfinish()
    # Each unit keeps its larger record, longest first; one under the threshold adds nothing.
    recorded = json.loads(path.read_text())
    assert list(recorded.items()) == [
        ("tests/a.py::slow", 5.0),
        ("tests/old.py::kept", 4.0),
        ("tests/a.py::grew", 2.5),
        (LISTED, 1.5),
    ]


def test_a_broken_seconds_file_is_named_with_the_fix(tmp_path):
    path = tmp_path / "seconds.json"
    path.write_text("{not json")
    with pytest.raises(pytest.UsageError, match="seconds.json.*delete it or record it again"):
        mw.load_seconds(path)
    assert mw.load_seconds(tmp_path / "absent.json") == {}


def test_every_recorded_unit_names_a_test_module_that_exists():
    seconds = mw.load_seconds()
    assert seconds, f"{mw.SECONDS.name} records no unit: run a tier with {mw.RECORD_VARIABLE}"
    for unit in seconds:
        module = unit.split("::", 1)[0]
        assert (ROOT / module).is_file(), f"{mw.SECONDS.name} names {unit}, whose module is gone"


def _config(numprocesses: int | None, worker: bool = False) -> SimpleNamespace:
    config = SimpleNamespace(
        getoption=lambda name, default=None: numprocesses if name == "numprocesses" else default,
        pluginmanager=SimpleNamespace(register=lambda plugin, name: None),
    )
    if worker:
        config.workerinput = {}
    return config


@pytest.mark.parametrize(
    ("numprocesses", "given", "expected"), [(2, None, "1"), (2, "3", "3"), (None, None, None)]
)
def test_xdist_workers_get_one_blas_thread_unless_the_caller_chose(
    monkeypatch, numprocesses, given, expected
):
    monkeypatch.delenv(mw.RECORD_VARIABLE, raising=False)
    if given is None:
        monkeypatch.delenv(mw.BLAS_THREADS_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(mw.BLAS_THREADS_VARIABLE, given)
    mw.pytest_configure(_config(numprocesses))
    assert os.environ.get(mw.BLAS_THREADS_VARIABLE) == expected


def test_a_worker_leaves_the_environment_to_the_controller(monkeypatch):
    monkeypatch.delenv(mw.RECORD_VARIABLE, raising=False)
    monkeypatch.delenv(mw.BLAS_THREADS_VARIABLE, raising=False)
    mw.pytest_configure(_config(2, worker=True))
    assert mw.BLAS_THREADS_VARIABLE not in os.environ
