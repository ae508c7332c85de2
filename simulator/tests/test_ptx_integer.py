"""Inline PTX bit and integer instructions and special registers run by the simulator
(``kernels/program_ptx.cu``) and checked against the PTX ISA's pseudo-code in Python: Python
integers for carries, products and bit fields; bfe, bfi, prmt, bfind as the ISA defines them
(``ptx_reference.py``, which test_ptx_float.py's checks share)."""

from __future__ import annotations

from .ptx_reference import _rows, check_arith, check_bits


def test_bit_instructions(scalar_run):
    check_bits(scalar_run[0])


def test_integer_arithmetic(scalar_run):
    check_arith(scalar_run[0])


def test_special_registers(scalar_run):
    stdout, began, ended = scalar_run
    rows = _rows(stdout, "special")
    assert len(rows) == 96
    for t, (_, o) in enumerate(rows):
        block, rank = divmod(t, 16)
        bx, by = block % 2, block // 2
        tx, ty, tz = rank % 4, (rank // 4) % 2, rank // 8
        assert o[:12] == [tx, ty, tz, 4, 2, 2, bx, by, 0, 2, 3, 1], t
        assert o[12] == 96  # %dynamic_smem_size: the launch's dynamic shared memory
        assert o[13] == 1 and o[14] >= 1  # %smid < %nsmid
        assert o[15] == 64  # %nwarpid: an sm_80 SM's 64 warps
        assert o[16] == 1 and o[17] == 1  # %clock64 and %clock do not go back
        assert began <= o[18] <= ended  # %globaltimer: nanoseconds of the host's real-time clock
        assert o[19] == 1  # %globaltimer_hi between two reads of %globaltimer
