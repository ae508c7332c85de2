"""Run every launcher of the shipped CUDA C kernels on edge shapes and check the results.

    python3 -m ci.sanitize_kernels --kernel-dir build/kernels

This is the program ``ci/gpu-check.sh`` runs under ``compute-sanitizer --tool memcheck`` and
``--tool racecheck``: it goes through the same ctypes launchers as ``device="cuda"`` (each does
its own device allocation, copies and launch) and imports no numba, so every CUDA call the
sanitizer sees is one of the kernels'. The shapes sit at the kernels' edges: rows shorter and
longer than a block, lengths that are not a multiple of 32, one-element rows, broadcast masks,
fully masked rows and causal rows. Each result is compared with the numpy reference; the exit
status is 0 when all agree, 1 when one does not.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator

import numpy as np

# float32 against the numpy reference, as tests/backends/cuda_c/test_cuda_c_library.py allows
# (few rows here, so the row sums of dgamma and dbeta stay inside the layer-norm bound).
TOLERANCE = {"attn_softmax": {"rtol": 2e-5, "atol": 1e-6}, "layernorm": {"rtol": 1e-4, "atol": 1e-5}}
# (batch, heads, q_len, k_len) for attention; (rows, hidden) for layer norm.
ATTN_SHAPES = [(1, 1, 1, 1), (2, 3, 5, 7), (1, 2, 4, 33), (2, 1, 3, 257), (1, 1, 2, 1100)]
LN_SHAPES = [(1, 1), (3, 7), (5, 33), (2, 257), (4, 1100)]


def _cases(rng: np.random.Generator) -> Iterator[tuple[str, Callable]]:
    """(label, run(kernels)) per launcher and shape; run takes the CUDA C kernels or the reference."""
    from torchlight.core.tensor_data import TensorData

    td = TensorData.from_array
    for shape in ATTN_SHAPES:
        batch, heads, q_len, k_len = shape
        x = rng.standard_normal(shape).astype(np.float32)
        masks = {
            "no mask": None,
            "[batch, k_len] mask": np.where(rng.random((batch, k_len)) < 0.3, -np.inf, 0.0),
            "[1, 1, q_len, k_len] mask": np.where(rng.random((1, 1, q_len, k_len)) < 0.3, -np.inf, 0.5),
            "fully masked": np.full((batch, k_len), -np.inf),
        }
        for name, mask in masks.items():
            m = None if mask is None else td(mask.astype(np.float32))
            for causal in (False, True):
                label = f"attn_softmax_fw {shape} {name} causal={causal}"
                yield label, (lambda k, m=m, c=causal, x=x: k.attn_softmax_fw(td(x), m, c))
        y = np.exp(x - x.max(-1, keepdims=True))
        y = (y / y.sum(-1, keepdims=True)).astype(np.float32)
        dy = rng.standard_normal(shape).astype(np.float32)
        yield f"attn_softmax_bw {shape}", (lambda k, y=y, dy=dy: k.attn_softmax_bw(td(y), td(dy)))
    for rows, hidden in LN_SHAPES:
        x = rng.standard_normal((rows, hidden)).astype(np.float32)
        gamma = rng.standard_normal(hidden).astype(np.float32)
        beta = rng.standard_normal(hidden).astype(np.float32)
        dy = rng.standard_normal((rows, hidden)).astype(np.float32)

        def fw(k, x=x, gamma=gamma, beta=beta):
            return k.layernorm_fw(td(x), td(gamma), td(beta))

        def bw(k, x=x, gamma=gamma, beta=beta, dy=dy):
            _, mean, rstd = k.layernorm_fw(td(x), td(gamma), td(beta))
            return k.layernorm_bw(td(dy), td(x), td(gamma), mean, rstd)

        yield f"layernorm_fw ({rows}, {hidden})", fw
        yield f"layernorm_bw ({rows}, {hidden})", bw


def _arrays(result) -> list[np.ndarray]:
    parts = result if isinstance(result, tuple) else (result,)
    return [np.asarray(p.array) for p in parts]


def main(argv: list[str] | None = None) -> int:
    """Run every case on the libraries in --kernel-dir; print one line per mismatch and a total."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--kernel-dir", required=True, help="folder with softmax_kernel.so, layernorm_kernel.so"
    )
    args = parser.parse_args(argv)
    from torchlight.backends.cpu import cpu_backend
    from torchlight.backends.cuda_c.loader import load_kernels

    kernels, reference = load_kernels(args.kernel_dir), cpu_backend()
    rng = np.random.default_rng(0)
    bad = total = 0
    for label, run in _cases(rng):
        total += 1
        got, want = _arrays(run(kernels)), _arrays(run(reference))
        for i, (g, w) in enumerate(zip(got, want)):
            tol = TOLERANCE[label.split()[0].rsplit("_", 1)[0]]
            if g.shape != w.shape or not np.allclose(g, w, equal_nan=True, **tol):
                worst = float(np.nanmax(np.abs(g - w))) if g.shape == w.shape else float("nan")
                print(f"MISMATCH {label} output {i}: shapes {g.shape} vs {w.shape}, max |diff| {worst:.3g}")
                bad += 1
    print(f"sanitize_kernels: {total - bad} of {total} launcher calls match the numpy reference")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
