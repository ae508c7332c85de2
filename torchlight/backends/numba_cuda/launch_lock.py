"""The process-wide lock that makes the numba-cuda kernels safe to call from several Python threads.

The rule: the numba-cuda device work of the ``cuda`` and ``cuda-c`` backends (each transfer
and each launch) runs under ``LAUNCH_LOCK``, one at a time per process. Threads may share
those backends and each gets the answer it would get alone; their device work is serialized.
A lock rather than trust in the layer below: numba-cuda's simulator swaps the ``numba.cuda``
module's globals for the duration of every launch, so a launch in a second thread sees the
first one's fake thread objects, or none (``'Thread' object has no attribute 'threadIdx'``).
On a GPU the launches share the default stream anyway, so the lock costs no parallelism.

The CUDA C launchers need no lock of ours: the CUDA runtime is thread-safe, and the
simulator runtime serializes launches itself and keeps each host thread's last error.

Importing this module imports nothing else.
"""

from __future__ import annotations

import threading

# Re-entrant: a transfer or launch may run inside another one's block in the same thread.
LAUNCH_LOCK = threading.RLock()
