"""CPU seconds of a cold build of the simulator's runtime for each build mode, in a fresh interpreter.

Usage: ``python benchmarks/bench_runtime_build.py [--rounds 3] [--modes fast,memcheck,...]
[--libraries] [--compare OTHER_CHECKOUT]``. Each round of each mode starts from an empty cache
folder holding only what every build needs first (NVIDIA's headers and the supervisor of the
compiler runs, made before the count starts) and builds ``runtime_object(mode)``: the mode's own
part and the mode-free part it links (which a cold cache builds too). ``--libraries`` adds the
simulator's cuBLAS and cuRAND for the mode. ``--together`` adds a row ("all") that builds every
mode listed into one cold cache, as a test tier that runs them all does. The CPU time counted is
that of the compilers and linkers (user + system, as the kernel accounts for waited-for
children), not the wall clock, which a shared machine's load decides. ``--compare`` runs another
checkout's rounds interleaved with this one's, so that both see the same machine state; medians
and ranges are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Run in the child: prepare what is not counted, then print the children's CPU of the build alone.
CHILD = """\
import resource, sys
from simulator import runtime_build, toolchain
assert runtime_build.__file__.startswith(sys.argv[1]), runtime_build.__file__
modes, libraries = sys.argv[2].split(","), sys.argv[3] == "1"
toolchain.toolkit_include()
runtime_build.reaper_program()
before = resource.getrusage(resource.RUSAGE_CHILDREN)
for mode in modes:
    runtime_build.runtime_object(mode)
    for name in runtime_build.LIBRARIES if libraries else ():
        runtime_build.library_object(name, mode)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
print(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
"""


def cold_build(tree: Path, mode: str, libraries: bool) -> float:
    """CPU seconds of the compilers of one cold runtime build for ``mode`` (or several, comma-separated,
    into one cache) from the checkout ``tree``."""
    with tempfile.TemporaryDirectory(prefix="bench-runtime-") as cache:
        env = dict(os.environ, SIMULATOR_CACHE=cache, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
        command = [sys.executable, "-c", CHILD, str(tree), mode, "1" if libraries else "0"]
        proc = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"the runtime build in {tree} failed:\n{proc.stderr[-2000:]}")
        return float(proc.stdout.split()[-1])


def main() -> None:
    """Print the median and range of the cold runtime build's CPU seconds per mode and checkout."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--modes", default="fast,memcheck,racecheck,synccheck,racecheck-shared")
    p.add_argument("--libraries", action="store_true", help="build cuBLAS and cuRAND too")
    p.add_argument("--together", action="store_true", help="also build every mode into one cache")
    p.add_argument("--compare", type=Path, help="another checkout to time in the same run")
    args = p.parse_args()
    trees = {"this": REPO} | ({"compare": args.compare.resolve()} if args.compare else {})
    modes = args.modes.split(",") + ([args.modes] if args.together else [])
    cpu: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for mode in modes:
            for name, tree in trees.items():
                cpu.setdefault((name, mode), []).append(cold_build(tree, mode, args.libraries))
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; CPU s (user+sys) of the compilers")
    for mode in modes:
        label = "all" if "," in mode else mode
        for name in trees:
            values = cpu[(name, mode)]
            spread = f"{min(values):.1f}-{max(values):.1f}"
            median = statistics.median(values)
            print(f"{label:<17} {name:<8} median {median:6.1f}  ({spread}, n={len(values)})")
        if args.compare:
            ratio = statistics.median(cpu[("this", mode)]) / statistics.median(cpu[("compare", mode)])
            print(f"{label:<17} this / compare = {ratio:.2f}")


if __name__ == "__main__":
    main()
