"""Every mutation operator by name, and the files the session mutates.

An operator is one registry entry: its name, what bug it plants, and the function that finds its
sites in a CUDA C file and/or in a Python kernel file (None where the language has no such
construct). ``generate`` runs every operator over every target file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from . import cuda_operators as c
from . import python_operators as py
from .cuda_source import CudaSource
from .model import Mutant, one_line
from .python_source import PythonSource


@dataclass(frozen=True)
class Operator:
    """One kind of GPU bug and where to plant it."""

    name: str
    bug: str
    cuda: Callable[[CudaSource], list[Mutant]] | None
    python: Callable[[PythonSource], list[Mutant]] | None


OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Operator(
            "barrier-removed",
            "a __syncthreads() / cuda.syncthreads() deleted",
            c.barrier_removed,
            py.barrier_removed,
        ),
        Operator(
            "barrier-in-branch",
            "a barrier moved into the branch before it, or reached by half the threads",
            c.barrier_in_branch,
            py.barrier_in_branch,
        ),
        Operator(
            "shuffle-offset",
            "a warp shuffle loop's first lane offset halved, or its last step (offset 1) dropped",
            c.shuffle_offset,
            None,
        ),
        Operator("shuffle-width", "a warp shuffle over 16 lanes instead of 32", c.shuffle_width, None),
        Operator("shuffle-mask", "a warp shuffle's member mask naming lanes 0-15 only", c.shuffle_mask, None),
        Operator(
            "reduction-identity",
            "a reduction's start value wrong (0 -> 1, -inf -> 0, start -> start + 1)",
            c.reduction_identity,
            py.reduction_identity,
        ),
        Operator(
            "bounds-guard",
            "an index-against-size comparison off by one (< and <=, > and >= swapped)",
            c.bounds_guard,
            py.bounds_guard,
        ),
        Operator(
            "block-stride",
            "a loop over a block's threads running one trip, or striding by a warp (32)",
            c.block_stride,
            py.block_stride,
        ),
        Operator(
            "grid-stride",
            "a grid-stride loop running one trip (one item per block)",
            c.grid_stride,
            py.grid_stride,
        ),
        Operator("shared-extent", "shared memory one element short", c.shared_extent, py.shared_extent),
        Operator(
            "broadcast-index",
            "a broadcast dim indexed as a full one (stride taken as 1, size-1 test dropped, dims "
            "aligned from the left)",
            c.broadcast_index,
            py.broadcast_index,
        ),
        Operator("host-copy-extent", "a host<->device copy of n - 1 elements", c.host_copy_extent, None),
        Operator(
            "host-copy-direction",
            "a cudaMemcpy in the wrong direction (kind swapped, or source and destination swapped)",
            c.host_copy_direction,
            None,
        ),
        Operator(
            "launch-grid-rounding",
            "a rounded-up block or tile count rounded down",
            c.launch_grid_rounding,
            py.launch_grid_rounding,
        ),
    )
}

# The files the session mutates (repository-relative), in the order mutants are numbered.
CUDA_TARGETS = (
    "torchlight/cuda_kernels/tl_common.cuh",
    "torchlight/cuda_kernels/softmax_kernel.cu",
    "torchlight/cuda_kernels/layernorm_kernel.cu",
)
PYTHON_TARGETS = (
    "torchlight/backends/numba_cuda/kernels.py",
    "torchlight/backends/kernel_bodies.py",
)


def generate(root: Path, operators: list[str] | None = None, files: list[str] | None = None) -> list[Mutant]:
    """Every mutant of the target files under ``root``, by file then line; ``operators`` and
    ``files`` (repository-relative paths) narrow the set."""
    chosen = [OPERATORS[name] for name in (operators or OPERATORS)]
    out: list[Mutant] = []
    for rel in (*CUDA_TARGETS, *PYTHON_TARGETS):
        if files and rel not in files:
            continue
        if rel in CUDA_TARGETS:
            src = CudaSource(root / rel, rel)
            found = [m for op in chosen if op.cuda for m in op.cuda(src)]
        else:
            src = PythonSource(root / rel, rel)
            found = [m for op in chosen if op.python for m in op.python(src)]
        lines = src.data.decode().splitlines()
        found = [replace(m, source_line=one_line(lines[m.line - 1])) for m in found]
        out += sorted(found, key=lambda m: (m.line, m.operator, m.mutated))
    return out


def unknown_operators(names: list[str]) -> list[str]:
    """The names in ``names`` that are not operators."""
    return [n for n in names if n not in OPERATORS]
