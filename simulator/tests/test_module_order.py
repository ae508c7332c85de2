"""module_order.py: modules start longest first, every test kept, each module's in its order."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from simulator.tests import module_order


def _items(*ids: str) -> list:
    return [SimpleNamespace(nodeid=i) for i in ids]


def test_modules_run_longest_first_with_unknown_ones_first_and_tests_in_their_order():
    items = _items("t/a.py::x", "t/b.py::x", "t/a.py::y", "t/c.py::x", "t/new.py::x", "t/b.py::y")
    module_order.longest_first(items, {"t/a.py": 1.0, "t/b.py": 30.0, "t/c.py": 5.0})
    assert [i.nodeid for i in items] == [
        "t/new.py::x",
        "t/b.py::x",
        "t/b.py::y",
        "t/c.py::x",
        "t/a.py::x",
        "t/a.py::y",
    ]


def test_without_seconds_the_order_is_the_collections():
    ids = ["t/a.py::x", "t/b.py::x", "t/a.py::y"]
    items = _items(*ids)
    module_order.longest_first(items, {})
    assert [i.nodeid for i in items] == ["t/a.py::x", "t/a.py::y", "t/b.py::x"]


def test_the_recorder_adds_up_each_modules_phases(tmp_path):
    recorder = module_order.Recorder(tmp_path / "seconds.json")
    for nodeid, duration in (("t/a.py::x", 1.0), ("t/b.py::x", 0.5), ("t/a.py::y", 2.25)):
        recorder.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=duration))
    recorder.pytest_sessionfinish()
    assert json.loads((tmp_path / "seconds.json").read_text()) == {"t/a.py": 3.2, "t/b.py": 0.5}
    assert module_order.load_seconds(tmp_path / "seconds.json") == {"t/a.py": 3.2, "t/b.py": 0.5}


def test_an_unreadable_seconds_file_names_itself_and_the_fix(tmp_path):
    bad = tmp_path / "seconds.json"
    bad.write_text("{not json")
    with pytest.raises(pytest.UsageError, match=r"seconds\.json: cannot read .*record it again"):
        module_order.load_seconds(bad)


@pytest.mark.skipif(
    not module_order.SECONDS.is_file(),
    reason="no module_seconds.json recorded yet (a run of the tier with SIMULATOR_RECORD_MODULE_SECONDS)",
)
def test_the_checked_in_seconds_name_modules_of_this_folder():
    seconds = module_order.load_seconds()
    assert seconds
    folder = module_order.SECONDS.parent
    root = folder.parent.parent
    assert all((root / name).is_file() for name in seconds), "a module named there is gone: record again"
