"""Several Python threads naming device="cuda" share one backend and get the CPU answers."""

from __future__ import annotations

import numpy as np
import pytest
from tl_testing import THREADS, assert_close, run_in_threads
from tl_testing import thread_work as _work

from torchlight.backends import get_backend


@pytest.mark.requires_backend("cuda", reason="threads name device='cuda' (a GPU, or NUMBA_ENABLE_CUDASIM=1)")
def test_threads_naming_the_cuda_device_share_one_backend():
    results: dict[int, dict[str, np.ndarray]] = {}
    backends: dict[int, object] = {}

    def work(thread: int) -> None:
        backends[thread] = get_backend("cuda")
        results[thread] = _work("cuda", thread)

    run_in_threads(work)
    assert len({id(b) for b in backends.values()}) == 1, "get_backend('cuda') built more than one backend"
    for thread in range(THREADS):
        for name, expected in _work(get_backend("cpu"), thread).items():
            assert_close(
                results[thread][name], expected, np.float32, scale=10, what=f"thread {thread} {name}"
            )
