"""Benchmarks report min, median and spread over their rounds and flag numbers too spread to trust."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from timing_stats import WIDE_SPREAD, Timing, time_interleaved, trust_note  # noqa: E402


def test_min_median_and_spread():
    t = Timing((0.010, 0.012, 0.011, 0.020))
    assert t.min == 0.010 and t.median == pytest.approx(0.0115)
    assert t.spread == pytest.approx((0.020 - 0.010) / 0.0115)
    assert t.wide and t.spread_text().endswith("!")


def test_agreeing_rounds_are_trusted_and_ratios_use_minimums():
    steady = Timing((1.00, 1.02, 1.01))
    other = Timing((2.00, 2.04, 2.02))
    assert not steady.wide and steady.spread_text() == "2%"
    assert other.ratio_text(steady, "x") == "2.00x"
    noisy = Timing((1.0, 3.0, 8.0))
    assert noisy.ratio_text(steady) == "1.00 !" and steady.ratio_text(noisy) == "1.00 !"


def test_too_few_rounds_cannot_be_trusted():
    assert Timing((1.0, 1.0)).wide


def test_trust_note_counts_the_flagged_numbers():
    steady, noisy = Timing((1.0, 1.01, 1.0)), Timing((1.0, 2.0, 1.5))
    assert "agree within 25%" in trust_note([steady, steady])
    note = trust_note([steady, noisy, noisy])
    assert note.startswith("! 2 of 3 numbers") and "do not trust" in note
    assert f"{WIDE_SPREAD:.0%}" in note


def test_interleaved_rounds_give_one_sample_per_round():
    calls = []
    timings = time_interleaved([lambda: calls.append("a"), lambda: calls.append("b")], 4, 1e-9)
    assert [len(t.samples) for t in timings] == [4, 4]
    with pytest.raises(ValueError, match="repeat must be at least 1, got 0"):
        time_interleaved([lambda: None], 0, 1e-9)


def test_train_step_benchmark_prints_min_median_spread_and_a_verdict():
    args = ["--repeat", "3", "--batch", "4", "--dim", "16", "--heads", "2", "--layers", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_train_step.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"min ms\s+median ms\s+spread", done.stdout)
    assert re.search(r"torchlight fused\s+[\d.]+\s+[\d.]+\s+\d+%", done.stdout)
    assert "agree within 25%" in done.stdout or "do not trust" in done.stdout


def test_benchmarks_refuse_fewer_than_three_rounds():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_train_step.py"), "--repeat", "2"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 2 and "at least 3 steps" in done.stderr
