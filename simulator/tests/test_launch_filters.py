"""`run --kernel-name/--kernel-name-exclude/--launch-skip/--launch-count`: the checkers judge the
launches chosen as compute-sanitizer's options choose them, the others run unchecked and still
compute what they compute (program_launch_filters.cu checks its own sums)."""

from __future__ import annotations

import re

import pytest

from simulator.launch_filter import LaunchFilter, parse_kernel_filter

from .conftest import KERNELS, line_of, mode_args, run_cli, run_findings

PROGRAM = KERNELS / "program_launch_filters.cu"


def _flagged_lines(findings: list[str]) -> set[int]:
    """The program lines the findings name (each finding's first location in the program)."""
    return {int(m.group(1)) for f in findings if (m := re.search(rf"{PROGRAM.name}:(\d+)", f))}


def _run(mode: str, *options: str, env: dict[str, str] | None = None):
    return run_cli("run", str(PROGRAM), *mode_args(mode), *options, env=env)


RACE_A, RACE_B, OOB = (line_of(PROGRAM, m) for m in ("RACE_A:", "RACE_B", "OOB:"))


@pytest.mark.parametrize(
    ("options", "flagged"),
    [
        ((), {RACE_A, RACE_B, OOB}),  # every launch: both races, and the read past the end
        (("--kernel-name", "sum"), set()),  # only the correct kernel is checked
        (("--kernel-name", "kns=race_b"), {RACE_B}),
        (("--kernel-name-exclude", "kne=race_b", "--kernel-name-exclude", "oob"), {RACE_A}),
        (("--launch-count", "1"), {RACE_A}),  # the first launch
        (("--launch-skip", "1", "--launch-count", "1"), {RACE_B}),  # the second
        (("--kernel-name", "regex=^race_[ab]$", "--launch-skip", "1"), {RACE_B}),  # the second race
        (("-s", "2", "-c", "2"), {OOB}),  # launches 3 and 4: sum (clean) and oob
    ],
)
@pytest.mark.parametrize("detector", ["racecheck", "racecheck-all"])
def test_racecheck_judges_the_chosen_launches_only(options, flagged, detector):
    if detector == "racecheck":
        flagged = flagged - {OOB}  # a read of global memory: only ThreadSanitizer's racecheck judges it
    proc = _run(detector, *options)
    # The unchecked launches still run: both sums are right in every case.
    assert "sum 1: 2016 (want 2016)" in proc.stdout and "sum 2: 2016 (want 2016)" in proc.stdout, proc.stdout
    found = run_findings(proc.stderr)
    assert _flagged_lines(found) == flagged, proc.stderr[-3000:]
    assert len(found) == len(flagged), found
    assert proc.returncode == (0 if not flagged else 66), proc.stderr[-3000:]


def test_memcheck_hides_the_reports_of_unchecked_launches_and_counts_them():
    # A checked launch's fault fails it (cudaErrorLaunchFailure): the program goes on, sees the
    # error and says so, as under compute-sanitizer.
    proc = _run("memcheck")
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1] == "WRONG"
    assert _flagged_lines(run_findings(proc.stderr)) == {OOB}
    proc = _run("memcheck", "--kernel-name-exclude", "oob")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1] == "DONE"
    assert "note: 1 sanitizer report(s) from launches that were not checked were not shown" in proc.stderr
    proc = _run("memcheck", "--kernel-name", "oob")
    assert proc.returncode == 1 and _flagged_lines(run_findings(proc.stderr)) == {OOB}


def test_synccheck_judges_the_chosen_launches_only():
    proc = _run("synccheck")
    assert proc.returncode != 0
    found = run_findings(proc.stderr)
    assert len(found) == 1 and "divergent __syncthreads in kernel 'diverge'" in found[0], found
    proc = _run("synccheck", "--kernel-name-exclude", "diverge")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[-1] == "DONE"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (("--mode", "fast", "--launch-count", "1"), "fast mode checks none"),
        (("--mode", "racecheck", "--kernel-name", "name=race_a"), "'name=race_a' is not KEY=VALUE"),
        (("--mode", "racecheck", "--kernel-name", "regex=(race"), "'(race' is not a regular expression"),
        (
            ("--mode", "memcheck", "--kernel-name", "regex=^(race_\\w+)+$"),
            "a repeated group that holds a repeat",
        ),
        (("--mode", "memcheck", "--kernel-name-exclude", "regex=(a)\\1"), "has a backreference"),
        (("--mode", "memcheck", "--kernel-name", "regex=r.*a.*c.*e.*"), "more than 3 unbounded repeats"),
        (("--mode", "racecheck", "--launch-count", "-1"), "--launch-count '-1': give a whole number"),
        (("--mode", "racecheck", "--launch-skip", "two"), "--launch-skip 'two': give a whole number"),
    ],
)
def test_bad_filters_are_refused_before_the_build(options, named):
    proc = run_cli("run", str(PROGRAM), *options)
    assert proc.returncode == 2, proc.stderr
    assert named in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert "sum 1" not in proc.stdout


def test_a_bad_variable_set_by_hand_is_named_and_every_launch_is_checked():
    proc = _run("racecheck", env={"SIMULATOR_LAUNCH_COUNT": "abc"})
    assert "SIMULATOR_LAUNCH_COUNT='abc' is not a whole number: every launch is checked" in proc.stderr
    assert {RACE_A, RACE_B} <= _flagged_lines(run_findings(proc.stderr))


def test_filter_values_parse_as_compute_sanitizer_writes_them():
    assert parse_kernel_filter("--kernel-name", "kne=a,kns=b") == [("kne", "a"), ("kns", "b")]
    assert parse_kernel_filter("--kernel-name", "kernel_name=a,kernel_substring=b") == [
        ("kne", "a"),
        ("kns", "b"),
    ]
    assert parse_kernel_filter("--kernel-name", "regex=a{1,2}") == [
        ("regex", "a{1,2}")
    ]  # the comma is the regex's
    assert parse_kernel_filter("--kernel-name", "reduce") == [("kns", "reduce")]
    env = LaunchFilter(("kne=k<32>", "regex=^r"), ("kns=x",), 2, "3").env()
    assert env == {
        "SIMULATOR_KERNEL_NAME": "kne\tk<32>\nregex\t^r",
        "SIMULATOR_KERNEL_NAME_EXCLUDE": "kns\tx",
        "SIMULATOR_LAUNCH_SKIP": "2",
        "SIMULATOR_LAUNCH_COUNT": "3",
    }
    assert LaunchFilter().env() == {} and LaunchFilter().env_for("fast") == {}
    with pytest.raises(ValueError, match="fast mode checks none"):
        LaunchFilter(count=1).env_for("fast")
