"""Timing rounds for the benchmark scripts: min, median and spread, and whether to trust them.

A benchmark number on a shared machine is only as good as its repeats agree. Every script
times several rounds and reports the minimum (the least disturbed run), the median, and the
spread ``(max - min) / median``; a spread above ``WIDE_SPREAD`` is flagged, because then the
machine was busy and a second run may give a very different number.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

# Above this spread the rounds disagree too much for the number to be trusted.
WIDE_SPREAD = 0.25
FLAG = "!"


@dataclass(frozen=True)
class Timing:
    """Seconds per call of each timed round."""

    samples: tuple[float, ...]

    @property
    def min(self) -> float:
        """The fastest round: the least disturbed by other processes."""
        return min(self.samples)

    @property
    def median(self) -> float:
        """The middle round."""
        return statistics.median(self.samples)

    @property
    def spread(self) -> float:
        """``(max - min) / median``: 0 when every round agrees."""
        median = self.median
        return (max(self.samples) - self.min) / median if median > 0 else 0.0

    @property
    def wide(self) -> bool:
        """True when the rounds disagree by more than ``WIDE_SPREAD``."""
        return len(self.samples) < 3 or self.spread > WIDE_SPREAD

    def spread_text(self) -> str:
        """The spread in percent, flagged when too wide to trust."""
        return f"{self.spread:.0%}" + (f" {FLAG}" if self.wide else "")

    def ratio_text(self, reference: Timing, unit: str = "") -> str:
        """Ratio of minimums to ``reference`` (then ``unit``), flagged when either is too spread."""
        flag = f" {FLAG}" if self.wide or reference.wide else ""
        return f"{self.min / reference.min:.2f}{unit}{flag}"


def calibrate(fn: Callable[[], object], round_seconds: float) -> int:
    """Calls per round so that one round lasts about ``round_seconds`` (after a warm-up call)."""
    fn()  # warm-up: pays JIT compilation and first-touch allocation
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(round_seconds / once))


def time_interleaved(fns: Sequence[Callable[[], object]], repeat: int, round_seconds: float) -> list[Timing]:
    """Time ``repeat`` rounds of each fn, interleaved per round so that load hits every fn alike."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    numbers = [calibrate(fn, round_seconds) for fn in fns]
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, (fn, number) in enumerate(zip(fns, numbers)):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            samples[i].append((time.perf_counter() - start) / number)
    return [Timing(tuple(s)) for s in samples]


def trust_note(timings: Sequence[Timing]) -> str:
    """One line: how many numbers are flagged as too spread to trust, and what to do."""
    wide = sum(t.wide for t in timings)
    if not wide:
        return f"every number's rounds agree within {WIDE_SPREAD:.0%} (spread = (max - min) / median)"
    return (
        f"{FLAG} {wide} of {len(timings)} numbers have rounds that disagree by more than {WIDE_SPREAD:.0%} "
        "(spread = (max - min) / median, or fewer than 3 rounds): the machine was busy; do not trust "
        "them: rerun on a quiet machine or with a larger --repeat"
    )


def cpu_seconds(exe: Path, workload: str, env: dict[str, str], succeeded: Callable[[str], bool]) -> float:
    """User plus system CPU seconds of ``exe workload``; stops the script when it fails.

    ``succeeded`` judges the program's standard output (each program prints its own verdict).
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([str(exe), workload], env=env, capture_output=True, text=True, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or not succeeded(proc.stdout):
        raise SystemExit(
            f"{exe.name} {workload} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr[-2000:]}"
        )
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
