"""Compile CUDA sources with g++ into shared objects, check executables or whole programs.

The build's public names, by the module of each role:

* ``toolchain.py``: the C++ compiler, the optional flags it takes, the CPU's flags and NVIDIA's
  headers (``compiler``, ``target_flags``, ``toolkit_include``, ...);
* ``build_cache.py``: the cache folder and its artefacts, keyed by a hash of their inputs;
* ``compiler_errors.py``: a compiler run, and its failure explained in the program's terms;
* ``runtime_build.py``: the runtime, the simulator's cuBLAS and cuRAND, the supervisor;
* ``source_compile.py``: one source into an object (the front end's rewrite for ``.cu``);
* ``program_link.py``: the links (``build_shared``, ``build_executable``, ``build_program``);
* ``modes.py``: each mode's flags.

A ``.cu`` source is preprocessed by g++ (``-DSIM_FRONTEND``, the runtime header force-included,
line markers kept), parsed and rewritten by the front end (``transform.py``), and the rewritten
preprocessed text is compiled by g++ as ``c++-cpp-output``. Every artefact is cached by a hash of
its inputs (preprocessed text, runtime sources, flags, ``__CUDA_ARCH__``, compiler version) under
``build/simulator-cache`` (or ``$SIMULATOR_CACHE``): a hit costs one ``g++ -E`` and no parse, or
only a check of the files that ``g++ -E`` read (``source_manifest.py``).
"""

from __future__ import annotations

from .build_cache import cache_dir
from .compiler_errors import LIBRARIES_HINT, LIBRARIES_OUT_OF_SCOPE
from .errors import SimBuildError
from .modes import BUILD_MODES, BUILD_NAMED, MODES
from .program_link import (
    build_executable,
    build_program,
    build_shared,
    library_objects,
    link_flags,
    object_symbols,
    stub_object,
    stub_objects,
    system_symbols,
)
from .runtime_build import (
    LIBRARIES,
    REAPER_SOURCE,
    library_object,
    reaper_program,
    runtime_flags,
    runtime_object,
    runtime_units,
)
from .source_compile import (
    CUDA_SUFFIXES,
    DEFAULT_ARCH,
    HOST_C_SUFFIXES,
    HOST_CXX_SUFFIXES,
    check_defines,
    kernel_object,
    translate_preprocessed,
    translate_source,
)
from .toolchain import (
    PACKAGE_DIR,
    PORTABLE_VARIABLE,
    RUNTIME_DIR,
    compiler,
    host_has_fma,
    nvcc_macros,
    portable,
    target_flags,
    toolkit_flags,
    toolkit_include,
)

__all__ = [
    "BUILD_MODES",
    "BUILD_NAMED",
    "CUDA_SUFFIXES",
    "DEFAULT_ARCH",
    "HOST_CXX_SUFFIXES",
    "HOST_C_SUFFIXES",
    "LIBRARIES",
    "LIBRARIES_HINT",
    "LIBRARIES_OUT_OF_SCOPE",
    "MODES",
    "PACKAGE_DIR",
    "PORTABLE_VARIABLE",
    "REAPER_SOURCE",
    "REPO_ROOT",
    "RUNTIME_DIR",
    "SimBuildError",
    "build_executable",
    "build_program",
    "build_shared",
    "cache_dir",
    "check_defines",
    "compiler",
    "host_has_fma",
    "kernel_object",
    "library_object",
    "library_objects",
    "link_flags",
    "nvcc_macros",
    "object_symbols",
    "portable",
    "reaper_program",
    "runtime_flags",
    "runtime_object",
    "runtime_units",
    "stub_object",
    "stub_objects",
    "system_symbols",
    "target_flags",
    "toolkit_flags",
    "toolkit_include",
    "translate_preprocessed",
    "translate_source",
]

REPO_ROOT = PACKAGE_DIR.parent
