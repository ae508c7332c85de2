"""The four primitives and the four fused ops on an NVIDIA GPU, against PyTorch CUDA on the same shapes.

Usage: ``python benchmarks/bench_gpu.py [--repeat 5] [--quick] [--kernel-dir DIR] [--markdown P] [--json P]``

Every torchlight op takes host arrays and returns host arrays: each call copies its inputs to the
GPU, runs the kernel and copies the result back. The table splits that time in two:

* **transfer**: host<->device copies. For the numba-cuda kernels it is measured inside the very
  call (each copy is timed; the device is synchronised before a copy back, so a kernel still
  running is not charged to the copy). The CUDA C launchers copy inside C, so for them it is the
  time of the same copies made with numba-cuda, measured next to the call.
* **kernel**: the call minus its transfers (the launches and the device allocations).

PyTorch's kernel time is measured on tensors already on the GPU (synchronised before and after),
and its transfer time as ``.cuda()`` of the inputs plus ``.cpu()`` of the outputs. GB/s is the
op's nominal traffic (every input read once, every output written once) over the kernel time;
the ratio is torchlight's kernel time over PyTorch's (above 1: slower than PyTorch). Without
PyTorch (or without its CUDA build) the PyTorch columns are left out, with a line saying why.
Every number is the minimum over ``--repeat`` rounds after a warm-up call, which also pays the
numba-cuda JIT compilation; the spread ``(max - min) / median`` marks with ``!`` a number whose
rounds disagree by more than 25%.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_deps import require  # noqa: E402
from timing_stats import Timing  # noqa: E402

require("torchlight", "the library it times")
np = require("numpy", "the host arrays")

MIN_REPEAT = 3


@dataclass
class Case:
    """One op at one shape: the torchlight call per provider, PyTorch's, and its nominal traffic."""

    name: str
    shape: str
    inputs: dict[str, np.ndarray]
    outputs_bytes: int
    call: Callable  # (backend, TensorData inputs) -> result(s)
    torch_call: Callable | None  # (dict of device tensors) -> result(s)
    fused: bool = False
    flops: float = 0.0

    @property
    def inputs_bytes(self) -> int:
        return sum(a.nbytes for a in self.inputs.values())


@dataclass
class Row:
    """The timings of one case: per contender, total / transfer / kernel seconds (min of rounds)."""

    case: Case
    cells: dict[str, dict[str, Timing]] = field(default_factory=dict)


def _shapes(quick: bool) -> dict[str, tuple[int, ...]]:
    if quick:  # a check that the script runs, not a measurement (also the CUDA simulator's size)
        return {"elem": (64, 64), "mm": (32, 32), "attn": (1, 2, 8, 16), "ln": (16, 32)}
    return {"elem": (4096, 4096), "mm": (2048, 2048), "attn": (4, 16, 512, 512), "ln": (16384, 1024)}


