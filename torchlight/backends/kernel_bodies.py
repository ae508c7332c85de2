"""Per-thread kernel bodies shared by the numba CPU twin and the numba-cuda kernels.

Every function here is plain Python over 1-D arrays and integers, written so that numba
compiles it unchanged both with ``njit`` and with ``numba.cuda.jit(device=True)``: no numpy
calls, no allocation, no exceptions, no function arguments, loops over ``range`` only. The
module imports nothing but the standard library, so it loads without numba.

Interface
---------
Compile the whole set once per target with the decorator of that target::

    bodies = make_bodies(numba.njit)                                  # CPU twin
    bodies = make_bodies(numba.cuda.jit(device=True, inline="always"))  # CUDA, inlined
    # (inlined device functions compile for any target, so the compile tier needs no GPU)
    bodies.zip_positions(i, out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset)

``make_bodies(jit)`` returns a ``types.SimpleNamespace`` whose attributes are the names in
``BODY_NAMES``, each ``jit(<plain function>)``. The bodies never call one another, so any
decorator works and the compiled set has no cross references to resolve. The plain
functions are also importable by name (for tests, or to compile one body alone).

Argument conventions (all bodies):

* ``shape`` / ``strides`` are 1-D int64 arrays of one tensor's sizes and element strides;
  ``offset`` is its element offset into its flat ``storage`` (a 1-D array).
* ``ordinal`` / ``i`` is the flat row-major number of an output element (a "thread
  index"). It must be a *signed* integer: numba types ``prange`` indices as unsigned, and
  unsigned-by-signed arithmetic becomes float, so the CPU twin casts with ``np.int64(t)``.
  ``cuda.grid(1)`` is already signed.
* Outputs of ``zip``/``reduce``/``matmul`` are freshly allocated and contiguous, so the
  output storage position of thread ``i`` is ``i`` itself; ``map`` takes output strides
  because it may write into a strided ``out=`` view.
* Broadcast inputs may have fewer dims than the output (numpy rule: aligned on the right);
  a size-1 input dim reads index 0.
* The fused-op bodies take contiguous row-major storages and work on one row (or one
  column, or one chunk of rows, for the layernorm parameter gradients); their sums
  accumulate in float64 whatever the storage dtype.

The scalar op itself is not a body argument (function arguments are not portable across
targets): the calling kernel reads inputs at the positions a body returns, applies the op
table's ``scalar`` function (``torchlight.backends.ops``), and writes the result::

    a_pos, b_pos = zip_positions(i, ...)
    out[i] = scalar(a[a_pos], b[b_pos])

Index bodies
    ``to_index(ordinal, shape, index)``: fill ``index`` with the multi-index of ``ordinal``.
    ``index_to_position(index, strides, offset) -> int``.
    ``broadcast_index(big_index, big_shape, shape, index)``: index into a broadcast input.
    ``ordinal_to_position(ordinal, shape, strides, offset) -> int``: the two above fused,
    without a scratch index array.
    ``broadcast_position(ordinal, out_shape, shape, strides, offset) -> int``: storage
    position in a broadcast input of output element ``ordinal``, without scratch arrays.

Per-element bodies
    ``map_positions(i, shape, out_strides, out_offset, a_strides, a_offset) -> (out_pos, a_pos)``
    ``zip_positions(i, out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset)
    -> (a_pos, b_pos)``
    ``reduce_start(i, out_shape, a_strides, a_offset, dim) -> a_pos``: position of the first
    reduced element for output ``i`` (``out_shape`` has size 1 at ``dim``); element ``j``
    of that reduction lies at ``a_pos + j * a_strides[dim]``.
    ``matmul_element(i, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides,
    b_offset) -> float``: output element ``i`` of a batched, batch-broadcast matmul.

Fused-op row bodies (contiguous storages; ``row`` is the thread index)
    ``softmax_fw_row(row, x, mask, y, heads, q_len, k_len, msb, msh, msq, msk, causal)``:
    mask element ``[b, h, q, k]`` at ``b*msb + h*msh + q*msq + k*msk`` (0 strides broadcast;
    all four 0 over a single zero for no mask)
    ``softmax_bw_row(row, y, dy, dx, k_len)``
    ``layernorm_fw_row(row, x, gamma, beta, y, mean, rstd, hidden, eps)``
    ``layernorm_bw_row(row, dy, x, gamma, mean, rstd, dx, hidden)``
    ``layernorm_param_col(col, dy, x, mean, rstd, dgamma, dbeta, rows, hidden)``: one thread
    per hidden column (coalesced on a GPU).
    ``layernorm_param_rows(chunk, rows_per_chunk, rows, dy, x, mean, rstd, dgamma_part,
    dbeta_part, hidden)``: one thread per chunk of rows, partial sums (cache-friendly on a CPU).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import SimpleNamespace

# --- index bodies ---------------------------------------------------------------------


def to_index(ordinal, shape, index):
    """Write the row-major multi-index of ``ordinal`` for ``shape`` into ``index``."""
    rem = ordinal
    for d in range(shape.shape[0] - 1, -1, -1):
        size = shape[d]
        index[d] = rem % size
        rem = rem // size


def index_to_position(index, strides, offset):
    """Storage position of multi-index ``index`` under ``strides`` and ``offset``."""
    pos = offset
    for d in range(strides.shape[0]):
        pos += index[d] * strides[d]
    return pos


def broadcast_index(big_index, big_shape, shape, index):
    """Map an index of the broadcast shape ``big_shape`` to an index of ``shape``."""
    lead = big_shape.shape[0] - shape.shape[0]
    for d in range(shape.shape[0]):
        index[d] = 0 if shape[d] == 1 else big_index[d + lead]


def ordinal_to_position(ordinal, shape, strides, offset):
    """Storage position of row-major element ``ordinal`` of a (strided) tensor."""
    rem = ordinal
    pos = offset
    for d in range(shape.shape[0] - 1, -1, -1):
        size = shape[d]
        pos += (rem % size) * strides[d]
        rem = rem // size
    return pos


def broadcast_position(ordinal, out_shape, shape, strides, offset):
    """Storage position in a broadcast input of output element ``ordinal`` of ``out_shape``."""
    rem = ordinal
    pos = offset
    lead = out_shape.shape[0] - shape.shape[0]
    for d in range(out_shape.shape[0] - 1, -1, -1):
        size = out_shape[d]
        idx = rem % size
        rem = rem // size
        k = d - lead
        if k >= 0 and shape[k] != 1:
            pos += idx * strides[k]
    return pos


# --- per-element bodies of the primitives ---------------------------------------------


def map_positions(i, shape, out_strides, out_offset, a_strides, a_offset):
    """``(out_pos, a_pos)`` of element ``i`` for a map whose input and output share ``shape``."""
    rem = i
    out_pos = out_offset
    a_pos = a_offset
    for d in range(shape.shape[0] - 1, -1, -1):
        size = shape[d]
        idx = rem % size
        rem = rem // size
        out_pos += idx * out_strides[d]
        a_pos += idx * a_strides[d]
    return out_pos, a_pos


def zip_positions(i, out_shape, a_shape, a_strides, a_offset, b_shape, b_strides, b_offset):
    """``(a_pos, b_pos)`` read by contiguous output element ``i`` of a broadcasting zip."""
    rem = i
    a_pos = a_offset
    b_pos = b_offset
    a_lead = out_shape.shape[0] - a_shape.shape[0]
    b_lead = out_shape.shape[0] - b_shape.shape[0]
    for d in range(out_shape.shape[0] - 1, -1, -1):
        size = out_shape[d]
        idx = rem % size
        rem = rem // size
        ka = d - a_lead
        if ka >= 0 and a_shape[ka] != 1:
            a_pos += idx * a_strides[ka]
        kb = d - b_lead
        if kb >= 0 and b_shape[kb] != 1:
            b_pos += idx * b_strides[kb]
    return a_pos, b_pos


def reduce_start(i, out_shape, a_strides, a_offset, dim):
    """Position of the first input element reduced into output ``i`` (size 1 at ``dim``)."""
    rem = i
    pos = a_offset
    for d in range(out_shape.shape[0] - 1, -1, -1):
        size = out_shape[d]
        if d != dim:
            pos += (rem % size) * a_strides[d]
        rem = rem // size
    return pos


def matmul_element(i, out_shape, a, a_shape, a_strides, a_offset, b, b_shape, b_strides, b_offset):
    """Output element ``i`` of ``a @ b`` over the last two dims, batch dims broadcast."""
    nd = out_shape.shape[0]
    cols = out_shape[nd - 1]
    rows = out_shape[nd - 2]
    col = i % cols
    rem = i // cols
    row = rem % rows
    rem = rem // rows
    na = a_shape.shape[0]
    nb = b_shape.shape[0]
    a_pos = a_offset + row * a_strides[na - 2]
    b_pos = b_offset + col * b_strides[nb - 1]
    # Batch dims: out dim d aligns with a dim d - (nd - na) and b dim d - (nd - nb).
    for d in range(nd - 3, -1, -1):
        size = out_shape[d]
        idx = rem % size
        rem = rem // size
        ka = d - (nd - na)
        if ka >= 0 and a_shape[ka] != 1:
            a_pos += idx * a_strides[ka]
        kb = d - (nd - nb)
        if kb >= 0 and b_shape[kb] != 1:
            b_pos += idx * b_strides[kb]
    inner = a_shape[na - 1]
    a_step = a_strides[na - 1]
    b_step = b_strides[nb - 2]
    acc = 0.0
    for k in range(inner):
        acc += a[a_pos + k * a_step] * b[b_pos + k * b_step]
    return acc


# --- fused-op row bodies ----------------------------------------------------------------


def softmax_fw_row(row, x, mask, y, heads, q_len, k_len, msb, msh, msq, msk, causal):
    """Masked/causal softmax of one score row: all NaN when a key it reads is NaN or +inf (as
    PyTorch), all zeros when every key is excluded."""
    base = row * k_len
    q = row % q_len
    # The mask is read through its strides (0 along a broadcast dim; all 0 over a single zero
    # when there is no mask), so a broadcast mask is never expanded.
    mask_base = (row // (q_len * heads)) * msb + ((row // q_len) % heads) * msh + q * msq
    # Keys beyond q are excluded under the causal rule (top-left alignment); never read.
    last = k_len
    if causal and q + 1 < k_len:
        last = q + 1
    row_max = x[base] + mask[mask_base]
    poisoned = not (row_max < math.inf)  # NaN or +inf
    for k in range(1, last):
        v = x[base + k] + mask[mask_base + k * msk]
        if not (v < math.inf):
            poisoned = True
        elif v > row_max:
            row_max = v
    if poisoned:
        for k in range(k_len):
            y[base + k] = math.nan
        return
    if row_max == -math.inf:  # every key excluded: the documented all-zero row
        for k in range(k_len):
            y[base + k] = 0.0
        return
    total = 0.0
    for k in range(last):
        e = math.exp(x[base + k] + mask[mask_base + k * msk] - row_max)
        y[base + k] = e
        total += e
    scale = 1.0 / total
    for k in range(last):
        y[base + k] = y[base + k] * scale
    for k in range(last, k_len):
        y[base + k] = 0.0


def softmax_bw_row(row, y, dy, dx, k_len):
    """``dx = y * (dy - sum(dy * y))`` over one row."""
    base = row * k_len
    dot = 0.0
    for k in range(k_len):
        dot += y[base + k] * dy[base + k]
    for k in range(k_len):
        dx[base + k] = y[base + k] * (dy[base + k] - dot)


def layernorm_fw_row(row, x, gamma, beta, y, mean, rstd, hidden, eps):
    """Normalise one row (two-pass variance); stores the row's mean and rstd."""
    base = row * hidden
    total = 0.0
    for k in range(hidden):
        total += x[base + k]
    mu = total / hidden
    sq = 0.0
    for k in range(hidden):
        c = x[base + k] - mu
        sq += c * c
    # The sums are float64; the variance is rounded to the tensor's dtype (through ``rstd``)
    # before use, so a row whose variance overflows float32 gets rstd = 0 and y = beta, as a
    # float32 computation (the other backends, PyTorch) gives.
    rstd[row] = sq / hidden
    r = 1.0 / math.sqrt(rstd[row] + eps)
    for k in range(hidden):
        y[base + k] = (x[base + k] - mu) * r * gamma[k] + beta[k]
    mean[row] = mu
    rstd[row] = r


