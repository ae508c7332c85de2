"""NumbaBackend (the CPU twin) and CudaBackend (numba-cuda on an NVIDIA GPU).

Importing this module never imports numba; numba loads when a backend is first built.
"""

from __future__ import annotations


def cuda_backend():
    """The cached CudaBackend singleton."""
    raise RuntimeError(
        "the 'cuda' device is not available yet in this build of torchlight: use get_backend('cpu')"
    )
