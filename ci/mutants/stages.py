"""Which tests run for a mutant of each file, in what order, with what environment.

A mutant runs its file's stages in order and stops at the first that fails: the cheap, targeted
tests first, the device-generic suite last. Every stage is a test run one of the CPU tiers makes
(``ci/tiers.py`` gives its environment), restricted to the folders that exercise the file:

* a CUDA C kernel: build it with the simulator, then the cudasim tier's CUDA C library tests,
  the sanitize tier's checks of the shipped kernels (memcheck, racecheck, synccheck through
  ``python -m simulator check``, and their numerics through ctypes), then the device-generic
  suite on the ``cuda-c`` backend;
* a numba-cuda kernel: the device-generic suite on the ``cuda`` backend in numba-cuda's simulator,
  then the cudasim tier's numba-cuda tests (the ``gpu_launch`` pass among them);
* a shared body: the cpu tier on the numba twin (the device-generic suite and the twin's own
  tests), then the device-generic suite on numba-cuda, which compiles the same bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ci import tiers

from .registry import CUDA_TARGETS

SIM_KERNEL_DIR = tiers.SIM_KERNEL_DIR
KERNEL_SOURCES = ("torchlight/cuda_kernels/softmax_kernel.cu", "torchlight/cuda_kernels/layernorm_kernel.cu")
PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "-rfE", "--no-header")
# With pytest-timeout installed (the mutants session installs it), a test that hangs (a mutant's
# endless loop) is stopped after this long and its stage fails, instead of the whole stage's limit.
TEST_TIMEOUT = ("--timeout=240", "--timeout-method=thread")
# A launch that never ends (a barrier some threads skip) fails its test instead of hanging the stage.
SIMULATOR_LAUNCH_TIMEOUT_S = "20"


@dataclass(frozen=True)
class Stage:
    """One test run: ``python ARGS`` in the workspace, with the tier's environment."""

    name: str
    tier: str  # the ci/tiers.py tier whose tests these are (its requirements must hold)
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 600.0
    builds: bool = False  # a failure means the mutant does not build (not a kill)
    selective: bool = False  # runs only the tests that ran the mutant's lines (reach.py)


def _tier_env(tier: str, **extra: str) -> dict[str, str]:
    env = tiers.tier(tier).environment()
    env.update(extra)
    return env


def _cudasim(backends: str) -> dict[str, str]:
    return _tier_env(
        "cudasim",
        TORCHLIGHT_TEST_BACKENDS=backends,
        TORCHLIGHT_CUDA_KERNEL_DIR=SIM_KERNEL_DIR,
        SIMULATOR_TIMEOUT=SIMULATOR_LAUNCH_TIMEOUT_S,
    )


BUILD = Stage(
    "simulator build",
    "cudasim",
    ("-m", "simulator", "build", *KERNEL_SOURCES, "--out", SIM_KERNEL_DIR),
    timeout_s=900.0,
    builds=True,
)
CUDA_C_TESTS = "tests/backends/cuda_c"
NUMERICS_FIRST = "test_cuda_c_library.py"  # most CUDA C mutants fail here, before the slower error paths


def _cuda_c_files() -> tuple[str, ...]:
    """The CUDA C test files, the numerics file first (pytest keeps the order of file arguments)."""
    names = sorted(p.name for p in (tiers.ROOT / CUDA_C_TESTS).glob("test_*.py"))
    ordered = sorted(names, key=lambda n: n != NUMERICS_FIRST)
    return tuple(f"{CUDA_C_TESTS}/{n}" for n in ordered)


CUDA_C_LIBRARY = Stage(
    "cudasim: CUDA C library tests", "cudasim", (*PYTEST, *_cuda_c_files()), _cudasim("cuda-c"), 600.0
)
SANITIZE = Stage(
    "sanitize: shipped kernels (numerics, memcheck, racecheck, synccheck)",
    "sanitize",
    (*PYTEST, "simulator/tests/test_build.py", "simulator/tests/test_check.py", "-k", "shipped"),
    {"SIMULATOR_TIMEOUT": SIMULATOR_LAUNCH_TIMEOUT_S},
    900.0,
)


def _generic(backend: str) -> Stage:
    """The device-generic suite on ``backend`` in the cudasim tier."""
    name = f"cudasim: device-generic suite on {backend}"
    return Stage(name, "cudasim", (*PYTEST, tiers.GENERIC_TESTS), _cudasim(backend), 900.0, selective=True)


GENERIC_CUDA_C = _generic("cuda-c")
GENERIC_CUDA = _generic("cuda")
NUMBA_CUDA_TESTS = Stage(
    "cudasim: numba-cuda tests (gpu_launch pass included)",
    "cudasim",
    (*PYTEST, "tests/backends/cuda"),
    _cudasim("cuda"),
    900.0,
    selective=True,
)
TWIN = Stage(
    "cpu: numba twin (device-generic suite and twin tests)",
    "cpu",
    (*PYTEST, tiers.GENERIC_TESTS, "tests/backends/numba"),
    _tier_env("cpu", TORCHLIGHT_TEST_BACKENDS="numba"),
    1200.0,
)

STAGES: dict[str, tuple[Stage, ...]] = {
    **{rel: (BUILD, CUDA_C_LIBRARY, SANITIZE, GENERIC_CUDA_C) for rel in CUDA_TARGETS},
    "torchlight/backends/numba_cuda/kernels.py": (GENERIC_CUDA, NUMBA_CUDA_TESTS),
    "torchlight/backends/kernel_bodies.py": (TWIN, GENERIC_CUDA),
}


def stages_for(rel: str) -> tuple[Stage, ...]:
    """The stages a mutant of ``rel`` runs, in order."""
    return STAGES[rel]


def tier_problems(can_install: bool = False) -> dict[str, str]:
    """Why each tier the stages use cannot run here (tier -> reason); empty when all can."""
    out = {}
    for name in sorted({s.tier for group in STAGES.values() for s in group}):
        problem = tiers.tier(name).problem(can_install=can_install)
        if problem:
            out[name] = problem
    return out
