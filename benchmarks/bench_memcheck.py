"""What memcheck costs: CPU seconds of one program under ``fast`` and under ``memcheck``.

Usage: ``python benchmarks/bench_memcheck.py [--repeat 3] [--threads 1] [WORKLOAD ...]``

``benchmarks/programs/memcheck_cost.cu`` is built in both modes (cached like every simulator
build); each workload (an argument of the program: ``vadd``, ``matmul``, ``reduce``,
``compute``) then runs as a child process, and its user plus system CPU time is taken from the
kernel's accounting (steadier than wall-clock on a shared machine). Each figure is the minimum
over ``--repeat`` runs; the ratio is memcheck's over fast's (the README's bound is about 5x).
The child gets the same sanitizer options as ``python -m simulator run --mode memcheck``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from timing_stats import cpu_seconds

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROGRAM = REPO / "benchmarks" / "programs" / "memcheck_cost.cu"
WORKLOADS = ("vadd", "matmul", "reduce", "compute")


def main(argv: list[str] | None = None) -> int:
    """Build both modes, time each workload and print the memcheck/fast ratios."""
    from simulator.build import build_program
    from simulator.sanitizer_env import RUN_ENV

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "workloads", nargs="*", default=list(WORKLOADS), metavar="WORKLOAD", help=", ".join(WORKLOADS)
    )
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--threads", default="1", help="SIMULATOR_THREADS for the runs (default 1)")
    a = p.parse_args(argv)
    unknown = sorted(set(a.workloads) - set(WORKLOADS))
    if unknown:
        p.error(f"unknown workload(s) {', '.join(unknown)}: choose from {', '.join(WORKLOADS)}")
    exes = {mode: build_program([str(PROGRAM)], mode) for mode in ("fast", "memcheck")}
    print(f"{'workload':<10}{'fast s':>9}{'memcheck s':>12}{'ratio':>8}")
    for w in a.workloads:
        best = {}
        for mode, exe in exes.items():
            env = {**os.environ, **RUN_ENV[mode], "SIMULATOR_TIMEOUT": "0", "SIMULATOR_THREADS": a.threads}
            best[mode] = min(
                cpu_seconds(exe, w, env, lambda out: "err=no error" in out) for _ in range(a.repeat)
            )
        ratio = best["memcheck"] / best["fast"]
        print(f"{w:<10}{best['fast']:>9.2f}{best['memcheck']:>12.2f}{ratio:>7.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
