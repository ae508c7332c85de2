"""Where the numba twin's parallel kernels start to pay: serial form against parallel, by size.

Usage: ``python benchmarks/bench_numba_dispatch.py [--repeat 7] [--load N]``

Each kernel of the numba backend exists in two forms compiled from one source (see
``torchlight/backends/numba_twin/kernels.py``): ``parallel=True``, whose ``prange`` wakes
numba's worker threads, and a serial one. The backend runs the serial form for calls under
``SERIAL_BELOW`` elements. This script times both forms on a flat float32 add (bound by memory)
and exp (bound by arithmetic) from 256 to 4 M elements, as ratios to numpy (and PyTorch, when
importable), and says from which size the parallel form is 10% faster. ``--load N`` keeps N
busy processes running while it times (what a test run's other worker does to the machine).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from script_deps import require  # noqa: E402
from timing_stats import time_interleaved, trust_note  # noqa: E402

require("torchlight", "the library it times")
require("numba", "the numba twin's compiler")
import numpy as np  # noqa: E402

from torchlight.backends import ops  # noqa: E402
from torchlight.backends.numba_twin import kernels  # noqa: E402

try:
    import torch
except ImportError:  # PyTorch is optional: its column is left out without it
    torch = None

SIZES = [1 << p for p in range(8, 23, 2)]
ROUND_SECONDS = 0.02


def _spin() -> None:
    while True:
        pass


def main(argv: list[str] | None = None) -> int:
    """Print the table: per size, numpy's time, then each form's (and torch's) ratio to it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds per contender (default 7)")
    parser.add_argument("--load", type=int, default=0, help="busy processes kept running meanwhile")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.load < 0:
        parser.error(f"--repeat must be at least 1 and --load at least 0, not {args.repeat} and {args.load}")
    add = next(op for op in ops.BINARY_OPS if op.name == "add")
    exp = next(op for op in ops.UNARY_OPS if op.name == "exp")
    e = np.zeros(0, dtype=np.int64)
    # (name, numpy's call, kernel kind and scalar, the kernel's arguments)
    cases = [
        (
            "a + b",
            lambda a, b, out: np.add(a, b, out=out),
            ("zip", add.scalar),
            lambda a, b, out, n: (out, e, a, e, e, 0, b, e, e, 0, n, True, 0),
        ),
        (
            "exp(a)",
            lambda a, b, out: np.exp(a, out=out),
            ("map", exp.scalar),
            lambda a, b, out, n: (out, e, e, 0, a, e, 0, n, True, 0),
        ),
    ]
    hogs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.load)]
    for hog in hogs:
        hog.start()
    header = ["op", "elements", "numpy us", "serial / numpy", "parallel / numpy"]
    if torch is not None:
        header.append("torch / numpy")
    print(f"SERIAL_BELOW = {kernels.SERIAL_BELOW}; busy processes: {args.load}")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    seen, first_win = [], {}
    try:
        for name, numpy_fn, (kind, scalar), kernel_args in cases:
            serial = kernels.op_kernel(kind, scalar, work=0)
            parallel = kernels.op_kernel(kind, scalar, work=kernels.SERIAL_BELOW)
            for n in SIZES:
                a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
                b, out = a[::-1].copy(), np.empty_like(a)
                call = kernel_args(a, b, out, n)
                fns = [lambda: numpy_fn(a, b, out)]  # noqa: B023
                fns += [lambda k=k: k(*call) for k in (serial, parallel)]  # noqa: B023
                if torch is not None:
                    ta, tb, tout = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
                    torch_fn = torch.add if kind == "zip" else (lambda x, _y, out: torch.exp(x, out=out))
                    fns.append(lambda f=torch_fn, ta=ta, tb=tb, tout=tout: f(ta, tb, out=tout))
                timings = time_interleaved(fns, args.repeat, ROUND_SECONDS)
                seen += timings
                base, one, many, *rest = timings
                if name not in first_win and many.min < 0.9 * one.min:
                    first_win[name] = n
                ratios = (t.ratio_text(base) for t in (one, many, *rest))
                print("| " + " | ".join([name, str(n), f"{base.min * 1e6:.1f}", *ratios]) + " |", flush=True)
    finally:
        for hog in hogs:
            hog.terminate()
    for name, _, _, _ in cases:
        won = first_win.get(name)
        print(
            f"{name}: "
            + (f"the parallel form is 10% faster from {won} elements" if won else "never 10% faster")
        )
    print(trust_note(seen))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
