"""Compile cost of the NumbaBackend kernels: seconds of each kernel's first call, cold vs warm.

Usage: ``python benchmarks/bench_numba_compile.py [--cache-dir DIR] [--repeat 3] [--quick] [--speed]``

Fresh Python processes run the same list of first calls with ``NUMBA_CACHE_DIR`` set. A "cold"
process starts from an empty cache directory and compiles every kernel; a "warm" one loads the
cache the first cold process wrote. Each is run ``--repeat`` times (every cold run with its own
empty directory, under ``--cache-dir`` when given, else under a temporary one). numba's one-time
start-up in each process (importing numba, building its CPU target, which probes SciPy's BLAS)
is timed on its own line, so it is not charged to whichever kernel happens to run first.

Every number is shown as min and median over the runs with the spread ``(max - min) / median``;
a number whose runs disagree by more than 25% is marked ``!`` (a busy machine: not to be trusted).

``--speed`` adds a table of the backend-level calls (primitives and the four fused ops, which
the Tensor-level ``bench.py`` does not call directly) as the ratio NumbaBackend / CPUBackend of
the minimums over interleaved rounds, after the compile table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WARM_TARGET_S = 0.5

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_deps import require  # noqa: E402
from timing_stats import Timing, trust_note  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from simulator.host import cpu_count  # noqa: E402


def _cases(quick: bool):
    """``(label, call)`` per compiled kernel; each call takes the backend and the inputs."""
    from torchlight.backends.ops import BINARY_OPS, REDUCE_OPS, UNARY_OPS

    cases = []
    unary = UNARY_OPS[:2] if quick else UNARY_OPS
    binary = BINARY_OPS[:2] if quick else BINARY_OPS
    for op in unary:
        cases.append((f"map {op.name} f32", lambda nb, d, n=op.name: getattr(nb, f"{n}_map")(d["pos32"])))
    for op in binary:
        cases.append((f"zip {op.name} f32", lambda nb, d, n=op.name: getattr(nb, n)(d["pos32"], d["row32"])))
    for op in REDUCE_OPS:
        label = f"reduce {op.name} f32"
        cases.append((label, lambda nb, d, n=op.name: getattr(nb, f"{n}_reduce")(d["pos32"], 1)))
    cases += [
        ("map exp f64", lambda nb, d: nb.exp_map(d["pos64"])),
        ("zip add f64", lambda nb, d: nb.add(d["pos64"], d["pos64"])),
        ("reduce add f64", lambda nb, d: nb.add_reduce(d["pos64"], 0)),
        ("matmul fast f32", lambda nb, d: nb.matmul(d["pos32"], d["sq32"])),
        ("matmul body f32", lambda nb, d: nb.matmul(d["pos32"], d["sq32"].transpose())),
        ("attn_softmax_fw f32", lambda nb, d: nb.attn_softmax_fw(d["scores32"], None, True)),
        ("attn_softmax_bw f32", lambda nb, d: nb.attn_softmax_bw(d["scores32"], d["scores32"])),
        ("layernorm_fw f32", lambda nb, d: nb.layernorm_fw(d["pos32"], d["ones32"], d["zeros32"], 1e-5)),
        (
            "layernorm_bw f32",
            lambda nb, d: nb.layernorm_bw(d["pos32"], d["pos32"], d["ones32"], d["lead32"], d["lead32"]),
        ),
    ]
    return cases


def _inputs():
    import numpy as np

    from torchlight.core.tensor_data import TensorData

    def td(array):
        return TensorData.from_array(array)

    rng = np.random.default_rng(0)
    pos = rng.uniform(0.5, 1.5, (4, 4)).astype(np.float32)
    return {
        "pos32": td(pos),
        "row32": td(pos[:1].copy()),
        "sq32": td(pos.copy()),
        "pos64": td(pos.astype(np.float64)),
        "scores32": td(rng.standard_normal((1, 2, 3, 4)).astype(np.float32)),
        "ones32": td(np.ones(4, np.float32)),
        "zeros32": td(np.zeros(4, np.float32)),
        "lead32": td(np.ones(4, np.float32)),
    }


def child(quick: bool) -> None:
    """Time numba's start-up, then each kernel's first call; print one JSON object."""
    start = time.perf_counter()
    import numba
    from numba.core.registry import cpu_target

    # Building the CPU target's registries happens once per process, on the first compile
    # or cache load, whichever kernel that is.
    cpu_target.target_context.refresh()
    startup = time.perf_counter() - start

    from torchlight.backends.cuda import numba_backend

    backend = numba_backend()
    data = _inputs()
    times = {}
    for label, call in _cases(quick):
        t0 = time.perf_counter()
        call(backend, data)
        times[label] = time.perf_counter() - t0
    print(json.dumps({"startup": startup, "kernels": times, "numba": numba.__version__}))


def run_child(cache_dir: str, quick: bool) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    env.pop("NUMBA_DISABLE_JIT", None)
    cmd = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _rounds(fns, rounds: int = 9) -> list[Timing]:
    """Seconds per call of each fn over ``rounds`` interleaved rounds (after a warm-up call)."""
    for fn in fns:
        fn()
    samples: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            samples[i].append(time.perf_counter() - start)
    return [Timing(tuple(t)) for t in samples]


def speed_table() -> None:
    """Backend-level speed: NumbaBackend over CPUBackend on large float32 inputs."""
    import numpy as np

    from torchlight.backends.cpu import cpu_backend
    from torchlight.backends.cuda import numba_backend
    from torchlight.core.tensor_data import TensorData

    rng = np.random.default_rng(0)

    def td(*shape):
        return TensorData.from_array(rng.standard_normal(shape).astype(np.float32))

    a, b, row = td(2048, 2048), td(2048, 2048), td(1, 2048)
    scores, mask = td(8, 8, 256, 256), TensorData.from_array(np.zeros((8, 256), np.float32))
    x, gamma, beta = td(4096, 1024), td(1024), td(1024)
    m1, m2 = td(512, 512), td(512, 512)
    cpu, nb = cpu_backend(), numba_backend()
    y = cpu.attn_softmax_fw(scores, mask, True)
    _, mean, rstd = cpu.layernorm_fw(x, gamma, beta)
    calls = {
        "add 2048x2048": lambda k: k.add(a, b),
        "add broadcast row": lambda k: k.add(a, row),
        "mul 2048x2048": lambda k: k.mul(a, b),
        "exp 2048x2048": lambda k: k.exp_map(a),
        "sum(dim=1) 2048x2048": lambda k: k.add_reduce(a, 1),
        "matmul 512 (fast path)": lambda k: k.matmul(m1, m2),
        "attn_softmax_fw 8x8x256x256": lambda k: k.attn_softmax_fw(scores, mask, True),
        "attn_softmax_bw 8x8x256x256": lambda k: k.attn_softmax_bw(y, scores),
        "layernorm_fw 4096x1024": lambda k: k.layernorm_fw(x, gamma, beta),
        "layernorm_bw 4096x1024": lambda k: k.layernorm_bw(x, x, gamma, mean, rstd),
    }
    width = max(len(k) for k in calls)
    head = f"{'cpu min ms':>10}  {'spread':>7}  {'numba min ms':>12}  {'spread':>7}  {'ratio':>7}"
    print(f"\n{'call (float32)':<{width}}  {head}")
    seen: list[Timing] = []
    for label, call in calls.items():
        t_cpu, t_nb = _rounds([lambda c=call: c(cpu), lambda c=call: c(nb)])
        seen += [t_cpu, t_nb]
        print(
            f"{label:<{width}}  {t_cpu.min * 1e3:10.2f}  {t_cpu.spread_text():>7}  {t_nb.min * 1e3:12.2f}  "
            f"{t_nb.spread_text():>7}  {t_nb.ratio_text(t_cpu):>7}"
        )
    print(trust_note(seen))


def _cell(t: Timing) -> str:
    return f"{t.min:8.3f} {t.median:8.3f} {t.spread_text():>7}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", help="where the cold runs' cache directories go (default: a temp dir)")
    parser.add_argument("--repeat", type=int, default=3, help="cold and warm processes each (default 3)")
    parser.add_argument("--quick", action="store_true", help="two ops per kind instead of the whole table")
    parser.add_argument("--speed", action="store_true", help="also time backend calls against CPUBackend")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    require("torchlight", "the library whose kernels it compiles")
    require("numba", "the twin's compiler it times")
    if args.child:
        child(args.quick)
        return
    if args.repeat < 3:
        parser.error(f"--repeat {args.repeat}: at least 3 runs are needed to judge the spread")
    with tempfile.TemporaryDirectory(prefix="torchlight-numba-cache-") as tmp:
        root = Path(args.cache_dir or tmp)
        cold = []
        for i in range(args.repeat):
            run_dir = root / f"cold-{i}"
            if run_dir.exists() and any(run_dir.iterdir()):
                raise SystemExit(
                    f"{run_dir} is not empty: a cold run needs an empty cache; pick another --cache-dir"
                )
            run_dir.mkdir(parents=True, exist_ok=True)
            cold.append(run_child(str(run_dir), args.quick))
        warm = [run_child(str(root / "cold-0"), args.quick) for _ in range(args.repeat)]

    def timing(runs: list[dict], key: str | None) -> Timing:
        return Timing(tuple(r["startup"] if key is None else r["kernels"][key] for r in runs))

    labels = list(cold[0]["kernels"])
    width = max(len(k) for k in labels)
    print(
        f"numba {cold[0]['numba']}, {cpu_count()} CPUs; seconds of each first call, {args.repeat} runs each"
    )
    cells = f"{'min':>8} {'median':>8} {'spread':>7}"
    print(f"{'':<{width}}  {'cold':^25}  {'warm':^25}")
    print(f"{'kernel':<{width}}  {cells}  {cells}")
    seen: list[Timing] = []
    for label, key in [("(numba start-up)", None), *((k, k) for k in labels)]:
        c, w = timing(cold, key), timing(warm, key)
        seen += [c, w]
        print(f"{label:<{width}}  {_cell(c)}  {_cell(w)}")
    cold_total = Timing(tuple(sum(r["kernels"].values()) for r in cold))
    warm_total = Timing(tuple(sum(r["kernels"].values()) for r in warm))
    print(f"{'total':<{width}}  {_cell(cold_total)}  {_cell(warm_total)}")
    warm_min = {k: timing(warm, k).min for k in labels}
    slowest = max(warm_min, key=warm_min.get)
    verdict = "within" if warm_min[slowest] < WARM_TARGET_S else "OVER"
    print(
        f"slowest warm first call (min of runs): {slowest} {warm_min[slowest]:.3f} s "
        f"({verdict} the {WARM_TARGET_S} s target)"
    )
    print(trust_note(seen))
    if args.speed:
        speed_table()


if __name__ == "__main__":
    main()
