"""Speed of torchlight backends as ratios to raw numpy, and to PyTorch eager when it is importable.

Usage: ``python benchmarks/bench.py [--backends cpu,numba] [--repeat 7] [--quick] [--out DIR]``

Each contender is timed over ``--repeat`` rounds after a warm-up call (which also pays any JIT
compilation); a round loops enough calls to last ~20 ms. The tables give the minimum and the
median round and the spread ``(max - min) / median``; ratios are of minimums, and above 1 mean
slower than the reference. A number whose rounds disagree by more than 25% is marked ``!``: the
machine was busy, and it is not to be trusted. Backend names: ``cpu``, ``numba`` (the numba CPU
twin), or any device ``torchlight.get_backend`` accepts (``cuda``).

The tables also go to ``--out`` (default ``reports/bench``) as ``bench.md``, and beside them
``bench.png`` charts the ratios to numpy where matplotlib is installed (the ``plots`` extra).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# PyTorch's OpenMP workers spin after each parallel region and starve numpy's BLAS threads on a
# small machine; passive waiting lets every contender run at its own speed.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ratio_chart import Ratios  # noqa: E402
from script_deps import require  # noqa: E402
from timing_stats import Timing, time_interleaved, trust_note  # noqa: E402

tl = require("torchlight", "the library it times")
import numpy as np  # noqa: E402  (torchlight brings it)

try:
    import torch
except ImportError:  # PyTorch is optional: its columns are left out without it
    torch = None

ROUND_SECONDS = 0.02
EPS = 1e-5


def make_backend(name: str):
    """The backend a column of the table stands for."""
    if name == "numba":
        from torchlight.backends.cuda import numba_backend

        return numba_backend()
    return tl.get_backend(name)


def best_times(fns: list[Callable[[], object]], repeat: int) -> list[Timing]:
    """The rounds of each fn, interleaved per round so that load hits every contender alike."""
    return time_interleaved(fns, repeat, ROUND_SECONDS)


# --- the op cases: each builds (numpy call, torchlight call, torch call) from numpy inputs ----------


@dataclass
class Case:
    op: str
    size: str
    shapes: list[tuple[int, ...]]
    numpy_fn: Callable[..., object]
    tl_fn: Callable[..., object]
    torch_fn: Callable[..., object] | None


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _np_layernorm(x, g, b):
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + EPS)
    return centred * rstd * g + b


def _torch_layernorm(x, g, b):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], g, b, EPS)


def cases(quick: bool) -> list[Case]:
    """Every (op, size) row of the table."""
    small, large = (64, 64), (1024, 1024) if quick else (2048, 2048)
    rows = []
    for label, shape in (("small", small), ("large", large)):
        tag = f"{label} {shape[0]}x{shape[1]}"
        rows += [
            Case("add", tag, [shape, shape], np.add, lambda a, b: a + b, lambda a, b: a + b),
            Case("mul", tag, [shape, shape], np.multiply, lambda a, b: a * b, lambda a, b: a * b),
            Case("exp", tag, [shape], np.exp, lambda a: a.exp(), lambda a: a.exp()),
            Case("sum(dim=1)", tag, [shape], lambda a: a.sum(axis=1), lambda a: a.sum(1), lambda a: a.sum(1)),
        ]
    for n in (256, 512) if quick else (256, 512, 1024):
        rows.append(
            Case("matmul", f"{n}x{n}", [(n, n), (n, n)], np.matmul, lambda a, b: a @ b, lambda a, b: a @ b)
        )
    for label, shape in (("small", small), ("large", large)):
        tag = f"{label} {shape[0]}x{shape[1]}"
        h = shape[-1]
        rows += [
            Case("softmax(-1)", tag, [shape], _np_softmax, lambda a: a.softmax(-1), lambda a: a.softmax(-1)),
            Case(
                "layernorm",
                tag,
                [shape, (h,), (h,)],
                _np_layernorm,
                lambda x, g, b: x.layer_norm(g, b, EPS),
                _torch_layernorm,
            ),
        ]
    return rows


def run_cases(
    backends: dict, repeat: int, quick: bool, seen: list[Timing], ratios: Ratios
) -> list[list[str]]:
    """One table row per case: numpy time and spread, then each backend's (and torch's) ratio."""
    names = [*backends, *(["torch"] if torch is not None else [])]
    rng = np.random.default_rng(0)
    table = []
    for case in cases(quick):
        arrays = [rng.standard_normal(s).astype(np.float32) for s in case.shapes]
        fns = [lambda: case.numpy_fn(*arrays)]  # noqa: B023
        for backend in backends.values():
            tensors = [tl.tensor(a, device=backend) for a in arrays]
            fns.append(lambda t=tensors: case.tl_fn(*t))  # noqa: B023
        if torch is not None:
            tts = [torch.from_numpy(a) for a in arrays]
            fns.append(lambda t=tts: case.torch_fn(*t))  # noqa: B023
        timings = best_times(fns, repeat)
        seen += timings
        base, *others = timings
        row = [case.op, case.size, f"{base.min * 1e3:.3f}", f"{base.median * 1e3:.3f}", base.spread_text()]
        for t in others:
            row += [t.ratio_text(base), t.spread_text()]
        table.append(row)
        ratios.add_row(f"{case.op} {case.size}", {name: (t, base) for name, t in zip(names, others)})
    return table


def run_overhead(backends: dict, repeat: int, seen: list[Timing]) -> list[list[str]]:
    """Per-op cost on a 4-element tensor: microseconds (min, median, spread), ratio to PyTorch eager."""
    a_np = np.arange(4, dtype=np.float32)
    labels = ["numpy a + b", "numpy np.exp(a)"]
    fns: list[Callable[[], object]] = [lambda: a_np + a_np, lambda: np.exp(a_np)]
    if torch is not None:
        a_t = torch.from_numpy(a_np)
        labels += ["torch a + b", "torch a.exp()"]
        fns += [lambda: a_t + a_t, lambda: a_t.exp()]
    for name, backend in backends.items():
        a = tl.tensor(a_np, device=backend)
        labels += [f"{name} a + b", f"{name} a.exp()"]
        fns += [lambda a=a: a + a, lambda a=a: a.exp()]
    times = dict(zip(labels, best_times(fns, repeat)))
    seen += times.values()
    rows = []
    for label, t in times.items():
        op = label.split(" ", 1)[1]
        ref = times.get("torch a + b" if "+" in op else "torch a.exp()") if torch is not None else None
        ratio = "" if label.startswith("numpy") else (t.ratio_text(ref) if ref else "n/a")
        rows.append([label, f"{t.min * 1e6:.2f}", f"{t.median * 1e6:.2f}", t.spread_text(), ratio])
    return rows


def run_mlp(
    backends: dict,
    repeat: int,
    seen: list[Timing],
    batch: int = 64,
    d_in: int = 256,
    hidden: int = 512,
    d_out: int = 10,
) -> list[list[str]]:
    """One forward+backward step of a 2-layer MLP (matmul, add, relu, matmul, squared-mean loss)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    w1 = (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(np.float32)
    b1 = np.zeros(hidden, np.float32)
    w2 = (rng.standard_normal((hidden, d_out)) / np.sqrt(hidden)).astype(np.float32)
    labels: list[str] = []
    fns: list[Callable[[], object]] = []
    if torch is not None:
        tx = torch.from_numpy(x)
        tparams = [torch.from_numpy(p.copy()).requires_grad_() for p in (w1, b1, w2)]

        def torch_step():
            for p in tparams:
                p.grad = None
            loss = ((tx @ tparams[0] + tparams[1]).relu() @ tparams[2]).pow(2).mean()
            loss.backward()

        labels.append("torch")
        fns.append(torch_step)
    for name, backend in backends.items():
        lx = tl.tensor(x, device=backend)
        params = [tl.tensor(p, device=backend, requires_grad=True) for p in (w1, b1, w2)]

        def step(lx=lx, params=params):
            for p in params:
                p.zero_grad()
            loss = (((lx @ params[0] + params[1]).relu() @ params[2]) ** 2).mean()
            loss.backward()

        labels.append(name)
        fns.append(step)
    times = dict(zip(labels, best_times(fns, repeat)))
    seen += times.values()
    ref = times.get("torch")
    return [
        [
            k,
            f"{v.min * 1e3:.3f}",
            f"{v.median * 1e3:.3f}",
            v.spread_text(),
            v.ratio_text(ref) if ref else "n/a",
        ]
        for k, v in times.items()
    ]


def print_table(title: str, header: list[str], rows: list[list[str]]) -> str:
    """Print a Markdown table, columns padded to their widest cell; return what was printed."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"\n### {title}\n", "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |"]
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    text = "\n".join(lines)
    print(text)
    return text


def main(argv: list[str] | None = None) -> int:
    """Run every benchmark for the chosen backends and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="cpu", help="comma list, e.g. cpu,numba (default: cpu)")
    parser.add_argument(
        "--repeat", type=int, default=7, help="timed rounds per number (min, median and spread are shown)"
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a fast look")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("reports/bench"),
        help="folder for bench.md (the tables) and bench.png (the chart); default reports/bench",
    )
    args = parser.parse_args(argv)
    if args.repeat < 3:
        parser.error(f"--repeat {args.repeat}: at least 3 rounds are needed to judge the spread")
    names = [n.strip() for n in args.backends.split(",") if n.strip()]
    try:
        backends = {name: make_backend(name) for name in names}
    except Exception as err:
        print(f"bench: cannot build backend: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    versions = f"numpy {np.__version__}" + (
        f", torch {torch.__version__}" if torch else ", torch not installed"
    )
    printed = [
        f"torchlight {tl.__version__}; python {platform.python_version()}; {versions}; float32",
        f"{args.repeat} rounds of >= {ROUND_SECONDS * 1e3:.0f} ms after a warm-up call; ratios of minimums; "
        "spread = (max - min) / median",
    ]
    print("\n".join(printed))

    seen: list[Timing] = []
    ratios = Ratios()
    header = ["op", "size", "numpy min ms", "numpy median ms", "spread"]
    for name in [*backends, *(["torch"] if torch else [])]:
        header += [f"{name} / numpy", f"{name} spread"]
    title = "Time ratio to raw numpy"
    printed.append(print_table(title, header, run_cases(backends, args.repeat, args.quick, seen, ratios)))
    printed.append(
        print_table(
            "Per-op overhead on a 4-element tensor",
            ["call", "min µs", "median µs", "spread", "ratio to torch"],
            run_overhead(backends, args.repeat, seen),
        )
    )
    printed.append(
        print_table(
            "2-layer MLP forward+backward (batch 64, 256 -> 512 -> 10)",
            ["implementation", "min ms", "median ms", "spread", "ratio to torch"],
            run_mlp(backends, args.repeat, seen),
        )
    )
    printed.append(f"\n{trust_note(seen)}")
    print(printed[-1])
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench.md").write_text("\n".join(printed) + "\n", encoding="utf-8")
    chart = ratios.write(args.out / "bench.png", title)
    print(f"\nbench: tables written to {args.out / 'bench.md'}; {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
