"""Execution spaces named only on a member's out-of-class definition.

nvcc compiles ``inline __device__ void C::f(int) {...}`` for the device when the class declares
``void f(int);`` without a space (the CUDA Handbook's spinlockReduction does so). clang's CUDA
mode, which the front end parses with, takes such a definition for a function the class does not
declare ("out-of-line definition of 'f' does not match any declaration in 'C'"), and the device
code that calls it then finds only the host declaration. :func:`declaration_spaces` names, from a
first parse, where the class's declarations need the definitions' spaces; the front end parses
again with those words given to clang alone (``linemap.SourceMap``'s ``spaces``): what g++
compiles is the program's text, whose spaces nvcc reads as the definition gives them.
"""

from __future__ import annotations

__all__ = ["declaration_spaces"]

_UNMATCHED = "out-of-line definition of '"
_MEMBER_KINDS = frozenset(
    {"CXX_METHOD", "CONSTRUCTOR", "DESTRUCTOR", "CONVERSION_FUNCTION", "FUNCTION_TEMPLATE"}
)


def _spaces(cursor) -> str:
    """The CUDA execution-space words ``cursor`` is declared with ('' for none)."""
    kinds = {ch.kind.name for ch in cursor.get_children()}
    words = [w for k, w in (("CUDAHOST_ATTR", "__host__"), ("CUDADEVICE_ATTR", "__device__")) if k in kinds]
    return " ".join(words)


def declaration_spaces(ci, tu, src) -> tuple[tuple[int, str], ...]:
    """(offset in the preprocessed text, words) for each in-class declaration of the user's code
    that an out-of-class definition with an execution space failed to match only for lack of it."""
    found = {}
    for d in tu.diagnostics:
        if d.severity < 3 or d.location.file is None or not d.spelling.startswith(_UNMATCHED):
            continue
        definition = ci.Cursor.from_location(tu, d.location)
        if definition is None or definition.kind.name not in _MEMBER_KINDS:
            continue
        words = _spaces(definition)
        owner = definition.semantic_parent
        if not words or owner is None:
            continue
        for member in owner.get_children():
            same = member.kind == definition.kind and member.displayname == definition.displayname
            if same and not member.is_definition() and not _spaces(member):
                at = src.pre(member.extent.start.offset)
                if src.is_user(at):
                    found[at] = words + " "
    return tuple(sorted(found.items()))