def layernorm_bw_row(row, dy, x, gamma, mean, rstd, dx, hidden):
    """Input gradient of one layernorm row."""
    base = row * hidden
    mu = mean[row]
    r = rstd[row]
    sum_g = 0.0
    sum_gx = 0.0
    for k in range(hidden):
        g = dy[base + k] * gamma[k]
        sum_g += g
        sum_gx += g * (x[base + k] - mu) * r
    mean_g = sum_g / hidden
    mean_gx = sum_gx / hidden
    for k in range(hidden):
        xhat = (x[base + k] - mu) * r
        dx[base + k] = r * (dy[base + k] * gamma[k] - mean_g - xhat * mean_gx)


def layernorm_param_col(col, dy, x, mean, rstd, dgamma, dbeta, rows, hidden):
    """``dgamma[col]`` and ``dbeta[col]``: sums over every row of one hidden column."""
    sum_gamma = 0.0
    sum_beta = 0.0
    for r in range(rows):
        p = r * hidden + col
        sum_gamma += dy[p] * (x[p] - mean[r]) * rstd[r]
        sum_beta += dy[p]
    dgamma[col] = sum_gamma
    dbeta[col] = sum_beta


def layernorm_param_rows(chunk, rows_per_chunk, rows, dy, x, mean, rstd, dgamma_part, dbeta_part, hidden):
    """Partial ``dgamma``/``dbeta`` over rows ``[chunk * rows_per_chunk, ...)`` into row ``chunk``
    of ``dgamma_part``/``dbeta_part`` (``[chunks, hidden]``); the caller sums the chunks."""
    first = chunk * rows_per_chunk
    stop = first + rows_per_chunk
    if stop > rows:
        stop = rows
    out = chunk * hidden
    for col in range(hidden):
        dgamma_part[out + col] = 0.0
        dbeta_part[out + col] = 0.0
    for r in range(first, stop):
        mu = mean[r]
        rs = rstd[r]
        base = r * hidden
        for col in range(hidden):
            g = dy[base + col]
            dgamma_part[out + col] += g * (x[base + col] - mu) * rs
            dbeta_part[out + col] += g


BODY_NAMES: tuple[str, ...] = (
    "to_index",
    "index_to_position",
    "broadcast_index",
    "ordinal_to_position",
    "broadcast_position",
    "map_positions",
    "zip_positions",
    "reduce_start",
    "matmul_element",
    "softmax_fw_row",
    "softmax_bw_row",
    "layernorm_fw_row",
    "layernorm_bw_row",
    "layernorm_param_col",
    "layernorm_param_rows",
)


def make_bodies(jit: Callable[[Callable], Callable]) -> SimpleNamespace:
    """Compile every body with ``jit`` (e.g. ``numba.njit`` or ``cuda.jit(device=True)``)."""
    here = globals()
    return SimpleNamespace(**{name: jit(here[name]) for name in BODY_NAMES})
