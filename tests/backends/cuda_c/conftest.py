"""Fixtures of the CUDA C library tests: the configured kernel libraries, and whether they run here."""

from __future__ import annotations

import numpy as np
import pytest

from torchlight.backends.cuda_c import loader as cuda_c_loader
from torchlight.backends.cuda_c.loader import CudaCKernelError, CudaCKernels, find_kernel_dir, load_kernels
from torchlight.core.tensor_data import TensorData

# cudaErrorStubLibrary (34), cudaErrorInsufficientDriver (35), cudaErrorNoDevice (100): an nvcc
# build loaded on a machine without a usable GPU.
NO_GPU_CODES = (34, 35, 100)


@pytest.fixture(scope="session")
def kernels() -> CudaCKernels:
    """The libraries in TORCHLIGHT_CUDA_KERNEL_DIR (or the package); skips saying why when none exist."""
    directory = find_kernel_dir()  # a bad TORCHLIGHT_CUDA_KERNEL_DIR raises here, loudly
    if directory is None:
        pytest.skip(
            f"no kernel libraries: {cuda_c_loader.KERNEL_DIR_ENV} is unset and torchlight/cuda_kernels/ "
            "holds no built .so (python -m torchlight build-kernels [--simulator] builds them)"
        )
    return load_kernels(directory)


@pytest.fixture(scope="session")
def runnable(kernels: CudaCKernels) -> CudaCKernels:
    """Libraries that can actually run a kernel here; skips an nvcc build without a GPU."""
    one = TensorData.from_array(np.ones((1, 1), np.float32))
    try:
        kernels.attn_softmax_bw(one, one)
    except CudaCKernelError as err:
        if err.code in NO_GPU_CODES:
            pytest.skip(f"the libraries in {kernels.origin} need an NVIDIA GPU here ({err.error_name})")
        raise
    return kernels
