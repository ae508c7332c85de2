"""Progress of long builds: plain lines in a log, one live line on a terminal, none when quiet."""

from __future__ import annotations

import io

import simulator.__main__ as cli
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


def test_quiet_before_the_command_keeps_the_programs_arguments(monkeypatch):
    monkeypatch.delenv(PROGRESS_VARIABLE, raising=False)
    seen = []
    monkeypatch.setattr(cli, "_command", lambda args, program_args: seen.append((args, program_args)) or 0)
    assert cli.main(["-q", "run", "p.cu", "--mode", "fast", "--", "ARG", "-q", "--mode"]) == 0
    args, program_args = seen[0]
    assert (args.quiet, args.command, args.mode, args.sources) == (True, "run", "fast", ["p.cu"])
    assert program_args == ["ARG", "-q", "--mode"]
    assert cli.os.environ[PROGRESS_VARIABLE] == "0"


def test_a_quiet_run_passes_its_arguments_to_the_program(tmp_path):
    src = tmp_path / "echo_args.cu"
    src.write_text(
        "#include <cstdio>\n"
        "__global__ void noop() {}\n"
        "int main(int argc, char** argv) {\n"
        "    noop<<<1, 1>>>();\n"
        "    cudaDeviceSynchronize();\n"
        '    for (int i = 1; i < argc; ++i) std::printf("arg %s\\n", argv[i]);\n'
        "    return 0;\n"
        "}\n"
    )
    proc = run_cli("-q", "run", str(src), "--mode", "fast", "--", "ARG", "--mode")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "arg ARG\narg --mode\n"
    assert "building" not in proc.stderr, proc.stderr
