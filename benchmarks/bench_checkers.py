"""What the checkers cost: CPU seconds of three kernel shapes under each mode, over fast mode's.

``racecheck`` is racecheck as ``run --mode racecheck`` runs it (``__shared__`` memory, the
simulator's own detector); ``racecheck-all`` is ``--racecheck-memory all`` (ThreadSanitizer over
every access).

Usage: ``python benchmarks/bench_checkers.py [--repeat 3] [--threads 1] [--modes M,...] [WORKLOAD ...]``

``benchmarks/programs/checkers_cost.cu`` is built in every mode (cached like every simulator
build); each workload (an argument of the program: ``elementwise``, 4M one-element threads with
no barrier; ``treesum``, a shared-memory tree sum over 1024 blocks of 256 threads; ``histogram``,
4M global ``atomicAdd``s into 16 bins) then runs as a child process, and its user plus system
CPU time is taken from the kernel's accounting (steadier than wall-clock on a shared machine).
Each figure is the minimum over ``--repeat`` runs, and each run must print its own check's
``ok``. The child gets the same environment as ``python -m simulator run --mode MODE`` (no
launch time limit). The README's bound for memcheck is about 5x fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from timing_stats import cpu_seconds

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROGRAM = REPO / "benchmarks" / "programs" / "checkers_cost.cu"
WORKLOADS = ("elementwise", "treesum", "histogram")
CHECKERS = ("memcheck", "racecheck", "racecheck-all", "synccheck")


def main(argv: list[str] | None = None) -> int:
    """Build each mode, time each workload and print every checker's ratio to fast mode."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "workloads", nargs="*", default=list(WORKLOADS), metavar="WORKLOAD", help=", ".join(WORKLOADS)
    )
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", default="1", help="SIMULATOR_THREADS for the runs (default 1)")
    p.add_argument("--modes", default=",".join(CHECKERS), help="checkers to time (default: all)")
    a = p.parse_args(argv)
    unknown = sorted(set(a.workloads) - set(WORKLOADS))
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}: choose from {', '.join(WORKLOADS)}")
    checkers = [m for m in a.modes.split(",") if m]
    bad = sorted(set(checkers) - set(CHECKERS))
    if bad or not checkers:
        p.error(f"--modes takes a comma-separated list of {', '.join(CHECKERS)}, not {a.modes!r}")
    if a.repeat < 1:
        p.error(f"--repeat must be at least 1, not {a.repeat}")
    from simulator.build import build_program
    from simulator.run import build_mode_for
    from simulator.sanitizer_env import run_child_env

    modes = ["fast", *checkers]
    # "racecheck-all" is racecheck with --racecheck-memory all; the others are run's own modes.
    exes = {mode: build_program([str(PROGRAM)], build_mode_for(*mode.split("-"))) for mode in modes}
    widths = {m: max(13, len(m) + 4) for m in checkers}
    heads = "".join(f"{m + ' s':>{widths[m]}}{'ratio':>7}" for m in checkers)
    print(f"{'workload':<12}{'fast s':>8}" + heads)
    for w in a.workloads:
        best = {}
        for mode, exe in exes.items():
            env = {**run_child_env(mode.split("-")[0], 0), "SIMULATOR_THREADS": a.threads}
            best[mode] = min(
                cpu_seconds(exe, w, env, lambda out: out.startswith("ok")) for _ in range(a.repeat)
            )
        row = f"{w:<12}{best['fast']:>8.2f}"
        for m in checkers:
            row += f"{best[m]:>{widths[m]}.2f}{best[m] / best['fast']:>6.1f}x"
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
