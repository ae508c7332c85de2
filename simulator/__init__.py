"""Run CUDA C kernels on a CPU: every CUDA thread is a fiber, so barriers and warp shuffles
behave as on a GPU; optional memcheck (ASan+UBSan), racecheck (TSan) and synccheck builds."""

from .build import MODES, SimBuildError, build_executable, build_shared
from .check import CHECK_MODES, CheckResult, run_check

__all__ = [
    "MODES",
    "CHECK_MODES",
    "CheckResult",
    "SimBuildError",
    "build_executable",
    "build_shared",
    "run_check",
]
