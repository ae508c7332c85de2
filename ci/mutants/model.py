"""A mutant: one change to one source file, made by one operator at one site."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace bytes ``[start, end)`` of the file with ``text`` (an insertion when start == end)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Mutant:
    """One realistic bug: ``edits`` applied to ``path`` (repository-relative) together.

    Most operators make one edit; moving a statement is a deletion and an insertion, still one bug.
    ``original`` and ``mutated`` are the changed code as a reader sees it (one line each);
    ``source_line`` is the whole line ``line`` of the unmutated file (whitespace folded), which tells
    apart two sites where the same change reads alike.
    """

    operator: str
    path: str
    line: int
    function: str
    original: str
    mutated: str
    edits: tuple[Edit, ...]
    source_line: str = ""

    def apply(self, data: bytes) -> bytes:
        """``data`` (the file's original bytes) with this mutant's edits made."""
        out = data
        for edit in sorted(self.edits, key=lambda e: e.start, reverse=True):
            out = out[: edit.start] + edit.text.encode() + out[edit.end :]
        return out


def one_line(text: str) -> str:
    """``text`` with its whitespace runs folded to single spaces (for reports)."""
    return " ".join(text.split())


def numbered(mutants: list[Mutant]) -> list[tuple[str, Mutant]]:
    """``(id, mutant)`` pairs: ``M001``, ``M002``, ... in the order given."""
    width = max(3, len(str(len(mutants))))
    return [(f"M{i:0{width}d}", m) for i, m in enumerate(mutants, 1)]
