"""A CUDA C source parsed by libclang in CUDA mode: its functions, cursors, tokens and text.

libclang parses the file as clang's CUDA front end does (``-x cuda --cuda-host-only``), so kernel
launches (``<<<...>>>``), ``__global__`` and ``__device__`` come out as syntax, not as text. No
CUDA installation is read (``-nocudainc``): ``cuda_include/cuda_runtime.h`` declares the few
names the kernels use, and a file that does not parse cleanly is refused, so that an operator
never works from a partial tree. The C++ compiler's own include folder supplies ``<stddef.h>``
(the libclang wheel ships no resource headers).
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from simulator.host import find_cxx

from .model import Edit, Mutant, one_line

PARSE_INCLUDE = Path(__file__).resolve().parent / "cuda_include"
INSTALL_HINT = 'pip install "libclang>=18.1" (the simulator extra: pip install -e ".[simulator]")'
OPENING, CLOSING = {"(", "[", "{"}, {")", "]", "}"}
INTEGER_KINDS = {
    "INT",
    "UINT",
    "LONG",
    "ULONG",
    "LONGLONG",
    "ULONGLONG",
    "SHORT",
    "USHORT",
    "CHAR_S",
    "UCHAR",
}


class CudaParseError(RuntimeError):
    """The file cannot be parsed whole, or libclang or a C++ compiler is missing."""


@cache
def _cindex():
    try:
        import clang.cindex as cindex
    except ImportError as err:
        raise CudaParseError(f"the CUDA C operators need libclang's Python bindings: {INSTALL_HINT}") from err
    return cindex


@cache
def compiler_include_dir() -> str:
    """The C++ compiler's own header folder (``stddef.h``), which libclang's wheel lacks."""
    cxx = find_cxx()
    if cxx is None:
        raise CudaParseError(
            "no C++ compiler (g++, c++ or clang++ on PATH, or $CXX): its <stddef.h> is needed to parse"
        )
    out = subprocess.run(
        [*shlex.split(cxx), "-print-file-name=include"], capture_output=True, text=True, timeout=60
    )
    folder = out.stdout.strip()
    if out.returncode != 0 or not Path(folder, "stddef.h").is_file():
        raise CudaParseError(f"{cxx} -print-file-name=include gave {folder!r}, which holds no stddef.h")
    return folder


def parse_args() -> list[str]:
    """The libclang arguments: CUDA host-side parse, no CUDA installation, the parse-only header."""
    return [
        "-x",
        "cuda",
        "--cuda-host-only",
        # A folder that holds no toolkit, so that no machine's CUDA install (whose version picks
        # how clang spells a launch) changes the syntax tree: every machine parses alike.
        f"--cuda-path={PARSE_INCLUDE}",
        "-nocudainc",
        "-nocudalib",
        "-std=c++17",
        "-Wno-unknown-cuda-version",
        "-I",
        str(PARSE_INCLUDE),
        "-isystem",
        compiler_include_dir(),
    ]


@dataclass
class Function:
    """A function defined in the file: its cursor, name and whether it is device code."""

    cursor: object
    name: str
    device: bool


class CudaSource:
    """One parsed ``.cu``/``.cuh`` file; ``rel`` is its repository-relative path."""

    def __init__(self, path: Path, rel: str, data: bytes | None = None) -> None:
        self.path = path.resolve()
        self.rel = rel
        self.data = path.read_bytes() if data is None else data
        ci = _cindex()
        unsaved = [(str(self.path), self.data.decode())] if data is not None else None
        self.tu = ci.Index.create().parse(str(self.path), args=parse_args(), unsaved_files=unsaved)
        errors = [d for d in self.tu.diagnostics if d.severity >= ci.Diagnostic.Error]
        if errors:
            shown = "; ".join(str(d) for d in errors[:3])
            raise CudaParseError(f"{rel} does not parse cleanly for mutation ({len(errors)} errors): {shown}")
        self.kinds = ci.CursorKind
        self._names: dict[str, bool] = {}  # file name libclang gives -> whether it is this file
        self._functions: list[Function] | None = None

    # --- cursors --------------------------------------------------------------------------------

    def in_file(self, cursor) -> bool:
        """Whether ``cursor`` is written in this file (not in a header it includes)."""
        f = cursor.location.file
        if f is None:
            return False
        mine = self._names.get(f.name)
        if mine is None:
            mine = self._names[f.name] = Path(f.name).resolve() == self.path
        return mine

    def functions(self) -> list[Function]:
        """Every function defined in this file, device code marked by its CUDA attributes."""
        if self._functions is None:
            self._functions = self._find_functions()
        return self._functions

    def _find_functions(self) -> list[Function]:
        out = []
        for c in self._top_level(self.tu.cursor):
            if c.kind != self.kinds.FUNCTION_DECL or not c.is_definition() or not self.in_file(c):
                continue
            attrs = {a.kind for a in c.get_children()}
            device = bool(attrs & {self.kinds.CUDAGLOBAL_ATTR, self.kinds.CUDADEVICE_ATTR})
            out.append(Function(c, c.spelling, device))
        return out

    def _top_level(self, cursor) -> Iterator:
        """Declarations at file scope, those inside ``extern "C"`` and namespaces included."""
        for c in cursor.get_children():
            if c.kind in (self.kinds.LINKAGE_SPEC, self.kinds.NAMESPACE):
                yield from self._top_level(c)
            else:
                yield c

    @staticmethod
    def walk(cursor) -> Iterator:
        """``cursor`` and every cursor below it, parents before children."""
        yield cursor
        for child in cursor.get_children():
            yield from CudaSource.walk(child)

    def walk_with_parents(self, cursor, parents: tuple = ()) -> Iterator[tuple[object, tuple]]:
        """``(cursor, its ancestors from the outermost)`` for ``cursor`` and everything below it."""
        yield cursor, parents
        for child in cursor.get_children():
            yield from self.walk_with_parents(child, (*parents, cursor))

    @staticmethod
    def strip(cursor):
        """The cursor below implicit conversions and parentheses-free wrappers (UNEXPOSED_EXPR)."""
        while cursor.kind.name == "UNEXPOSED_EXPR":
            children = list(cursor.get_children())
            if len(children) != 1:
                break
            cursor = children[0]
        return cursor

    def operator(self, cursor) -> str:
        """The operator token of a binary or compound-assignment cursor (the token after its LHS)."""
        lhs = next(iter(cursor.get_children()))
        end = lhs.extent.end.offset
        for token in cursor.get_tokens():
            if token.extent.start.offset >= end:
                return token.spelling
        return ""

    def operator_edit_span(self, cursor) -> tuple[int, int]:
        """Byte span of the operator token of a binary cursor."""
        lhs = next(iter(cursor.get_children()))
        end = lhs.extent.end.offset
        for token in cursor.get_tokens():
            if token.extent.start.offset >= end:
                return token.extent.start.offset, token.extent.end.offset
        raise CudaParseError(f"{self.rel}:{cursor.location.line}: no operator token")

    @staticmethod
    def is_integer(cursor) -> bool:
        """Whether the expression's type is an integer type (through typedefs such as int64_t)."""
        return cursor.type.get_canonical().kind.name in INTEGER_KINDS

    def call_spans(self, call) -> tuple[tuple[int, int], list[tuple[int, int]]]:
        """Byte spans of a call and of each argument written in it.

        A call written inside a macro's argument (``TL_CHECK(&bufs, cudaMemcpy(...))``) has no
        extent of its own in libclang, only the macro's position: its spans come from the tokens
        written there (the callee's name, then the arguments split at top-level commas).
        """
        start, end = self.span(call)
        if end > start:
            args = [
                self.span(a)
                for a in call.get_arguments()
                if start <= a.extent.start.offset < a.extent.end.offset <= end
            ]
            return (start, end), args
        stop = min(len(self.data), start + 4096)
        tokens = list(self.tu.get_tokens(extent=self.tu.get_extent(str(self.path), (start, stop))))
        names = [i for i, t in enumerate(tokens) if t.spelling == call.spelling]
        if not names or names[0] + 1 >= len(tokens) or tokens[names[0] + 1].spelling != "(":
            raise ValueError(f"{self.rel}:{call.location.line}: cannot find the call to {call.spelling}")
        first = names[0]
        depth, args, arg_start, last_end = 0, [], None, 0
        for token in tokens[first + 1 :]:
            spelling, (t0, t1) = token.spelling, (token.extent.start.offset, token.extent.end.offset)
            if spelling in OPENING:
                depth += 1
                if depth == 1:
                    continue
            elif spelling in CLOSING:
                depth -= 1
                if depth == 0:
                    args.append((arg_start, last_end))
                    return (tokens[first].extent.start.offset, t1), args
            elif spelling == "," and depth == 1:
                args.append((arg_start, last_end))
                arg_start = None
                continue
            if arg_start is None:
                arg_start = t0
            last_end = t1
        raise ValueError(f"{self.rel}:{call.location.line}: unbalanced call to {call.spelling}")

    # --- text -----------------------------------------------------------------------------------

    @staticmethod
    def span(cursor) -> tuple[int, int]:
        """Byte offsets ``[start, end)`` of ``cursor`` in the file."""
        return cursor.extent.start.offset, cursor.extent.end.offset

    def text(self, cursor) -> str:
        """The source text of ``cursor``."""
        start, end = self.span(cursor)
        return self.data[start:end].decode()

    def text_at(self, start: int, end: int) -> str:
        """The source text of bytes ``[start, end)``."""
        return self.data[start:end].decode()

    def line_of(self, offset: int) -> int:
        """1-based line of byte ``offset``."""
        return self.data.count(b"\n", 0, offset) + 1

    def statement_end(self, cursor) -> int:
        """Offset just past the ``;`` that ends the expression statement ``cursor``."""
        end = cursor.extent.end.offset
        semi = self.data.index(b";", end)
        return semi + 1

    def mutant(self, operator: str, function: str, edits: list[Edit], original: str, mutated: str) -> Mutant:
        """A mutant of this file; its line is that of the first edit."""
        first = min(e.start for e in edits)
        return Mutant(
            operator=operator,
            path=self.rel,
            line=self.line_of(first),
            function=function,
            original=one_line(original),
            mutated=one_line(mutated),
            edits=tuple(edits),
        )

    def replace(self, operator: str, function: str, cursor, new_text: str) -> Mutant:
        """The mutant that replaces ``cursor``'s text with ``new_text``."""
        return self.replace_span(operator, function, self.span(cursor), new_text)

    def replace_span(self, operator: str, function: str, span: tuple[int, int], new_text: str) -> Mutant:
        """The mutant that replaces bytes ``span`` with ``new_text``."""
        start, end = span
        return self.mutant(
            operator, function, [Edit(start, end, new_text)], self.text_at(start, end), new_text
        )