def build_cases(quick: bool, seed: int = 0) -> list[Case]:
    """The four primitives and the four fused ops, float32, with inputs made once."""
    from torchlight.backends.cpu import cpu_backend
    from torchlight.core.tensor_data import TensorData

    rng = np.random.default_rng(seed)
    s = _shapes(quick)

    def rand(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    a, b = rand(*s["elem"]), rand(*s["elem"])
    m1, m2 = rand(*s["mm"]), rand(s["mm"][1], s["mm"][0])
    scores = rand(*s["attn"])
    batch, _, q_len, k_len = s["attn"]
    mask = np.where(rng.random((batch, k_len)) < 0.1, -np.inf, 0.0).astype(np.float32)
    ln_x, gamma, beta = rand(*s["ln"]), rand(s["ln"][1]), rand(s["ln"][1])
    ref = cpu_backend()
    td = TensorData.from_array
    probs = ref.attn_softmax_fw(td(scores), td(mask), True).array
    _, mean, rstd = (t.array for t in ref.layernorm_fw(td(ln_x), td(gamma), td(beta)))
    hidden = s["ln"][1]

    def torch_softmax(t: dict) -> object:
        import torch

        keep = torch.ones(q_len, k_len, dtype=torch.bool, device=t["x"].device).tril()
        full = (t["x"] + t["mask"][:, None, None, :]).masked_fill(~keep, float("-inf"))
        return torch.softmax(full, dim=-1)

    def torch_ln_bw(t: dict) -> object:
        import torch

        return torch.ops.aten.native_layer_norm_backward(
            # PyTorch keeps the normalised dim in mean and rstd: [rows, 1].
            t["dy"],
            t["x"],
            [hidden],
            t["mean"].reshape(-1, 1),
            t["rstd"].reshape(-1, 1),
            t["gamma"],
            t["beta"],
            [True, True, True],
        )

    def torch_ln_fw(t: dict) -> object:
        import torch

        return torch.native_layer_norm(t["x"], [hidden], t["gamma"], t["beta"], 1e-5)

    def torch_softmax_bw(t: dict) -> object:
        import torch

        return torch.ops.aten._softmax_backward_data(t["dy"], t["y"], -1, torch.float32)

    elem, attn, ln = ("x".join(map(str, s[k])) for k in ("elem", "attn", "ln"))
    rows, n = s["ln"][0], s["mm"][0]
    mm = f"{n}x{s['mm'][1]} @ {s['mm'][1]}x{n}"
    ln_inputs = {"x": ln_x, "gamma": gamma, "beta": beta}
    ln_bw_inputs = {"dy": ln_x, "x": ln_x, "gamma": gamma, "beta": beta, "mean": mean, "rstd": rstd}
    return [
        Case("map (exp)", elem, {"a": a}, a.nbytes, lambda k, t: k.exp_map(t["a"]), lambda t: t["a"].exp()),
        Case("zip (add)", elem, {"a": a, "b": b}, a.nbytes, lambda k, t: k.add(t["a"], t["b"]), _torch_add),
        Case("reduce (sum, dim 1)", elem, {"a": a}, a.nbytes // a.shape[1], _tl_sum, _torch_sum),
        Case("matmul", mm, {"a": m1, "b": m2}, n * n * 4, _tl_matmul, _torch_matmul,
             flops=2.0 * n * n * m1.shape[1]),
        Case("attn_softmax_fw (mask, causal)", attn, {"x": scores, "mask": mask}, scores.nbytes,
             _tl_softmax_fw, torch_softmax, fused=True),
        Case("attn_softmax_bw", attn, {"y": probs, "dy": scores}, scores.nbytes,
             lambda k, t: k.attn_softmax_bw(t["y"], t["dy"]), torch_softmax_bw, fused=True),
        Case("layernorm_fw", ln, ln_inputs, ln_x.nbytes + 2 * rows * 4,
             lambda k, t: k.layernorm_fw(t["x"], t["gamma"], t["beta"]), torch_ln_fw, fused=True),
        Case("layernorm_bw", ln, ln_bw_inputs, ln_x.nbytes + 2 * hidden * 4,
             lambda k, t: k.layernorm_bw(t["dy"], t["x"], t["gamma"], t["mean"], t["rstd"]), torch_ln_bw,
             fused=True),
    ]  # fmt: skip


def _torch_add(t: dict) -> object:
    return t["a"] + t["b"]


def _torch_sum(t: dict) -> object:
    return t["a"].sum(dim=1, keepdim=True)


def _torch_matmul(t: dict) -> object:
    return t["a"] @ t["b"]


def _tl_sum(k, t: dict) -> object:
    return k.add_reduce(t["a"], 1)


def _tl_matmul(k, t: dict) -> object:
    return k.matmul(t["a"], t["b"])


def _tl_softmax_fw(k, t: dict) -> object:
    return k.attn_softmax_fw(t["x"], t["mask"], True)


# --- timing -------------------------------------------------------------------------------------


def _rounds(fn: Callable[[], float | None], repeat: int) -> tuple[Timing, Timing]:
    """(total, transfer) per round of ``fn``, which returns its transfer seconds (or None: 0)."""
    fn()  # warm-up: JIT compilation, first allocations
    totals, transfers = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        moved = fn() or 0.0
        totals.append(time.perf_counter() - start)
        transfers.append(moved)
    return Timing(tuple(totals)), Timing(tuple(transfers))


def _kernel(total: Timing, transfer: Timing) -> Timing:
    return Timing(tuple(max(t - m, 0.0) for t, m in zip(total.samples, transfer.samples)))


def timed_provider_class(base: type) -> type:
    """``base`` with every host<->device copy timed into ``transfer_s``."""

    class Timed(base):
        transfer_s = 0.0

        def _to_device(self, array):
            start = time.perf_counter()
            out = super()._to_device(array)
            self.transfer_s += time.perf_counter() - start
            return out

        def _to_host(self, device_array, size):
            self._cuda.synchronize()  # a kernel still running is kernel time, not copy time
            start = time.perf_counter()
            out = super()._to_host(device_array, size)
            self.transfer_s += time.perf_counter() - start
            return out

    Timed.__name__ = f"Timed{base.__name__}"
    return Timed


def _copy_seconds(cuda, inputs: dict[str, np.ndarray], outputs_bytes: int) -> float:
    """The same copies a CUDA C launcher makes: its inputs to the device, its outputs back."""
    host_out = np.empty(max(outputs_bytes // 4, 1), np.float32)
    dev_out = cuda.device_array(host_out.size, np.float32)
    cuda.synchronize()
    start = time.perf_counter()
    for array in inputs.values():
        cuda.to_device(array)
    dev_out.copy_to_host(host_out)
    return time.perf_counter() - start


def time_torchlight(case: Case, provider, repeat: int, copies_inside: bool, cuda) -> dict[str, Timing]:
    """total, transfer and kernel timings of ``case`` on a CudaBackend over ``provider``."""
    from torchlight.backends.numba_cuda.backend import CudaBackend
    from torchlight.core.tensor_data import TensorData

    backend = CudaBackend(provider)
    args = {k: TensorData.from_array(v) for k, v in case.inputs.items()}

    def once() -> float:
        if copies_inside:
            provider.transfer_s = 0.0
            case.call(backend, args)
            return provider.transfer_s
        case.call(backend, args)
        return _copy_seconds(cuda, case.inputs, case.outputs_bytes)

    if copies_inside:
        total, transfer = _rounds(once, repeat)
    else:  # the copies are timed next to each call, not inside it: total is the call alone
        case.call(backend, args)
        samples, moved = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            case.call(backend, args)
            samples.append(time.perf_counter() - start)
            moved.append(_copy_seconds(cuda, case.inputs, case.outputs_bytes))
        total, transfer = Timing(tuple(samples)), Timing(tuple(moved))
    return {"total": total, "transfer": transfer, "kernel": _kernel(total, transfer)}


def time_torch(case: Case, torch, repeat: int) -> dict[str, Timing]:
    """PyTorch: kernel time on device tensors; transfer time of the same inputs and outputs."""
    device = {k: torch.from_numpy(v).cuda() for k, v in case.inputs.items()}

    def kernel_once() -> None:
        torch.cuda.synchronize()
        case.torch_call(device)
        torch.cuda.synchronize()

    def transfer_once() -> float:
        torch.cuda.synchronize()
        start = time.perf_counter()
        moved = [torch.from_numpy(v).cuda() for v in case.inputs.values()]
        out = torch.empty(max(case.outputs_bytes // 4, 1), device="cuda")
        torch.cuda.synchronize()
        out.cpu()
        del moved
        return time.perf_counter() - start

    kernel_once()
    kernel_samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        kernel_once()
        kernel_samples.append(time.perf_counter() - start)
    transfer_once()
    transfer = Timing(tuple(transfer_once() for _ in range(repeat)))
    kernel = Timing(tuple(kernel_samples))
    total = Timing(tuple(k + m for k, m in zip(kernel.samples, transfer.samples)))
    return {"total": total, "transfer": transfer, "kernel": kernel}


# --- the report -------------------------------------------------------------------------------------


def _ms(t: Timing | None) -> str:
    return "" if t is None else f"{t.min * 1e3:.3f} {t.spread_text()}"


def _gbps(case: Case, kernel: Timing | None) -> str:
    if kernel is None or kernel.min <= 0:
        return ""
    return f"{(case.inputs_bytes + case.outputs_bytes) / kernel.min / 1e9:.1f}"


def markdown(rows: list[Row], contenders: list[str], header: list[str]) -> str:
    """One table per contender pair: ms (min, spread), GB/s and the ratio to PyTorch."""
    lines = [*header, ""]
    lines.append(
        "| op | shape | contender | op ms (with copies) | transfer ms | kernel ms | kernel GB/s | "
        "GFLOP/s | kernel / PyTorch |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    flagged = total = 0
    for row in rows:
        torch_kernel = row.cells.get("pytorch", {}).get("kernel")
        for name in contenders:
            cell = row.cells.get(name)
            if cell is None:
                continue
            kernel = cell["kernel"]
            for t in cell.values():
                total += 1
                flagged += t.wide
            flops = f"{row.case.flops / kernel.min / 1e9:.0f}" if row.case.flops and kernel.min > 0 else ""
            ratio = "" if name == "pytorch" or torch_kernel is None else kernel.ratio_text(torch_kernel, "x")
            lines.append(
                f"| {row.case.name} | {row.case.shape} | {name} | {_ms(cell['total'])} | "
                f"{_ms(cell['transfer'])} | {_ms(kernel)} | {_gbps(row.case, kernel)} | {flops} | {ratio} |"
            )
    lines.append("")
    if flagged:
        lines.append(
            f"! {flagged} of {total} numbers have rounds that disagree by more than 25%: do not trust them."
        )
    else:
        lines.append(f"All {total} numbers' rounds agree within 25%.")
    return "\n".join(lines) + "\n"


def _torch_or_reason():
    try:
        import torch
    except ImportError as err:
        return None, f"PyTorch is not installed ({err}): its columns are left out"
    if not torch.cuda.is_available():
        return None, f"PyTorch {torch.__version__} sees no CUDA device: its columns are left out"
    return (
        torch,
        f"PyTorch {torch.__version__} (CUDA {torch.version.cuda}) on {torch.cuda.get_device_name(0)}",
    )


def main(argv: list[str] | None = None) -> int:
    """Time every case on each contender and print (and write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help=f"rounds per number (at least {MIN_REPEAT})")
    parser.add_argument(
        "--quick", action="store_true", help="tiny shapes: checks the script runs, measures nothing"
    )
    parser.add_argument(
        "--kernel-dir", type=Path, help="the CUDA C libraries (default: where the loader looks)"
    )
    parser.add_argument("--markdown", type=Path, help="also write the table here")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    if args.repeat < MIN_REPEAT:
        parser.error(f"--repeat {args.repeat}: at least {MIN_REPEAT} rounds are needed to judge the spread")
    require("numba.cuda", "the GPU the kernels run on")
    from numba import cuda

    simulator = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
    if not simulator and not cuda.is_available():
        print("bench_gpu.py: numba-cuda finds no usable CUDA GPU here (see `nvidia-smi`)", file=sys.stderr)
        return 2
    from torchlight.backends.cuda_c.loader import KernelLibraryError
    from torchlight.backends.cuda_c.provider import CudaCKernelProvider
    from torchlight.backends.numba_cuda.provider import CudaProvider

    header = ["# torchlight on the GPU against PyTorch", ""]
    if simulator:
        header.append("NUMBA_ENABLE_CUDASIM=1: the CUDA simulator, so these are no GPU timings.")
    else:
        name = cuda.get_current_device().name
        header.append(f"GPU: {name.decode(errors='replace') if isinstance(name, bytes) else name}")
    providers: dict[str, tuple[object, bool]] = {"numba-cuda": (timed_provider_class(CudaProvider)(), True)}
    try:
        cuda_c = CudaCKernelProvider(kernel_dir=args.kernel_dir) if args.kernel_dir else CudaCKernelProvider()
        providers["cuda-c"] = (cuda_c, False)
    except KernelLibraryError as err:
        header.append(f"CUDA C kernels: not loaded ({err}); their rows are left out")
    torch, torch_line = _torch_or_reason()
    header.append(torch_line)
    contenders = [*providers, "pytorch"] if torch else list(providers)
    rows = []
    for case in build_cases(args.quick):
        row = Row(case)
        for name, (provider, inside) in providers.items():
            if name == "cuda-c" and not case.fused:
                continue  # the CUDA C libraries hold the fused ops only
            row.cells[name] = time_torchlight(case, provider, args.repeat, inside, cuda)
        if torch is not None and case.torch_call is not None:
            row.cells["pytorch"] = time_torch(case, torch, args.repeat)
        rows.append(row)
        print(f"timed {case.name} {case.shape}", file=sys.stderr, flush=True)
    table = markdown(rows, contenders, header)
    print(table)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(table)
    if args.json:
        record = [
            {
                "op": r.case.name,
                "shape": r.case.shape,
                "bytes": r.case.inputs_bytes + r.case.outputs_bytes,
                "flops": r.case.flops,
                "contenders": {n: {k: list(t.samples) for k, t in c.items()} for n, c in r.cells.items()},
            }
            for r in rows
        ]
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"header": header, "rows": record}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
