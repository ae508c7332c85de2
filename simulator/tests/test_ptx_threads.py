"""Inline PTX warp, memory, barrier, exit and trap instructions run by the simulator
(``kernels/program_ptx_threads.cu``; shfl.sync as the ISA's pseudo-code defines it), both PTX
programs in every checker, the one-line build failure of an unsupported instruction, and both
programs compiled by ``nvcc -arch=sm_80 -c`` where nvcc is installed."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from .conftest import PTX_SCALAR, PTX_THREADS, line_of, nvcc_compile, run_cli
from .ptx_reference import (
    F32,
    M32,
    M64,
    _bits_of,
    _f32,
    _f64,
    _rows,
    _signed,
)


# ---- warps, memory, barriers ------------------------------------------------------------------------
def _shfl(values: list[int], lane: int, mode: str, b: int, c: int) -> tuple[int, int]:
    """The ISA's shfl.sync: (value, predicate) for ``lane`` of a warp whose inputs are ``values``."""
    bval, cval, seg = b & 31, c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg)
    min_lane = lane & seg
    if mode == "up":
        j, ok = lane - bval, lane - bval >= max_lane
    elif mode == "down":
        j, ok = lane + bval, lane + bval <= max_lane
    elif mode == "bfly":
        j, ok = lane ^ bval, lane ^ bval <= max_lane
    else:
        j = min_lane | (bval & ~seg)
        ok = j <= max_lane
    return values[j if ok else lane], int(ok)


SHFLS = [
    ("up", 1, 0),
    ("up", 5, 0),
    ("up", 3, (32 - 8) << 8),
    ("down", 1, 0x1F),
    ("down", 6, ((32 - 16) << 8) | 0x1F),
    ("down", 3, 0x10),
    ("bfly", 3, 0x1F),
    ("bfly", 9, ((32 - 8) << 8) | 0x1F),
    ("bfly", 5, ((32 - 8) << 8) | 0x1F),
    ("idx", 7, 0x1F),
    ("idx", 2, ((32 - 4) << 8) | 0x1F),
]


def test_warp_instructions(threads_run):
    lanes = [int(line.split()[2], 16) for line in threads_run.splitlines() if line.startswith("lane ")]
    rows = [o for _, o in _rows(threads_run, "warp")]
    assert len(lanes) == len(rows) == 64
    for w in range(2):
        v = lanes[32 * w : 32 * w + 32]
        # CUB's reduction: five guarded shuffle-down steps, replayed with the ISA's shfl.
        sums = [x & 0xFFFF for x in v]
        for offset in (1, 2, 4, 8, 16):
            moved = [_shfl(sums, lane, "down", offset, 31) for lane in range(32)]
            sums = [(s + m) & M32 if ok else s for s, (m, ok) in zip(sums, moved)]
        wide = [(x << 32) | (32 * w + lane) for lane, x in enumerate(v)]
        for lane in range(32):
            o = rows[32 * w + lane]
            assert o[:7] == [
                lane,
                w,
                1 << lane,
                (1 << lane) - 1,
                (2 << lane) - 1 & M32,
                ~((1 << lane) - 1) & M32,
                ~((2 << lane) - 1) & M32,
            ]
            for k, (mode, b, c) in enumerate(SHFLS):
                value, ok = _shfl(v, lane, mode, b, c)
                assert o[7 + k] == value | ok << 32, (w, lane, mode, b, c)
            assert o[18] == v[lane ^ 1] | 1 << 32 and o[19] == v[0]
            odd = [x & 1 for x in v]
            assert o[20:25] == [int(all(odd)), int(any(odd)), int(len(set(odd)) == 1), 1, 1]
            big = sum(1 << k for k, x in enumerate(v) if x > 0x80000000)
            assert o[25] == big and o[26] == ~big & M32
            assert o[27] == sum(1 << k for k, x in enumerate(v) if x % 4 == v[lane] % 4)
            assert o[28] == (M32 | 1 << 32 if w == 0 else 0)  # warp 0 matches (all 7), warp 1 does not
            assert o[29] == sum(1 << k for k, x in enumerate(v) if x % 3 == v[lane] % 3)
            assert o[30:35] == [
                sum(v) & M32,
                min(_signed(x, 32) for x in v) & M32,
                max(v),
                _or(1 << (x % 32) for x in v),
                M32,
            ]
            assert o[35] == sums[lane]
            moved = _shfl(wide, lane, "down", 2, 31)
            assert o[36] == ((wide[lane] + moved[0]) & M64 if moved[1] else wide[lane])


def _or(values) -> int:
    out = 0
    for x in values:
        out |= x
    return out


