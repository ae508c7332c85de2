"""Eight Python threads sharing one backend each get the answer the CPU reference gives alone.

The README's thread rule: every backend may be called from several Python threads; the cuda
backends serialize their device work under one process-wide lock (``launch_lock``), because
numba-cuda's simulator swaps module globals per launch and the simulator runtime keeps one
launch per process. The work mixes primitives, the fused ops (float32, so ``cuda-c`` runs its
CUDA C launchers) and their backward passes.
"""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import THREADS, assert_close, run_in_threads
from tl_testing import thread_work as _work

from torchlight.backends import get_backend

ROUNDS = 2


@pytest.mark.op("threads")
def test_eight_threads_get_the_cpu_answers(backend):
    seeds = [(thread, r) for thread in range(THREADS) for r in range(ROUNDS)]
    reference = {seed: _work(get_backend("cpu"), seed[0] * 100 + seed[1]) for seed in seeds}
    results: dict[tuple[int, int], dict[str, np.ndarray]] = {}

    def work(thread: int) -> None:
        for r in range(ROUNDS):
            results[(thread, r)] = _work(backend, thread * 100 + r)

    run_in_threads(work)
    for seed in seeds:
        for name, expected in reference[seed].items():
            assert_close(results[seed][name], expected, np.float32, scale=10, what=f"{seed} {name}")
