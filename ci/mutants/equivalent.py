"""Mutants that cannot change any result the kernels return, each with the reason.

A mutant listed here still runs: if a test kills it, the report says the listing is wrong. An
entry names the file, function, operator and the change exactly as the report prints them; an
entry matches every occurrence of that change in that function, or, when it gives ``in_line``, only
those on a source line that contains that text (two sites may read alike, one equivalent, one not).
"""

from __future__ import annotations

from dataclasses import dataclass

from .model import Mutant


@dataclass(frozen=True)
class Equivalent:
    """One change that leaves every result as it was, and why."""

    path: str
    function: str
    operator: str
    original: str
    mutated: str
    reason: str
    in_line: str = ""  # text the site's source line must contain ("" matches any line)
    # The site's line number, for a change whose lines read alike (``j += nt`` in three loops of one
    # kernel, one equivalent); 0 matches any line. An edit of the file that moves the line leaves
    # the mutant unlisted, so a stale number shows as a survivor, never hides one.
    line: int = 0

    def matches(
        self,
        path: str,
        function: str,
        operator: str,
        original: str,
        mutated: str,
        source_line: str = "",
        line: int = 0,
    ) -> bool:
        """Whether the change described (at a site on ``source_line``, line ``line``) is this one."""
        same = (path, function, operator, original, mutated) == (
            self.path,
            self.function,
            self.operator,
            self.original,
            self.mutated,
        )
        return same and self.in_line in source_line and self.line in (0, line)


COMMON = "torchlight/cuda_kernels/tl_common.cuh"
SOFTMAX = "torchlight/cuda_kernels/softmax_kernel.cu"
LAYERNORM = "torchlight/cuda_kernels/layernorm_kernel.cu"
NUMBA_CUDA = "torchlight/backends/numba_cuda/kernels.py"
BODIES = "torchlight/backends/kernel_bodies.py"


def _output_loop_stride(function: str, line: int, item: str, depends_on: str) -> Equivalent:
    """A numba row kernel's output loop striding by 32 instead of its block's width: equivalent."""
    return Equivalent(
        NUMBA_CUDA,
        function,
        "block-stride",
        "nt",
        "32",
        f"the output loop's stride: a row block has 32 threads or more whenever a thread takes more "
        f"than one {item}, so a stride of 32 still reaches every {item}, and one reached twice is "
        f"written the same value twice (it depends on {depends_on} alone)",
        line=line,
    )


