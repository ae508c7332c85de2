"""Build time of a small Thrust program against the same program without Thrust.

Usage: ``python benchmarks/bench_thrust_build.py [--mode fast] [--repeat 2]``. Each row is the
minimum over the rounds of one source object's build with an empty cache (``g++ -E``, the front
end, ``g++ -c``) and of a cache hit (``g++ -E`` only); the runtime object, shared by every
program and cached once, is not part of either. The Thrust program is
simulator/tests/kernels/program_thrust.cu; the plain one is its kernels with cudaMalloc instead.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from simulator import build  # noqa: E402

THRUST = REPO / "simulator" / "tests" / "kernels" / "program_thrust.cu"
PLAIN = """#include <cstdio>
__global__ void affine(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3 * in[i] + 1;
}
int main() {
    int *a, *b;
    cudaMalloc(&a, 1000 * sizeof(int));
    cudaMalloc(&b, 1000 * sizeof(int));
    affine<<<8, 128>>>(a, b, 1000);
    std::printf("%s\\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
"""


def timed(source: Path, mode: str) -> tuple[float, float]:
    """Seconds of an uncached and of a cached build of ``source``'s object."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SIMULATOR_CACHE"] = cache
        t0 = time.perf_counter()
        build.kernel_object(source, mode)
        t1 = time.perf_counter()
        build.kernel_object(source, mode)
        t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def main() -> None:
    """Print one row per program."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", default="fast", choices=build.MODES)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain_affine.cu"
        plain.write_text(PLAIN)
        print(f"{'program':<22} {'mode':<9} {'build s':>8} {'cache hit s':>12}")
        for src in (plain, THRUST):
            rows = [timed(src, args.mode) for _ in range(args.repeat)]
            cold, warm = (min(r[i] for r in rows) for i in range(2))
            print(f"{src.name:<22} {args.mode:<9} {cold:>8.2f} {warm:>12.2f}")


if __name__ == "__main__":
    main()
