"""The CUDA C kernel libraries via ctypes: ``loader`` (find, check and call the ``.so`` files,
with ``shared_object`` reading their ELF headers) and ``provider`` (CudaCKernelProvider).

Public names are imported from ``torchlight.backends.cuda``, the CUDA backends' public path.
"""
