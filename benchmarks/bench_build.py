"""Seconds to build a new small CUDA program with the simulator, in a fresh interpreter each time.

Usage: ``python benchmarks/bench_build.py [--rounds 5] [--mode fast] [--source FILE.cu]
[--compare OTHER_CHECKOUT]``. Each round builds the source under a new name with a new comment
(so no cached object matches) in a process of its own, as ``python -m simulator run`` would:

* **warm**: the cache folder holds what any earlier build left (the runtime, NVIDIA's headers,
  the runtime prelude's precompiled header, symbol listings): the usual case, one new program
  after another;
* **cold**: the same, less what a build reuses from the programs before it (the precompiled
  header and the symbol listings, removed before the round): the first program after the
  runtime is built.
* **again**: one program built again with nothing changed (its object cached, written more
  than ``SETTLE_S`` seconds before its first build, so that its manifest lets the build skip the
  preprocessor: ``simulator/source_manifest.py``): a rebuild, as a test suite or a script that
  runs the same program repeatedly does.

The runtime is built once per checkout before the rounds (a minute or more, not counted).
``--compare`` times another checkout (e.g. a worktree of main) in the same run, its rounds
interleaved with this one's, so that both see the same load; each checkout has its own cache
folder under ``--cache``. Medians and the spread (min-max) are printed, of the wall clock and of
the CPU time of the build's processes; on a loaded machine read the CPU time and the ratios of
medians, which the load scales alike, rather than the wall-clock seconds (the load average is
printed with them).
"""

from __future__ import annotations

import argparse
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from simulator.host import cpu_count  # noqa: E402
from simulator.source_manifest import SETTLE_S  # noqa: E402

SMALL = """\
#include <cstdio>
__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
int main() {
    const int n = 1000;
    float *a, *b, *c;
    cudaMallocManaged(&a, n * sizeof(float));
    cudaMallocManaged(&b, n * sizeof(float));
    cudaMallocManaged(&c, n * sizeof(float));
    for (int i = 0; i < n; ++i) { a[i] = i; b[i] = 2 * i; }
    add<<<(n + 255) / 256, 256>>>(a, b, c, n);
    cudaDeviceSynchronize();
    printf("%g %g\\n", c[1], c[n - 1]);
    return 0;
}
"""

BUILD = (
    "import sys; from simulator import build; "
    "assert build.__file__.startswith(sys.argv[3]), build.__file__; "
    "build.build_program([sys.argv[1]], sys.argv[2])"
)
REUSED = ("prelude-", "symbols-")  # what a cold round removes: reused from earlier programs


def new_source(source: str, work: Path) -> Path:
    """``source`` under a new name (and with a new comment) in ``work``."""
    tag = secrets.token_hex(4)
    src = work / f"prog_{tag}.cu"
    src.write_text(f"{source}\n// {tag}\n")
    return src


def build_once(tree: Path, cache: Path, src: Path, mode: str) -> tuple[float, float]:
    """Seconds of one build of ``src`` in a new interpreter from ``tree``: wall clock, and CPU
    time of that process and the compilers it ran."""
    env = dict(os.environ, SIMULATOR_CACHE=str(cache), PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    command = [sys.executable, "-c", BUILD, str(src), mode, str(tree)]
    proc = subprocess.run(command, cwd=tree, env=env, capture_output=True)
    took = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
    if proc.returncode != 0:
        sys.exit(f"the build in {tree} failed:\n{proc.stderr.decode(errors='replace')[-2000:]}")
    return took, cpu


def forget_reused(cache: Path) -> None:
    """Remove what a build reuses from the programs before it (see the module's docstring)."""
    for p in cache.iterdir():
        if p.name.startswith(REUSED):
            p.unlink()


def summary(times: list[float]) -> str:
    return f"{statistics.median(times):6.2f} s  ({min(times):.2f}-{max(times):.2f}, n={len(times)})"


def main() -> None:
    """Print the median and spread of cold and warm builds for each checkout."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--mode", default="fast")
    p.add_argument("--source", type=Path, help="a small .cu program (default: a vector add)")
    p.add_argument("--compare", type=Path, help="another checkout to time in the same run")
    p.add_argument(
        "--cache", type=Path, help="where the checkouts' cache folders go (default: a temporary one)"
    )
    args = p.parse_args()
    source = args.source.read_text() if args.source else SMALL
    trees = {"this": REPO} | ({"compare": args.compare.resolve()} if args.compare else {})
    base = args.cache or Path(tempfile.mkdtemp(prefix="bench-build-"))
    work = Path(tempfile.mkdtemp(prefix="bench-build-src-"))
    caches = {name: base / f"cache-{name}" for name in trees}
    # The program built again each round, in a folder of its own that stays unchanged.
    again = new_source(source, Path(tempfile.mkdtemp(prefix="bench-build-again-")))
    time.sleep(SETTLE_S + 0.5)
    for name, tree in trees.items():
        print(f"{name}: {tree} (cache {caches[name]}); building its runtime first", flush=True)
        build_once(tree, caches[name], new_source(source, work), args.mode)
        build_once(tree, caches[name], again, args.mode)
    times: dict[tuple[str, str], list[float]] = {}
    cpus: dict[tuple[str, str], list[float]] = {}
    kinds = ("cold", "warm", "again")
    for _ in range(args.rounds):
        for name, tree in trees.items():
            forget_reused(caches[name])
            for kind in kinds:
                src = again if kind == "again" else new_source(source, work)
                took, cpu = build_once(tree, caches[name], src, args.mode)
                times.setdefault((name, kind), []).append(took)
                cpus.setdefault((name, kind), []).append(cpu)
    load = os.getloadavg()
    print(f"mode {args.mode}, {cpu_count()} CPUs, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(f"{'':<14} {'wall clock':<28} CPU time (the build and its compilers)")
    for (name, kind), ts in times.items():
        print(f"{name:<8} {kind:<5} {summary(ts)}  {summary(cpus[(name, kind)])}")
    if args.compare:
        for kind in kinds:
            ratios = [
                statistics.median(table[("this", kind)]) / statistics.median(table[("compare", kind)])
                for table in (times, cpus)
            ]
            print(f"{kind}: this / compare = {ratios[0]:.2f} (wall), {ratios[1]:.2f} (CPU)")


if __name__ == "__main__":
    main()
