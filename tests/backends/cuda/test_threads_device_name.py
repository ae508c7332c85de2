"""Several Python threads naming device="cuda" share one backend and get the CPU answers."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from tl_testing import THREAD_JOIN_TIMEOUT_S as JOIN_TIMEOUT_S
from tl_testing import THREADS, assert_close
from tl_testing import thread_work as _work

from torchlight.backends import get_backend


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
