"""The numba CPU twin of the CUDA kernels: ``backend`` (NumbaBackend) and its ``kernels``.

Public names are imported from ``torchlight.backends.cuda``, the one re-export path.
"""
