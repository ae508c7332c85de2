"""Run CUDA C kernels on a CPU: every CUDA thread is a fiber, so barriers and warp shuffles
behave as on a GPU; optional memcheck (ASan+UBSan), racecheck (TSan) and synccheck builds."""

import gc

# Importing the package makes some hundred thousand objects, none of them garbage: the cyclic
# collector's passes over them were 5-7% of a cached ``python -m simulator run``. Paused for the
# import only, and left as it was.
_COLLECTING = gc.isenabled()
gc.disable()
try:
    from .build import SimBuildError, build_executable, build_shared
    from .check import CheckResult, run_check
    from .modes import CHECK_MODES, MODES
finally:
    if _COLLECTING:
        gc.enable()

__all__ = [
    "MODES",
    "CHECK_MODES",
    "CheckResult",
    "SimBuildError",
    "build_executable",
    "build_shared",
    "run_check",
]
