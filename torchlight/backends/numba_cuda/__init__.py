"""numba-cuda on an NVIDIA GPU or its simulator: ``kernels``, ``provider`` (CudaProvider),
``backend`` (CudaBackend) and ``cudasim_shims`` (what makes the simulator answer as a GPU does).

Public names are imported from ``torchlight.backends.cuda``, the CUDA backends' public path.
"""
