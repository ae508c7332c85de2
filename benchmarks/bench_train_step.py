"""One training step (forward, backward, AdamW) of the example's decoder LM: fused vs unfused,
and against the same model in PyTorch on the CPU when torch is importable; then a tiny
matmul-relu-sum forward and backward, where the cost of getting from an op to its kernel shows.

    python benchmarks/bench_train_step.py [--backend cpu] [--repeat 20] [--clock wall|cpu]

Each step is timed ``--repeat`` times after a warm-up step (a tiny step: ``TINY_CALLS`` calls per
timing), the contenders taking turns round by round so that a burst of load on a shared machine
hits each of them alike; the table gives the minimum, the median and the spread
``(max - min) / median``, and marks with ``!`` a number whose steps disagree by more than 25% (a
busy machine: not to be trusted). Ratios are of minimums. The header gives the load average
before and after the run.

``--clock cpu`` times the process's CPU seconds (every thread's) instead of the wall clock: much
steadier on a busy machine, where waiting for a core is not counted. With more than one BLAS or
PyTorch thread it also counts their spinning, so on a busy machine compare with one thread each:
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_deps import require  # noqa: E402
from timing_stats import Timing, trust_note  # noqa: E402

tl = require("torchlight", "the library it times")
import numpy as np  # noqa: E402  (torchlight brings it)

from torchlight import nn  # noqa: E402
from torchlight.nn import functional as F  # noqa: E402
from torchlight.optim import AdamW  # noqa: E402

VOCAB, LENGTH = 11, 6
TINY_SHAPES = ((8, 16), (16, 16))  # x and w of the tiny step
TINY_CALLS = 200  # calls per timed sample of the tiny step: one call is too short to time alone


def batch(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    digits = rng.integers(0, 10, (size, LENGTH))
    rows = np.concatenate([digits, np.full((size, 1), 10), np.sort(digits, 1)], 1)
    targets = rows[:, 1:].copy()
    targets[:, :LENGTH] = -100
    return rows[:, :-1], targets


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def rounds_of(
    steps: dict[str, Callable[[], object]],
    repeat: int,
    calls: int = 1,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, Timing]:
    """Seconds per step of each of ``steps``: ``repeat`` samples of ``calls`` steps, one sample of
    each step per round, after a warm-up step of each (numba compiles)."""
    for step in steps.values():
        step()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, step in steps.items():
            start = clock()
            for _ in range(calls):
                step()
            times[name].append((clock() - start) / calls)
    return {name: Timing(tuple(t)) for name, t in times.items()}


def load_text() -> str:
    """The 1-minute load average and the CPUs this process may use, as a short phrase."""
    try:
        load = f"{os.getloadavg()[0]:.1f}"
    except OSError:
        load = "unknown"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"load {load} on {cpus} CPUs"


def tiny_arrays() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    return tuple(rng.standard_normal(shape).astype(np.float32) for shape in TINY_SHAPES)


def torchlight_tiny(backend):
    """``(x @ w).relu().sum()``, forward and backward into ``w.grad``."""
    x_array, w_array = tiny_arrays()
    x = tl.tensor(x_array, device=backend)
    w = tl.tensor(w_array, device=backend, requires_grad=True)

    def step():
        w.zero_grad()
        (x @ w).relu().sum().backward()

    return step


def torch_tiny():
    import torch

    x_array, w_array = tiny_arrays()
    x = torch.from_numpy(x_array)
    w = torch.from_numpy(w_array).requires_grad_()

    def step():
        w.grad = None
        (x @ w).relu().sum().backward()

    return step


def torchlight_step(backend, fused: bool, args, ids, targets):
    tl.manual_seed(0)
    model = nn.DecoderLM(VOCAB, args.dim, args.heads, args.layers, 2 * LENGTH + 1, fused=fused).to(backend)
    opt = AdamW(model.parameters(), lr=1e-3)

    def step():
        loss = F.cross_entropy(model(ids), targets)
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def torch_step(args, ids, targets):
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    dim, heads = args.dim, args.heads

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
            self.q, self.k, self.v, self.o = (torch.nn.Linear(dim, dim) for _ in range(4))
            self.fc1, self.fc2 = torch.nn.Linear(dim, 4 * dim), torch.nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, _ = x.shape
            h = self.ln1(x)
            q, k, v = (p(h).view(b, t, heads, dim // heads).transpose(1, 2) for p in (self.q, self.k, self.v))
            scores = q @ k.transpose(-1, -2) / math.sqrt(dim // heads)
            causal = torch.ones(t, t, dtype=torch.bool).triu(1)
            att = scores.masked_fill(causal, float("-inf")).softmax(-1) @ v
            x = x + self.o(att.transpose(1, 2).reshape(b, t, dim))
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = torch.nn.Embedding(VOCAB, dim), torch.nn.Embedding(2 * LENGTH + 1, dim)
            self.blocks = torch.nn.ModuleList(Block() for _ in range(args.layers))
            self.ln, self.head = torch.nn.LayerNorm(dim), torch.nn.Linear(dim, VOCAB)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    model = LM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tids, ttargets = torch.tensor(ids), torch.tensor(targets)

    def step():
        logits = model(tids)
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, VOCAB), ttargets.reshape(-1), ignore_index=-100
        )
        opt.zero_grad()
        loss.backward()
        opt.step()

    return step


def print_rows(results: dict, unit: str, scale: float, digits: int) -> None:
    """One line per timed entry (min, median, spread in ``unit``), with its ratio to PyTorch's when timed."""
    print(f"  {'':20s} {'min ' + unit:>9} {'median ' + unit:>10} {'spread':>8}")
    for name, t in results.items():
        low, mid = t.min * scale, t.median * scale
        line = f"  {name:20s} {low:9.{digits}f} {mid:10.{digits}f} {t.spread_text():>8}"
        if "pytorch" in results and name != "pytorch":
            line += f"   {t.ratio_text(results['pytorch'], 'x')} pytorch"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--clock", choices=tuple(CLOCKS), default="wall", help="what a step costs: wall or CPU seconds"
    )
    args = parser.parse_args()
    if args.repeat < 3:
        parser.error(f"--repeat {args.repeat}: at least 3 steps are needed to judge the spread")
    backend = (
        tl.get_backend(args.backend)
        if args.backend != "numba"
        else __import__("torchlight.backends.cuda", fromlist=["numba_backend"]).numba_backend()
    )
    clock = CLOCKS[args.clock]
    load_before = load_text()
    ids, targets = batch(np.random.default_rng(0), args.batch)
    steps = {
        "torchlight fused": torchlight_step(backend, True, args, ids, targets),
        "torchlight unfused": torchlight_step(backend, False, args, ids, targets),
    }
    try:
        steps["pytorch"] = torch_step(args, ids, targets)
    except ImportError:
        print("PyTorch not importable: no torch column")
    results = rounds_of(steps, args.repeat, clock=clock)
    print(
        f"one training step, batch {args.batch}, seq {2 * LENGTH}, dim {args.dim}, layers {args.layers}, "
        f"backend {args.backend} ({args.repeat} steps each, {args.clock} clock, {load_before})"
    )
    print_rows(results, "ms", 1e3, 2)
    fused, unfused = results["torchlight fused"], results["torchlight unfused"]
    print(f"  fused / unfused      {fused.ratio_text(unfused, 'x')}")
    tiny_steps = {"torchlight": torchlight_tiny(backend)}
    try:
        tiny_steps["pytorch"] = torch_tiny()
    except ImportError:
        pass
    tiny = rounds_of(tiny_steps, args.repeat, TINY_CALLS, clock)
    x_shape, w_shape = TINY_SHAPES
    print(f"tiny step: (x @ w).relu().sum().backward(), x {x_shape}, w {w_shape}")
    print_rows(tiny, "us", 1e6, 1)
    print(trust_note([*results.values(), *tiny.values()]))
    print(f"{load_text()} at the end")


if __name__ == "__main__":
    main()
