"""How a program that includes Thrust or CUB is built.

Thrust, CUB and libcu++ are NVIDIA's CCCL headers, on every program's include path beside the
toolkit's (``cuda_headers.py``). CUB runs as it is written (its kernels launched on the
simulator's threads); Thrust's default device system is its sequential C++ one, whose memory is
device memory to the runtime (``build.toolkit_flags``, runtime/include/thrust/;
simulator/docs/supported.md, "Thrust, CUB and libcu++").
"""

from __future__ import annotations

import re

__all__ = ["compile_flags"]

# A line marker of Thrust's configuration header: the source includes Thrust.
_THRUST_INCLUDED = re.compile(r'(?m)^# \d+ "[^"]*/thrust/detail/config\.h"')


def compile_flags(mode: str, pre: str) -> list[str]:
    """Compiler flags for a source whose preprocessed text ``pre`` includes Thrust (else none).

    memcheck: no UBSan null checks. Thrust reaches its empty system tags through null pointers
    (thrust/detail/reference.h, select_system.inl), by design, on every element access from
    host code: the failed checks made memcheck runs of Thrust programs hundreds of times slower
    than fast ones (segmentationTreeThrust: 253 s against 1 s). Null dereferences are still
    AddressSanitizer's reports.
    """
    if mode == "memcheck" and _THRUST_INCLUDED.search(pre):
        return ["-fno-sanitize=null"]
    return []
