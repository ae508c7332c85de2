"""The two libclang reads the front end's walks make millions of times, done with less Python.

``clang.cindex``'s ``Cursor.get_children`` builds a new C callback for every call and, for every
child, asks libclang for a null cursor and compares the child with it (an assertion); its
``SourceLocation.offset`` also builds the location's file object and reads its line and column.
:func:`children_of` and :func:`offset_of` give the same answers, through one callback made once and a
read of the offset alone: a walk over CCCL's headers reads millions of each.
"""

from __future__ import annotations

from ctypes import byref, c_uint

from .errors import clang_module

__all__ = ["children_of", "offset_of"]

# libclang's functions and the callback of children_of(), set on first use (libclang is imported
# only by a build that translates).
_lib = None
_visit = None


def _collect(child, _parent, into) -> int:
    kids, tu = into
    child._tu = tu  # as cindex's own children hold it: the parse outlives them
    kids.append(child)
    return 1  # CXChildVisit_Continue


def _library():
    global _lib, _visit
    if _lib is None:
        ci = clang_module()
        _visit = ci.callbacks["cursor_visit"](_collect)
        _lib = ci.conf.lib
    return _lib


def children_of(cursor) -> list:
    """``cursor``'s children in libclang's order, as ``list(cursor.get_children())``."""
    lib = _lib or _library()
    into: tuple[list, object] = ([], cursor._tu)
    lib.clang_visitChildren(cursor, _visit, into)
    return into[0]


def offset_of(location) -> int:
    """A source location's offset in its file, as ``location.offset`` (libclang's expansion location)."""
    data = location._data
    if data is not None:
        return data[3]
    found = c_uint()
    # libclang leaves an output it is given as NULL unwritten: the offset alone is read.
    (_lib or _library()).clang_getInstantiationLocation(location, None, None, None, byref(found))
    return found.value