EQUIVALENT: tuple[Equivalent, ...] = (
    Equivalent(
        COMMON,
        "tl_row_block",
        "launch-grid-rounding",
        "(len + 31)",
        "len",
        "the block stays a multiple of 32 between 32 and 256 threads (the clamps), and every row kernel "
        "strides over its row by blockDim.x, so any such block covers the row: only the speed changes",
    ),
    Equivalent(
        COMMON,
        "tl_block_sum",
        "reduction-identity",
        "0.0f",
        "1.0f",
        "the start value of the second sum tl_block_sum2 computes for tl_block_sum, which discards it",
    ),
    Equivalent(
        SOFTMAX,
        "tl_attn_softmax_fw_kernel",
        "reduction-identity",
        "0.0f",
        "1.0f",
        "the running sum starts with the running max at -inf: the first live key scales it by "
        "exp(-inf) = 0, and a strip with no live key keeps max -inf, whose sum the merge weighs by 0",
    ),
    Equivalent(
        SOFTMAX,
        "tl_block_online",
        "reduction-identity",
        "0.0f",
        "1.0f",
        "the sum an idle lane brings in with a running max of -inf: its weight exp(-inf - max) is 0 "
        "whatever the sum (and a merge whose max is -inf sets the sum to 0)",
    ),
    Equivalent(
        SOFTMAX,
        "tl_block_online",
        "bounds-guard",
        "lane < nwarps",
        "lane <= nwarps",
        "lane nwarps then reads a sum slot no warp wrote in this launch (stale, even NaN), but its max "
        "keeps its own guard and stays -inf; its first shuffle partner, lane nwarps ^ 16, is idle too, "
        "and a merge of two -inf maxima sets the sum to 0 before it meets a live lane",
        in_line="float ws =",
    ),
    Equivalent(
        LAYERNORM,
        "tl_layernorm_bw",
        "launch-grid-rounding",
        "(rows + TL_MAX_CHUNKS - 1)",
        "rows",
        "it only sizes the row chunks of dgamma/dbeta (at least 32 rows each); the chunk count, the "
        "partial buffer and both kernels follow from the chunk size, so any size sums every row once",
    ),
    Equivalent(
        NUMBA_CUDA,
        "map_kernel",
        "bounds-guard",
        "i < n",
        "i <= n",
        "map_positions takes every index modulo its extent, so element n is element 0 again: the extra "
        "thread writes out[0] the value element 0's thread writes (the output is always a fresh "
        "buffer, never the input)",
    ),
    Equivalent(
        NUMBA_CUDA,
        "matmul_kernel",
        "bounds-guard",
        "by < tiles_m",
        "by <= tiles_m",
        "the extra tile row starts at row tiles_m * tile >= m, so its loads and its store are all "
        "guarded off (row < m): the block computes zeros it never writes, and every thread takes the "
        "extra turn, so its barriers stay uniform",
    ),
    Equivalent(
        NUMBA_CUDA,
        "matmul_kernel",
        "bounds-guard",
        "bx < tiles_n",
        "bx <= tiles_n",
        "the extra tile column starts at column tiles_n * tile >= n, so its B loads and its store are "
        "guarded off (col < n): the block computes values it never writes, and every thread takes "
        "the extra turn, so its barriers stay uniform",
    ),
    Equivalent(
        NUMBA_CUDA,
        "attn_softmax_fw_kernel",
        "block-stride",
        "nt",
        "32",
        "the max loop's stride: a row block has 32 threads or more whenever a thread takes more than "
        "one key (fewer only when they cover every key at once), so a stride of 32 still visits every "
        "key, some twice, and a max (or the +inf mark) taken twice is the same",
        line=417,
    ),
    _output_loop_stride("attn_softmax_fw_kernel", 444, "key", "the key alone"),
    _output_loop_stride("attn_softmax_bw_kernel", 473, "key", "the key and the block's dot product"),
    _output_loop_stride("layernorm_fw_kernel", 512, "element", "the element and the block's mean and rstd"),
    _output_loop_stride("layernorm_bw_kernel", 555, "element", "the element and the block's two means"),
    Equivalent(
        NUMBA_CUDA,
        "attn_softmax_fw_kernel",
        "bounds-guard",
        "q + 1 < k_len",
        "q + 1 <= k_len",
        "it guards `last = q + 1`, whose default is k_len: at equality both give k_len",
    ),
    Equivalent(
        BODIES,
        "softmax_fw_row",
        "bounds-guard",
        "q + 1 < k_len",
        "q + 1 <= k_len",
        "it guards `last = q + 1`, whose default is k_len: at equality both give k_len",
    ),
    Equivalent(
        BODIES,
        "layernorm_param_rows",
        "bounds-guard",
        "stop > rows",
        "stop >= rows",
        "it guards `stop = rows`: at equality the assignment changes nothing",
    ),
    Equivalent(
        LAYERNORM,
        "tl_layernorm_bw_param_partial_kernel",
        "bounds-guard",
        "first + chunk_rows < rows",
        "first + chunk_rows <= rows",
        "the condition picks the smaller of two values (a min): when they are equal both branches give "
        "the same value",
    ),
)


def reason_for(mutant: Mutant) -> str | None:
    """Why ``mutant`` cannot change a result, or None when it is not listed."""
    fields = (mutant.path, mutant.function, mutant.operator, mutant.original, mutant.mutated)
    return reason_for_change(*fields, mutant.source_line, mutant.line)


def reason_for_change(
    path: str, function: str, operator: str, original: str, mutated: str, source_line: str = "", line: int = 0
) -> str | None:
    """Why the change described (at a site on ``source_line``, line ``line``) cannot change a
    result, or None."""
    fields = (path, function, operator, original, mutated, source_line, line)
    return next((e.reason for e in EQUIVALENT if e.matches(*fields)), None)
