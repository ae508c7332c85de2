"""The refusals that clang's own diagnostics of a parsed pass give (after the walk of syntax.py).

clang reports what the walk cannot see, since its parse dropped it: a name of CUDA's it could not
find that the simulator does not support, brackets nested deeper than the parse allows, a kernel
launch it could not read, a ``__global__`` function called without ``<<<...>>>``, and a host
function called from device code. Each becomes a problem of the unit, with its position.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .refusals import UNDECLARED, unsupported

if TYPE_CHECKING:
    from .syntax import TranslationUnit

__all__ = ["clang_diagnostics"]


def clang_diagnostics(unit: TranslationUnit, bracket_depth: int) -> None:
    """Refusals from clang's own checks of ``unit``'s parse: unsupported names it could not find,
    brackets nested past ``bracket_depth``, launches it could not read, host-only calls."""
    for d in unit.tu.diagnostics:
        if d.severity < 3 or d.location.file is None:
            continue
        pos = unit.src.pre(d.location.offset)
        if not unit.src.is_user(pos):
            continue
        if d.spelling.startswith("bracket nesting level exceeded"):
            unit.problems.append(
                (
                    pos,
                    f"brackets nest more than {bracket_depth} deep here, deeper than the simulator's C++ "
                    "front end parses; split the expression",
                )
            )
            continue
        m = UNDECLARED.search(d.spelling)
        if m and unsupported(m.group(1)):
            unit.refuse(pos, m.group(1), unsupported(m.group(1)))
            continue
        # A statement clang dropped for an error elsewhere in it: its tokens still name it.
        tokens = _line_tokens(unit, d.location.offset)
        for tok in tokens:
            if tok.kind == unit.ci.TokenKind.IDENTIFIER and unsupported(tok.spelling):
                unit.refuse(pos, tok.spelling, unsupported(tok.spelling))
                break
        else:
            launches = [e for e, _ in unit.launches]
            for tok in tokens:
                at = unit.src.pre(tok.extent.start.offset)
                if tok.spelling == "<<<" and not any(e.start <= at < e.end for e in launches):
                    unit.problems.append(
                        (at, f"cannot read this kernel launch: the C++ front end reports: {d.spelling}")
                    )
                    break
        unconfigured = re.match(r"call to global function '([^']+)' not configured", d.spelling)
        if unconfigured and not any(a <= pos < b for a, b in unit.launch_rewrites.runtime_launches):
            name = unconfigured.group(1)
            unit.problems.append(
                (
                    pos,
                    f"a __global__ function called without <<<...>>>: '{name}' (as with nvcc, which "
                    f"refuses it too: launch it as {name}<<<grid, block>>>(...))",
                )
            )
            continue
        notes = " ".join(ch.spelling for ch in d.children)
        t = re.search(
            r"call to __host__ function from __(global|device)__ function", notes + " " + d.spelling
        )
        if t:
            callee = re.search(r"'([^']+)'", d.spelling)
            what = callee.group(1) if callee else "?"
            unit.problems.append(
                (
                    pos,
                    f"a __{t.group(1)}__ function calls the host function '{what}', which device code "
                    "cannot call (as with nvcc: mark it __device__ or __host__ __device__)",
                )
            )


def _line_tokens(unit: TranslationUnit, offset: int) -> list:
    """The tokens of the parsed text's line holding byte ``offset``."""
    text = unit.src.parse_bytes  # libclang's offsets count bytes
    a = text.rfind(b"\n", 0, offset) + 1
    b = text.find(b"\n", offset)
    b = len(text) if b < 0 else b
    f = unit.tu.get_file(unit.name)
    extent = unit.ci.SourceRange.from_locations(
        unit.ci.SourceLocation.from_offset(unit.tu, f, a),
        unit.ci.SourceLocation.from_offset(unit.tu, f, b),
    )
    return list(unit.tu.get_tokens(extent=extent))
