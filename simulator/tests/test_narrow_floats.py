"""NVIDIA's fp8 (e4m3, e5m2), fp6 (e2m3, e3m2) and fp4 (e2m1) types in device code, from the
toolkit's own headers: every conversion of program_narrow_floats.cu against the formats'
definitions worked out here with exact fractions (round to nearest, ties to even; finite values
past the largest saturate to it, of the same sign; NaN stays NaN in fp8 and becomes the largest
positive value in fp6 and fp4, which have no NaN)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from fractions import Fraction

import pytest

from .conftest import KERNELS, run_cli

PROGRAM = KERNELS / "program_narrow_floats.cu"


@dataclass(frozen=True)
class Format:
    """A small binary floating-point format: sign, exponent and mantissa bits, its largest value."""

    exponent_bits: int
    mantissa_bits: int
    largest: Fraction
    has_nan: bool

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    def values(self) -> list[tuple[Fraction, int]]:
        """Every finite non-negative value with its code."""
        out = []
        for code in range(2 ** (self.exponent_bits + self.mantissa_bits)):
            e, m = code >> self.mantissa_bits, code & (2**self.mantissa_bits - 1)
            scale = Fraction(2) ** ((e or 1) - self.bias)
            value = scale * (Fraction(m, 2**self.mantissa_bits) + (1 if e else 0))
            if value <= self.largest:
                out.append((value, code))
        return out

    def encode(self, x: float) -> int:
        sign_bit = 1 << (self.exponent_bits + self.mantissa_bits)
        if math.isnan(x):
            if self.has_nan:
                return -1  # some NaN: checked by decoding
            return max(code for value, code in self.values() if value == self.largest)
        sign = sign_bit if math.copysign(1.0, x) < 0 else 0
        magnitude = Fraction(abs(x)) if math.isfinite(x) else self.largest * 4
        table = self.values()
        if magnitude >= self.largest:
            return sign | max(code for value, code in table if value == self.largest)
        below = max((v, c) for v, c in table if v <= magnitude)
        above = min((v, c) for v, c in table if v >= magnitude)
        if below[0] == above[0]:
            return sign | below[1]
        d_below, d_above = magnitude - below[0], above[0] - magnitude
        if d_below != d_above:
            return sign | (below[1] if d_below < d_above else above[1])
        return sign | (below[1] if below[1] % 2 == 0 else above[1])

    def decode(self, code: int) -> float:
        sign_bit = 1 << (self.exponent_bits + self.mantissa_bits)
        magnitude = dict((c, v) for v, c in self.values()).get(code & (sign_bit - 1))
        if magnitude is None:
            return math.nan
        return -float(magnitude) if code & sign_bit else float(magnitude)


FORMATS = {
    "e4m3": Format(4, 3, Fraction(448), True),
    "e5m2": Format(5, 2, Fraction(57344), True),
    "e2m3": Format(2, 3, Fraction(15, 2), False),
    "e3m2": Format(3, 2, Fraction(28), False),
    "e2m1": Format(2, 1, Fraction(6), False),
}


def _float(bits: str) -> float:
    return struct.unpack("<f", struct.pack("<I", int(bits, 16)))[0]


@pytest.mark.parametrize("mode", ["fast", "memcheck"])
def test_narrow_float_conversions_match_the_formats(mode):
    proc = run_cli("run", str(PROGRAM), "--mode", mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [ln.split() for ln in proc.stdout.splitlines() if ln and ln.split()[0] in FORMATS]
    assert len(lines) == 29 * len(FORMATS), proc.stdout
    for name, source, stored, back in lines:
        fmt, x = FORMATS[name], _float(source)
        code, decoded = int(stored, 16), _float(back)
        want = fmt.encode(x)
        where = f"{name}({x!r}) gave {stored} -> {decoded!r}"
        if want == -1:
            assert math.isnan(fmt.decode(code)) and math.isnan(decoded), where
            continue
        assert code == want, f"{where}, expected {want:02x}"
        expected = fmt.decode(want)
        assert decoded == expected and math.copysign(1, decoded) == math.copysign(1, expected), where
