"""GEMMs under the simulator (tensor-core fragments and cuBLAS) against numpy's matmul of the same size.

Usage: ``python benchmarks/bench_gemm.py [--n 256] [--repeat 3] [--types half,tf32,double,sgemm]``

``benchmarks/programs/gemm.cu`` multiplies two n x n matrices with ``nvcuda::wmma``, one warp per
output tile (four warps a block): half inputs with float accumulation (m16n16k16), tf32 inputs
(m16n16k8) and double (m8n8k4); ``sgemm`` makes the float product with ``cublasSgemm`` (the
simulator's CPU cuBLAS). Each case is called through ctypes from a fast-mode build; its CPU seconds
(all of the simulator's workers together, the minimum over ``--repeat`` calls after a warm-up)
are put next to numpy's for ``a @ b`` in float32 (float64 for double), and the result is checked
against numpy's product of the inputs as the fragments see them (rounded to half, or to tf32's
19 bits), to the rounding error of a float or double sum of n products.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
import time
from pathlib import Path

from script_deps import require

np = require("numpy", "the inputs and the reference product")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PROGRAM = REPO / "benchmarks" / "programs" / "gemm.cu"
TYPES = ("half", "tf32", "double", "sgemm")


def _tf32(x: np.ndarray) -> np.ndarray:
    """What the tensor cores read of a float: its low 13 bits dropped."""
    return (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def _cpu_best(fn, repeat: int) -> float:
    """The fewest process CPU seconds of ``repeat`` calls of ``fn``, after a warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


def bench(lib: ctypes.CDLL, kind: str, n: int, repeat: int) -> dict:
    """CPU seconds of the simulated GEMM and of numpy's, and the largest error in units of its bound."""
    rng = np.random.default_rng(2)
    dtype = np.float64 if kind == "double" else np.float32
    a = rng.uniform(-1, 1, (n, n)).astype(dtype)
    b = rng.uniform(-1, 1, (n, n)).astype(dtype)
    b_cols = np.ascontiguousarray(b.T)  # column-major B: column j is contiguous
    c = np.zeros((n, n), dtype=dtype)
    entry = getattr(lib, f"gemm_{kind}")
    args = [ctypes.c_void_p(x.ctypes.data) for x in (a, b_cols, c)] + [ctypes.c_int(n)]

    def call() -> None:
        rc = entry(*args)
        if rc != 0:
            raise SystemExit(f"the simulated {kind} GEMM returned CUDA error {rc}")

    sim = _cpu_best(call, repeat)
    ref = _cpu_best(lambda: a @ b, repeat)
    seen = {"half": lambda x: x.astype(np.float16), "tf32": _tf32}.get(kind, lambda x: x)
    a64, b64 = seen(a).astype(np.float64), seen(b).astype(np.float64)
    eps = np.finfo(np.float64 if kind == "double" else np.float32).eps
    bound = n * eps * (np.abs(a64) @ np.abs(b64))
    worst = float((np.abs(c - a64 @ b64) / bound).max())
    if worst > 1:
        raise SystemExit(f"the simulated {kind} GEMM is off by {worst:.2f} times its rounding bound")
    return {"sim": sim, "numpy": ref, "error_in_bounds": worst}


def main(argv: list[str] | None = None) -> int:
    """Build the program, time each type and print the simulator's CPU seconds over numpy's."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=256, help="matrix size, a multiple of 64 (default 256)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--types", default=",".join(TYPES), help="comma-separated: " + ", ".join(TYPES))
    a = p.parse_args(argv)
    kinds = [k for k in a.types.split(",") if k]
    if not kinds or set(kinds) - set(TYPES):
        p.error(f"--types takes a comma-separated list of {', '.join(TYPES)}, not {a.types!r}")
    if a.n < 64 or a.n % 64:
        p.error(f"--n must be a positive multiple of 64, not {a.n}")
    if a.repeat < 1:
        p.error(f"--repeat must be at least 1, not {a.repeat}")
    from simulator import build_shared

    with tempfile.TemporaryDirectory() as tmp:
        lib = ctypes.CDLL(str(build_shared(PROGRAM, Path(tmp) / "out", "fast")))
    flops = 2 * a.n**3
    print(f"n = {a.n}: CPU seconds, minimum of {a.repeat} calls")
    print(f"{'type':<8}{'simulator s':>13}{'numpy s':>11}{'ratio':>10}{'sim GFLOP/s':>13}{'error/bound':>13}")
    for kind in kinds:
        r = bench(lib, kind, a.n, a.repeat)
        ratio = r["sim"] / max(r["numpy"], 1e-9)
        print(
            f"{kind:<8}{r['sim']:>13.3f}{r['numpy']:>11.4f}{ratio:>9.0f}x"
            f"{flops / r['sim'] / 1e9:>13.2f}{r['error_in_bounds']:>13.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