def test_memory_instructions(threads_run):
    rows = [o for _, o in _rows(threads_run, "memory")]
    assert len(rows) == 64
    src = [
        _bits_of(float(struct.unpack("<f", struct.pack("<f", i * 1.5 - 100.0))[0]), F32) for i in range(256)
    ]
    raw = bytes((i * 37 - 128) & 0xFF for i in range(64))
    for t, o in enumerate(rows):
        assert o[0:4] == src[4 * t : 4 * t + 4]  # ld.global.nc.v4.f32
        assert o[4] == raw[t] and o[5] == _signed(raw[t], 8) & M32  # ld.u8 zero-, ld.s8 sign-extended
        k = 2 * (t % 30) + 2
        assert o[6] == _signed(raw[k] | raw[k + 1] << 8, 16) & M64  # ld.s16 into 64 bits, [addr+2]
        assert o[7] == ((t & ~1) + 1) * 5 and o[8] == (63 - t) * 5  # st/ld.volatile.shared, generic ld
        assert (o[9], o[10]) == ((1, 1234) if t == 63 else (0, 0))  # st.release / ld.acquire
        assert o[14] == 3 * t and o[15] == 64 * 3  # ld.L2::cache_hint, red.shared.add
        assert o[16] == (t + 2) + t * 9  # st.local then ld.local through cvta.to.local
        assert o[17] == (0x1234 << 16 if t == 0 else 0)  # atom.cas.b16: old 0, then 0x1234
    assert sorted(o[11] for o in rows) == list(range(64))  # atom.add: every old value once
    assert sorted(o[12] for o in rows) == sorted(i % 17 for i in range(64))  # atom.inc wraps at 16
    counters = [int(w, 16) for w in _line(threads_run, "counters").split()]
    dec = 0
    for _ in range(64):
        dec = 20 if dec == 0 or dec > 20 else dec - 1
    xor = 0
    for t in range(64):
        xor ^= t * 0x01010101
    olds = sorted([o[13] for o in rows] + [counters[9]])
    assert olds == sorted([7] + [t + 100 for t in range(64)])  # atom.exch: a chain through every value
    assert counters[:9] + counters[10:] == [
        64,
        sum(range(64)),
        min([1000] + [t * 7 % 61 - 30 for t in range(64)]) & M32,
        max(t * 13 % 97 for t in range(64)),
        64 % 17,
        dec,
        0,
        (1 << 29) - 1,
        xor,
        sum(t + 1 for t in range(64)),  # the atom.cas loop
        128,
    ]
    words = [int(w, 16) for w in _line(threads_run, "words").split()]
    assert words == [v for t in range(64) for v in (3 * t, ~t & M32)]  # st.global.v2.u32
    fsum, dsum, big = (int(w, 16) for w in _line(threads_run, "sums").split())
    assert _f32(fsum) == sum(t * 0.5 for t in range(64)) and _f64(dsum) == sum(t * 0.25 for t in range(64))
    assert big == 64 << 33


def _line(stdout: str, key: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith(key + " :")).partition(" : ")[2]


def test_barriers_sleep_and_exit(threads_run):
    rows = [o for _, o in _rows(threads_run, "barrier")]
    assert len(rows) == 3 * 128
    unset = 0xEEEEEEEE
    for i, o in enumerate(rows):
        t = i % 128
        assert o[0] == (t + 1) % 128 * 3 and o[1] == (127 - t) * 7  # bar.sync / barrier.sync
        assert o[2:5] == [sum(1 for k in range(128) if k % 3 == 0), 1, 1]  # bar.red.popc/and/or
        assert o[5] == (42 if t == 5 else unset)  # nanosleep while waiting for an acquire load
        assert o[6] == (1 if t < 120 else unset) and o[7] == unset  # exit ends the thread


@pytest.mark.parametrize("what, marker", [("trap", "// TRAP"), ("named", "// NAMED")])
def test_trap_and_named_barriers_fail_the_launch_naming_the_line(what, marker):
    # trap stops the kernel as __trap() does; a named barrier (bar.sync 1) is refused when reached.
    proc = run_cli("run", str(PTX_THREADS), "--", what)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{what}=cudaErrorLaunchFailure" in proc.stdout
    assert f"{PTX_THREADS}:{line_of(PTX_THREADS, marker)}" in proc.stderr
    if what == "named":
        assert "bar.sync with a named barrier" in proc.stderr


@pytest.mark.parametrize("mode", ["memcheck", "synccheck", "racecheck"])
def test_threads_program_runs_clean_in_every_checker(threads_run, mode):
    proc = run_cli("run", str(PTX_THREADS), "--mode", mode)
    assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr
    assert proc.stdout == threads_run and proc.stderr == ""


def test_unsupported_instruction_fails_the_build_with_one_line(tmp_path):
    src = tmp_path / "sad.cu"
    src.write_text(
        "#include <cstdio>\n__global__ void k(unsigned* out, unsigned a, unsigned b) {\n"
        "    unsigned r;\n"
        '    asm("sad.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(0u));\n'
        "    *out = r;\n}\nint main() { return 0; }\n"
    )
    proc = run_cli("run", str(src))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert f"{src}:4: inline PTX instruction 'sad.u32' is not supported by the simulator" in lines[-1]
    assert "Traceback" not in proc.stderr


@pytest.mark.kernels
@pytest.mark.parametrize("program", [PTX_SCALAR, PTX_THREADS], ids=lambda p: Path(p).stem)
def test_the_programs_build_with_nvcc(tmp_path, program):
    proc = nvcc_compile(program, tmp_path)
    assert proc.returncode == 0, proc.stderr
