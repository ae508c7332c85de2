"""A Python kernel file parsed with ``ast``: its kernel functions, node spans and text.

Kernel code is what runs per thread: in ``numba_cuda/kernels.py`` the functions that use numba's
``cuda`` built-ins (the kernels the builders return and the block-wide trees), in
``kernel_bodies.py`` the bodies ``BODY_NAMES`` lists. Spans are byte offsets, from the line and
column ``ast`` gives every node (columns are UTF-8 byte offsets), so a mutant is an edit of the
file's own text and keeps its formatting.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from .model import Edit, Mutant, one_line

CUDA_BUILTINS = {"grid", "gridsize", "syncthreads", "threadIdx", "blockIdx", "blockDim", "gridDim", "shared"}


class PythonSource:
    """One parsed Python file; ``rel`` is its repository-relative path."""

    def __init__(self, path: Path, rel: str, data: bytes | None = None) -> None:
        self.path = path.resolve()
        self.rel = rel
        self.data = path.read_bytes() if data is None else data
        self.tree = ast.parse(self.data, filename=rel)
        self._kernels: list[ast.FunctionDef] | None = None
        self._line_starts = [0]
        for i, byte in enumerate(self.data):
            if byte == 0x0A:
                self._line_starts.append(i + 1)

    # --- kernel functions ---------------------------------------------------------------------

    def kernel_functions(self) -> list[ast.FunctionDef]:
        """The per-thread functions: those using ``cuda`` built-ins, or the bodies of ``BODY_NAMES``."""
        if self._kernels is None:
            self._kernels = self._find_kernels()
        return self._kernels

    def _find_kernels(self) -> list[ast.FunctionDef]:
        bodies = self._body_names()
        out = []
        for node in ast.walk(self.tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            inner = [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef) and n is not node]
            if node.name in bodies or (not inner and self._uses_cuda(node)):
                out.append(node)
        return sorted(out, key=lambda n: n.lineno)

    def _body_names(self) -> set[str]:
        for node in self.tree.body:
            if isinstance(node, ast.AnnAssign | ast.Assign):
                targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
                if any(isinstance(t, ast.Name) and t.id == "BODY_NAMES" for t in targets):
                    return {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
        return set()

    @staticmethod
    def _uses_cuda(fn: ast.FunctionDef) -> bool:
        for n in ast.walk(fn):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "cuda":
                if n.attr in CUDA_BUILTINS:
                    return True
        return False

    @staticmethod
    def statements(fn: ast.FunctionDef) -> Iterator[tuple[ast.stmt, list[ast.stmt]]]:
        """Every statement of ``fn`` with the statement list that holds it."""
        todo = [fn.body]
        while todo:
            block = todo.pop()
            for stmt in block:
                yield stmt, block
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                        todo.append(inner)

    # --- text -----------------------------------------------------------------------------------

    def offset(self, line: int, col: int) -> int:
        """Byte offset of 1-based ``line``, 0-based byte column ``col``."""
        return self._line_starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        """Byte offsets ``[start, end)`` of ``node``."""
        return self.offset(node.lineno, node.col_offset), self.offset(node.end_lineno, node.end_col_offset)

    def text(self, node: ast.AST) -> str:
        """The source text of ``node``."""
        start, end = self.span(node)
        return self.data[start:end].decode()

    def line_span(self, node: ast.stmt) -> tuple[int, int]:
        """Bytes of the whole lines ``node`` occupies, newline included."""
        start = self._line_starts[node.lineno - 1]
        end = (
            self._line_starts[node.end_lineno] if node.end_lineno < len(self._line_starts) else len(self.data)
        )
        return start, end

    def indent_of(self, node: ast.stmt) -> str:
        """The indentation of ``node``'s first line."""
        return " " * node.col_offset

    def mutant(self, operator: str, function: str, edits: list[Edit], original: str, mutated: str) -> Mutant:
        """A mutant of this file; its line is that of the first edit."""
        first = min(e.start for e in edits)
        line = next(i for i, start in reversed(list(enumerate(self._line_starts, 1))) if start <= first)
        return Mutant(operator, self.rel, line, function, one_line(original), one_line(mutated), tuple(edits))

    def replace(self, operator: str, function: str, node: ast.AST, new_text: str) -> Mutant:
        """The mutant that replaces ``node``'s text with ``new_text``."""
        start, end = self.span(node)
        return self.mutant(operator, function, [Edit(start, end, new_text)], self.text(node), new_text)
