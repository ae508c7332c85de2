"""Run CUDA C kernels on a CPU: every CUDA thread is a fiber, so barriers and warp shuffles
behave as on a GPU; optional memcheck (ASan+UBSan), racecheck (TSan) and synccheck builds."""

from .build import SimBuildError, build_executable, build_shared
from .check import CheckResult, run_check
from .modes import CHECK_MODES, MODES

__all__ = [
    "MODES",
    "CHECK_MODES",
    "CheckResult",
    "SimBuildError",
    "build_executable",
    "build_shared",
    "run_check",
]
