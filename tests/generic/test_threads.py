"""Eight Python threads sharing one backend each get the answer the CPU reference gives alone.

The README's thread rule: every backend may be called from several Python threads; the cuda
backends serialize their device work under one process-wide lock (``launch_lock``), because
numba-cuda's simulator swaps module globals per launch and the simulator runtime keeps one
launch per process. The work mixes primitives, the fused ops (float32, so ``cuda-c`` runs its
CUDA C launchers) and their backward passes.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from tl_testing import assert_close

import torchlight as tl
from torchlight.backends import get_backend

THREADS = 8
ROUNDS = 2
JOIN_TIMEOUT_S = 600  # a hang fails the test instead of the run


def _work(device, seed: int) -> dict[str, np.ndarray]:
    """Fused attention softmax and layer norm, a matmul and their gradients, for one seed."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    scores = tl.tensor(rng.uniform(-3, 3, (2, 2, 3, 5)).astype(f32), device=device, requires_grad=True)
    mask = tl.tensor(np.where(rng.random((2, 5)) < 0.3, -2.0, 0.0).astype(f32), device=device)
    x = tl.tensor(rng.uniform(-2, 2, (4, 6)).astype(f32), device=device, requires_grad=True)
    gamma = tl.tensor(rng.uniform(0.5, 1.5, (6,)).astype(f32), device=device, requires_grad=True)
    beta = tl.tensor(rng.uniform(-0.5, 0.5, (6,)).astype(f32), device=device, requires_grad=True)
    w = tl.tensor(rng.uniform(-1, 1, (6, 3)).astype(f32), device=device, requires_grad=True)
    probs = scores.attn_softmax(mask, causal=True)
    normed = x.layer_norm(gamma, beta)
    out = (normed @ w).tanh()
    loss = (probs * probs).sum() + (out * out).sum()
    loss.backward()
    tensors = {"probs": probs, "normed": normed, "out": out, "loss": loss}
    tensors.update(
        {f"grad {n}": t.grad for n, t in [("scores", scores), ("x", x), ("gamma", gamma), ("w", w)]}
    )
    return {name: t.numpy() for name, t in tensors.items()}


@pytest.mark.op("threads")
def test_eight_threads_get_the_cpu_answers(backend):
    seeds = [(thread, r) for thread in range(THREADS) for r in range(ROUNDS)]
    reference = {seed: _work(get_backend("cpu"), seed[0] * 100 + seed[1]) for seed in seeds}
    results: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    errors: list[str] = []
    start = threading.Barrier(THREADS)

    def run(thread: int) -> None:
        try:
            start.wait()
            for r in range(ROUNDS):
                results[(thread, r)] = _work(backend, thread * 100 + r)
        except Exception as err:  # reported below with the thread's number
            errors.append(f"thread {thread}: {type(err).__name__}: {err}")

    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(JOIN_TIMEOUT_S)
    assert not any(w.is_alive() for w in workers), "a thread did not finish: the backend hangs under threads"
    assert not errors, f"{len(errors)} of {THREADS} threads failed:\n" + "\n".join(errors)
    for seed in seeds:
        for name, expected in reference[seed].items():
            assert_close(results[seed][name], expected, np.float32, scale=10, what=f"{seed} {name}")


@pytest.mark.op("threads")
@pytest.mark.requires_backend("cuda", reason="threads name device='cuda' (a GPU, or NUMBA_ENABLE_CUDASIM=1)")
def test_threads_naming_the_cuda_device_share_one_backend():
    results: dict[int, dict[str, np.ndarray]] = {}
    backends: dict[int, object] = {}
    errors: list[str] = []
    start = threading.Barrier(THREADS)

    def run(thread: int) -> None:
        try:
            start.wait()
            backends[thread] = get_backend("cuda")
            results[thread] = _work("cuda", thread)
        except Exception as err:  # reported below with the thread's number
            errors.append(f"thread {thread}: {type(err).__name__}: {err}")

    workers = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(THREADS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(JOIN_TIMEOUT_S)
    assert not any(w.is_alive() for w in workers), "a thread did not finish: the backend hangs under threads"
    assert not errors, f"{len(errors)} of {THREADS} threads failed:\n" + "\n".join(errors)
    assert len({id(b) for b in backends.values()}) == 1, "get_backend('cuda') built more than one backend"
    for thread in range(THREADS):
        for name, expected in _work(get_backend("cpu"), thread).items():
            assert_close(
                results[thread][name], expected, np.float32, scale=10, what=f"thread {thread} {name}"
            )
