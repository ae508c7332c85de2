"""Run the C++ compiler for one step of a build, and explain its failure in the program's terms.

Every compile and link of a build step runs through here. A failed one is one
:class:`SimBuildError` that names what was compiled, says why in a line where it can (a header
of an NVIDIA library the simulator does not provide, a name CUDA's headers do not declare), and
quotes at most ``_EXCERPT_LINES`` of the compiler's messages.
"""

from __future__ import annotations

import re

from . import cuda_headers
from .compiler_run import invoke
from .errors import SimBuildError

__all__ = [
    "LIBRARIES_HINT",
    "LIBRARIES_OUT_OF_SCOPE",
    "compile_step",
    "compiles",
    "explain_compiler_error",
    "run_compiler",
]


def run_compiler(args: list[str], what: str) -> str:
    """Run the compiler command ``args`` (``what`` it compiles, for messages): its standard output
    (the preprocessed text of a ``-E``), or :class:`SimBuildError` explaining the failure."""
    proc = invoke(args, what)
    if proc.returncode != 0:
        raise SimBuildError(explain_compiler_error(what, proc.stderr))
    return proc.stdout


def compile_step(args: list[str], what: str) -> None:
    """Run the compile or link ``args``; :class:`SimBuildError` explaining a failure."""
    run_compiler(args, what)


def compiles(args: list[str], what: str) -> bool:
    """Whether the compile ``args`` succeeds (a first try, whose failure the caller handles)."""
    return invoke(args, what).returncode == 0


LIBRARIES_HINT = (
    'pip install "torchlight[simulator-libs]" (the nvidia-cublas and nvidia-curand wheels\' headers)'
)


# NVIDIA's libraries the simulator does not provide (it runs CUDA C++, the runtime API and a cuBLAS subset).
_LIBRARY_HEADERS = [
    (r"cublasXt", "cuBLASXt"),
    (r"cudnn", "cuDNN"),
    (r"cufft", "cuFFT"),
    (r"cusparse", "cuSPARSE"),
    (r"cusolver", "cuSOLVER"),
    (r"nccl", "NCCL"),
    (r"cupti", "CUPTI"),
    (r"cutlass/", "CUTLASS"),
    (r"cute/", "CuTe"),
    (r"npp", "NPP"),
    (r"nvrtc", "NVRTC"),
    (r"nvml", "NVML"),
]
LIBRARIES_OUT_OF_SCOPE = (
    "of NVIDIA's libraries it provides CCCL (Thrust, CUB, libcu++; simulator/docs/supported.md) and the "
    "cuBLAS/cublasLt and cuRAND subsets (simulator/docs/libraries.md); the others (cuDNN, cuFFT, cuSPARSE, "
    "NCCL, CUTLASS, ...) are out of its scope: it runs CUDA C++ and the CUDA runtime API"
)

# g++ messages that name a declaration the program expected from CUDA: (pattern, name group(s)).
_UNDECLARED = [
    r"['\u2018]([A-Za-z_][\w:]*)['\u2019] was not declared in this scope",
    r"there are no arguments to ['\u2018]([A-Za-z_]\w*)['\u2019] that depend on a template parameter",
    r"['\u2018]([A-Za-z_][\w:]*)['\u2019] "
    r"(?:does not name a type|has not been declared|is not a namespace-name)",
    r"['\u2018]([A-Za-z_]\w*)['\u2019] in namespace ['\u2018]([\w:]+)['\u2019] "
    r"does not name a (?:template )?type",
    r"['\u2018]([A-Za-z_]\w*)['\u2019] is not a member of ['\u2018]([\w:]+)['\u2019]",
]
_LOCATION = re.compile(r"^(\S+?):(\d+):(?:\d+:)? (?:fatal )?error: ")


def explain_compiler_error(what: str, stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.search(r"\berror\b", ln)]
    hint = ""
    for ln in errors:
        loc = _LOCATION.match(ln)
        where = f"{loc.group(1)}:{loc.group(2)}: " if loc else ""
        m = re.search(r"fatal error: (\S+): No such file or directory", ln)
        if m and re.match(r"(?:cublas|curand)", m.group(1)):
            hint = f"\n{where}<{m.group(1)}> is not installed: {LIBRARIES_HINT}"
            break
        if m:
            header = m.group(1)
            library = next((lib for rx, lib in _LIBRARY_HEADERS if re.match(rx, header, re.IGNORECASE)), None)
            if library:
                hint = (
                    f"\n{where}unsupported header <{header}>: {library} is not provided by the simulator; "
                    f"{LIBRARIES_OUT_OF_SCOPE}"
                )
            else:
                hint = (
                    f"\n{where}unsupported header <{header}>: it is not provided by the simulator "
                    "(see simulator/docs/supported.md for what is supported)"
                )
            break
        for rx in _UNDECLARED:
            m = re.search(rx, ln)
            if m:
                name = m.group(1) if m.lastindex == 1 else f"{m.group(2)}::{m.group(1)}"
                hint = (
                    f"\n{where}'{name}' is declared nowhere: neither the program nor CUDA "
                    f"{cuda_headers.CUDA_MAJOR}'s headers declare it (a name from an older CUDA, or a "
                    "missing #include); see simulator/docs/supported.md for what is supported"
                )
                break
        if hint:
            break
    return f"g++ could not compile {what}:{hint}\n{_excerpt(lines, errors[0] if errors else None)}"


_EXCERPT_LINES = 40
_CONTEXT_LINES = 10  # kept before the first error: where it is included from, what led to it


def _excerpt(lines: list[str], first_error: str | None) -> str:
    """At most ``_EXCERPT_LINES`` of the compiler's ``lines``, always with ``first_error`` among them."""
    at = lines.index(first_error) if first_error is not None else 0
    start = 0 if at < _EXCERPT_LINES - _CONTEXT_LINES else at - _CONTEXT_LINES
    shown = lines[start : start + _EXCERPT_LINES]
    if start:
        shown.insert(0, f"[{start} lines of compiler messages before these left out]")
    return "\n".join(shown)
