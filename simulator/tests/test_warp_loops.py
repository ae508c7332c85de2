"""Warp shuffles and votes as lockstep rounds of block loops (simulator/block_loops_warps.py).

kernels/program_warp_loops.cu's warp_* kernels (shuffle reductions and scans in block-uniform
loops, xor and indexed shuffles with a width, a ballot compaction in a loop over chunks with
barriers, any and all) run as block loops in a fast build, and their output is bit for bit the
fibers' (SIMULATOR_FIBERS=1) and this module's model of each kernel, which follows CUDA's
definition lane by lane (a source lane outside the width's segment or the warp gives the
caller's own value, as in the block of 48 threads). A shuffle under a branch on the thread and
one whose mask is a variable keep fibers, and the launch log says why. memcheck keeps fibers
for all of them, with the same output.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, LAUNCH_LOG, line_of, run_apart, run_cli

PROGRAM = KERNELS / "program_warp_loops.cu"
N = 512
LOOPS = ("warp_block_sum", "warp_block_scan", "warp_xor_max", "warp_broadcast")
LOOPS += ("warp_ballot_compact", "warp_votes", "warp_rows_2d")
FIBERS = ("fibers_branch", "fibers_mask", "fibers_template")
_NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?")


def _inputs() -> tuple[list[int], list[float], list[float]]:
    ints = [(k * 37 + 11) % 101 - 50 for k in range(N)]
    doubles = [((k * 53 + 7) % 97 - 48) * 0.5 for k in range(N)]
    floats = [((k * 29 + 3) % 61) * 0.25 for k in range(N)]
    return ints, doubles, floats


def _source(kind: str, lane: int, param: int, width: int) -> int:
    """The lane a shuffle of ``kind`` reads for ``lane`` (CUDA's definition)."""
    base = lane - lane % width
    if kind == "idx":
        return base + param % width
    if kind == "up":
        return lane - param if lane - base >= param else lane
    if kind == "down":
        return lane + param if lane - base + param < width else lane
    return lane ^ param if (lane ^ param) < base + width else lane


def _shuffle(values: list, kind: str, param, width: int = 32) -> list:
    """One shuffle of every lane of one warp (``param`` a number or one per lane)."""
    params = param if isinstance(param, list) else [param] * len(values)
    out = []
    for lane, v in enumerate(values):
        src = _source(kind, lane, params[lane], width)
        out.append(values[src] if src < len(values) else v)
    return out


def _warps(values: list) -> list[list]:
    return [values[w : w + 32] for w in range(0, len(values), 32)]


def _block_sum(values: list[int]) -> int:
    warps = _warps(values)
    sums = []
    for lanes in warps:
        for off in (16, 8, 4, 2, 1):
            lanes = [a + b for a, b in zip(lanes, _shuffle(lanes, "down", off), strict=True)]
        sums.append(lanes[0])
    lanes = [sums[lane] if lane < len(warps) else 0 for lane in range(len(warps[0]))]
    for off in (16, 8, 4, 2, 1):
        lanes = [a + b for a, b in zip(lanes, _shuffle(lanes, "down", off), strict=True)]
    return lanes[0]


def _expected() -> dict[str, list[float]]:
    ints, doubles, floats = _inputs()
    padded = ints + [0] * (11 * 48 - N)
    sums48 = [_block_sum(padded[b * 48 : (b + 1) * 48]) for b in range(11)]
    scan = []
    for b in range(2):
        total = 0
        for v in ints[b * 256 : (b + 1) * 256]:
            total += v
            scan.append(total)
    xormax = []
    for lanes in _warps(doubles):
        for m in (8, 4, 2, 1):
            lanes = [max(a, b) for a, b in zip(lanes, _shuffle(lanes, "xor", m, 16), strict=True)]
        xormax += lanes
    broadcast = []
    for lanes in _warps(floats):
        third = _shuffle(lanes, "idx", 3, 8)
        fifth = _shuffle(lanes, "idx", 5)
        broadcast += [t * 2.0 + f for t, f in zip(third, fifth, strict=True)]
    kept = [v for v in ints[:500] if v % 3 == 0]

    def shifted_by(delta: int) -> list[int]:
        return [s for lanes in _warps(ints[:256]) for s in _shuffle(lanes, "down", delta)]

    xor_one = [
        v + s
        for v, s in zip(
            ints[:256], [s for w in _warps(ints[:256]) for s in _shuffle(w, "xor", 1)], strict=True
        )
    ]
    shifted = []
    for lanes in _warps(ints[:256]):
        shifted += [a + b for a, b in zip(lanes, _shuffle(lanes, "down", 2), strict=True)]
    votes = []
    for lanes in _warps(ints):
        any_big, all_above = any(v > 45 for v in lanes), all(v > -48 for v in lanes)
        votes += [any_big * 2 + all_above] * 32

    def text(values) -> list[float]:
        return [float(v) for v in values]

    return {
        "sum128": text([sum(ints[b * 128 : (b + 1) * 128]) for b in range(4)]),
        "sum48": text(sums48),
        "scan": text(scan),
        "xormax": text(xormax),
        "broadcast": text(broadcast),
        "compact": text(kept + [0] * (N - len(kept))),
        "count": [float(len(kept))],
        "votes": text(votes),
        "rows2d": text([w[0] - v for w in _warps(ints) for v in w]),
        "branch": text(
            [
                v + (s if k % 128 < 64 else 0)
                for k, (v, s) in enumerate(zip(ints[:256], shifted_by(1), strict=True))
            ]
        ),
        "mask": text(xor_one),
        "template": text(shifted),
    }


def _printed(out: str) -> dict[str, list]:
    rows = {}
    for ln in out.splitlines():
        name, *values = ln.split()
        # The program prints doubles with 17 digits and floats with 9: each value read back exactly.
        rows[name] = [float(v) if _NUMBER.fullmatch(v) else v for v in values]
    return rows


@pytest.fixture(scope="module")
def fast_runs():
    """The program in a fast build: block loops allowed, then fibers forced."""
    return run_apart(PROGRAM, "fast", "0"), run_apart(PROGRAM, "fast", "1")


def test_uniform_shuffles_and_votes_run_as_block_loops_the_others_with_fibers(fast_runs):
    (_, _, ways), (_, _, forced) = fast_runs
    assert ways == {**dict.fromkeys(LOOPS, "as block loops"), **dict.fromkeys(FIBERS, "with fibers")}
    assert forced == dict.fromkeys(ways, "with fibers")


def test_results_are_the_models_and_bit_identical_to_fibers(fast_runs):
    (loops_out, loops_err, _), (fibers_out, fibers_err, _) = fast_runs
    printed = _printed(loops_out)
    for name, values in _expected().items():
        assert printed[name] == values, name
    assert printed["status"] == ["cudaSuccess"]
    assert loops_out == fibers_out
    assert loops_err == fibers_err == ""


def test_the_launch_log_says_why_a_shuffle_keeps_fibers():
    proc = run_cli("run", str(PROGRAM), "--mode", "fast", env={"SIMULATOR_LAUNCH_LOG": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    reasons = {m.group(2): m.group(4) for ln in proc.stderr.splitlines() if (m := LAUNCH_LOG.match(ln))}
    assert reasons["fibers_branch"] == (
        "a warp shuffle (__shfl_down_sync) under a condition not shown to be block-uniform "
        f"(program_warp_loops.cu:{line_of(PROGRAM, 'if (threadIdx.x < 64) v +=')})"
    )
    assert reasons["fibers_mask"] == (
        "a warp shuffle (__shfl_xor_sync) whose mask is not a literal full mask (0xffffffff) "
        f"(program_warp_loops.cu:{line_of(PROGRAM, '__shfl_xor_sync(mask')})"
    )
    assert reasons["fibers_template"] == (
        "a warp shuffle (__shfl_down_sync) whose overload a template's parameters pick "
        f"(program_warp_loops.cu:{line_of(PROGRAM, '__shfl_down_sync(FULL, v, 2)')})"
    )


def test_memcheck_keeps_fibers_with_the_same_output(fast_runs):
    (loops_out, _, _), _ = fast_runs
    out, err, ways = run_apart(PROGRAM, "memcheck", "0")
    assert ways == dict.fromkeys((*LOOPS, *FIBERS), "with fibers")
    assert out == loops_out
    assert err == ""
