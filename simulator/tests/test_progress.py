"""Progress of long builds: plain lines in a log, one live line on a terminal, none when quiet."""

from __future__ import annotations

import io

from simulator.progress import PROGRESS_VARIABLE, Progress

from .conftest import run_cli


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_gets_one_plain_line_per_step(monkeypatch):
    monkeypatch.delenv(PROGRESS_VARIABLE, raising=False)
    log = io.StringIO()
    shown = Progress("simulator: building the runtime (memcheck, 2 compiles + link)", 3, log)
    for _ in range(3):
        shown.step()
    lines = log.getvalue().splitlines()
    assert lines[0] == "simulator: building the runtime (memcheck, 2 compiles + link): 0/3"
    assert [line.split(": ")[-1].split(" done")[0] for line in lines[1:]] == ["1/3", "2/3", "3/3"]
    assert "\r" not in log.getvalue()


def test_a_terminal_gets_one_line_rewritten_in_place(monkeypatch):
    monkeypatch.delenv(PROGRESS_VARIABLE, raising=False)
    tty = Terminal()
    shown = Progress("building", 2, tty)
    shown.step()
    assert "\n" not in tty.getvalue() and tty.getvalue().count("\r") == 2
    shown.step()
    assert tty.getvalue().endswith("building: 2/2 done, 0 s\n") and tty.getvalue().count("\n") == 1


def test_quiet_shows_nothing(monkeypatch):
    monkeypatch.setenv(PROGRESS_VARIABLE, "0")
    log = io.StringIO()
    Progress("building", 1, log).step()
    assert log.getvalue() == ""
    assert "--quiet" in run_cli("--help").stdout
