"""CPU seconds of one ``python -m simulator run`` whose program is already built (a cached run).

Usage: ``python benchmarks/bench_cached_run.py [--rounds 15] [--mode fast] [--source FILE.cu]
[--compare OTHER_CHECKOUT]``. A test suite starts hundreds of such runs, each paying the
interpreter's start, the simulator's imports, the cache lookups (the source's manifest, the
runtime's and NVIDIA's headers' keys) and the program itself; a small program keeps the last
part small. The source is written once, old enough for its manifest (``SETTLE_S``), and built
before the rounds, so that every round finds its object and its program in the cache.
``--compare`` runs another checkout (e.g. ``git archive main``) too, its rounds interleaved with
this one's, each with a cache folder of its own under ``--cache``. Medians and the spread
(min-max) of the CPU time (user + system, the run and the program) are printed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SETTLE_S = 2.0  # as simulator/source_manifest.py: a source newer than this gets no manifest

SMALL = """\
#include <cstdio>
__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
int main() {
    const int n = 256;
    float *a, *b, *c;
    cudaMallocManaged(&a, n * sizeof(float));
    cudaMallocManaged(&b, n * sizeof(float));
    cudaMallocManaged(&c, n * sizeof(float));
    for (int i = 0; i < n; ++i) { a[i] = i; b[i] = 2 * i; }
    add<<<1, n>>>(a, b, c, n);
    cudaDeviceSynchronize();
    printf("%g %g\\n", c[1], c[n - 1]);
    return 0;
}
"""


def run_cpu(checkout: Path, cache: Path, source: Path, mode: str) -> float:
    """User plus system CPU seconds of one ``python -m simulator run`` of ``source`` from ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "SIMULATOR_CACHE": str(cache)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "-m", "simulator", "-q", "run", str(source), "--mode", mode],
        cwd=source.parent,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(
            f"{checkout}: the run failed ({proc.returncode}):\n{proc.stdout}{proc.stderr[-2000:]}"
        )
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    """Print the median CPU milliseconds per cached run of each checkout."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--mode", default="fast")
    p.add_argument("--source", type=Path, help="the program to run (default: a small vector add)")
    p.add_argument("--compare", type=Path, action="append", default=[], metavar="CHECKOUT")
    p.add_argument(
        "--cache", type=Path, help="the folder of the checkouts' caches (default: a temporary one)"
    )
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cached-run-"))
    source = args.source.resolve() if args.source else work / "small_add.cu"
    if not args.source:
        source.write_text(SMALL)
        time.sleep(SETTLE_S + 0.5)
    caches = args.cache or work
    checkouts = [REPO, *(c.resolve() for c in args.compare)]
    cache_of = {c: caches / f"cache-{i}" for i, c in enumerate(checkouts)}
    for c in checkouts:  # the build (and the runtime's, the first time), then the manifest's
        for _ in range(2):
            run_cpu(c, cache_of[c], source, args.mode)
    samples: dict[Path, list[float]] = {c: [] for c in checkouts}
    for _ in range(args.rounds):
        for c in checkouts:
            samples[c].append(run_cpu(c, cache_of[c], source, args.mode))
    print(f"{source.name}, --mode {args.mode}, {args.rounds} rounds; load {os.getloadavg()[0]:.1f}")
    for c in checkouts:
        s = samples[c]
        med = statistics.median(s)
        spread = f"min {min(s) * 1000:.1f}, max {max(s) * 1000:.1f}"
        print(f"{str(c):<40} median {med * 1000:7.1f} ms CPU  ({spread})")


if __name__ == "__main__":
    main()
