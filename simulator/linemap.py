"""The preprocessed text of one translation unit as the front end reads it.

g++'s line markers name each line's file and line; the text handed to libclang gets a prelude
and pragmas between the program's code and the headers, and this map takes libclang's offsets
back to the preprocessed text and to the user's file and line.

The text is what g++ read, byte for byte: UTF-8 decoded, each byte that is not UTF-8 (a Latin-1
source, as nvcc reads bytes) kept as a lone surrogate (``surrogateescape``). libclang gets those
bytes and answers in byte offsets, which :class:`SourceMap` turns into the text's character
offsets once (:meth:`SourceMap.pre`); everything after works on characters.
"""

from __future__ import annotations

import bisect
import re

from .errors import RUNTIME_DIR

__all__ = ["HD_BEGIN", "HD_END", "SourceMap", "marker_matches"]

# A declaration the parse needs that g++ does not: clang turns `<<<...>>>` into a call of it (the
# launch API before CUDA 9.2, which clang uses as it finds no CUDA installation of its own; host
# and device: a launch may be written in device code too, with dynamic parallelism).
_PRELUDE = (
    '# 1 "<sim-frontend>"\nstruct dim3;\n'
    'extern "C" __attribute__((host, device)) int cudaConfigureCall(dim3, dim3, unsigned long = 0,'
    " void* = 0);\n"
)
# libstdc++ preprocessed by g++ takes its GCC-only branch for index sequences (`__integer_pack`,
# which clang lacks); the parse gets clang's branch instead, same length, so offsets stay. The
# prelude declares the alias that branch needs.
_PRELUDE += (
    "namespace std { template <decltype(sizeof 0)...> struct _Index_tuple;\n"
    "template <class T, T... I> using __sim_it = _Index_tuple<I...>; }\n"
)
# What every _GCC_ONLY pattern holds (a test checks it): a text without it has nothing to swap.
_GCC_ONLY_NEEDLE = "__integer_pack"
_GCC_ONLY = [
    (
        re.compile(r"(?m)^[ \t]*using __type = _Index_tuple<__integer_pack\(_Num\)\.\.\.>;$"),
        "using __type=__make_integer_seq<__sim_it,size_t,_Num>;",
    ),
    (
        re.compile(r"(?m)^[ \t]*= integer_sequence<_Tp, __integer_pack\(_Num\)\.\.\.>;$"),
        "= __make_integer_seq<integer_sequence, _Tp, _Num>;",
    ),
]


def _swap_line(line: str) -> str:
    """One line with the GCC-only patterns swapped for clang's own (same length)."""
    for rx, repl in _GCC_ONLY:
        line = rx.sub(
            lambda m, r=repl: r.rjust(len(m.group(0))) if len(r) <= len(m.group(0)) else m.group(0), line
        )
    return line


def _for_clang(text: str) -> str:
    """``text`` with the GCC-only library lines clang cannot parse swapped for clang's own (same length)."""
    # Each pattern matches within one line that holds the needle, so only those lines are scanned:
    # a CCCL program's 8 MB text took 0.13 CPU s to scan whole, and has two such lines.
    at = text.find(_GCC_ONLY_NEEDLE)
    if at < 0:
        return text
    pieces, pos = [], 0
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        pieces += [text[pos:start], _swap_line(text[start:end])]
        pos = end
        at = text.find(_GCC_ONLY_NEEDLE, end)
    pieces.append(text[pos:])
    return "".join(pieces)


def marker_matches(pattern: re.Pattern, text: str) -> list[re.Match]:
    """``list(pattern.finditer(text))`` for a ``pattern`` that matches only at a line that starts
    with ``# `` (a line marker), tried only there: a library's megabytes of text hold a few
    thousand markers, found by ``str.find`` several times faster than by the pattern's own scan."""
    found: list[re.Match] = []
    end = 0
    at = 0 if text.startswith("# ") else text.find("\n# ") + 1
    if at == 0 and not text.startswith("# "):
        return found
    while True:
        if at >= end:  # as finditer does, the next match starts at or after this one's end
            m = pattern.match(text, at)
            if m is not None:
                found.append(m)
                end = m.end()
        after = text.find("\n# ", at)
        if after < 0:
            return found
        at = after + 1


HD_BEGIN = "#pragma clang force_cuda_host_device begin\n"
HD_END = "#pragma clang force_cuda_host_device end\n"
_MARKER = re.compile(r'# (\d+) "((?:[^"\\]|\\.)*)"((?: \d)*)$')
# A whole marker line (file names may hold escaped quotes; the possessive quantifiers match as
# the plain ones would, as a name ends at its first unescaped quote, with no backtracking).
_MARKER_LINE = re.compile(r'(?m)^# (\d+) "((?:[^"\\]++|\\.)*+)"((?: \d)*)$')


def _entered_as_own(marker: re.Match, markers: list) -> bool:
    """Whether ``marker`` enters a file without the system flag (or is the main file's first)."""
    flags = marker.group(3).split()
    return "3" not in flags and ("1" in flags or marker is markers[0])


class SourceMap:
    """The preprocessed text, its line markers and the map from parse offsets back to it."""

    def __init__(self, text: str, user_file, spaces: tuple[tuple[int, str], ...] = ()) -> None:
        """``spaces``: (offset in ``text``, words) to give clang there and nothing else (see
        ``syntax_spaces.py``), in the user's code."""
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        # One entry per line marker: the preprocessed line it starts, the file and line there,
        # and whether that stretch is the user's code or the simulator's runtime.
        self.marks: list[int] = [0]
        self.files: list[tuple[str, int, bool, bool]] = [("", 0, False, False)]
        chunks, pos, prev_user = [], 0, False  # the prelude opens a host-device stretch
        self.inserted: list[tuple[int, int]] = [(0, len(_PRELUDE) + len(HD_BEGIN))]
        chunks.append(_PRELUDE + HD_BEGIN)
        markers = marker_matches(_MARKER_LINE, text)
        # A file the program enters without the system flag is the program's own, also where g++
        # marks a stretch of it with the flag (the expansion there of a macro a system header
        # defines, such as NVIDIA's __global__), and a system header stays one where g++ leaves
        # the flag off (the expansion there of a macro defined elsewhere, such as -D flags').
        own = {m.group(2) for m in markers if _entered_as_own(m, markers)}
        insertions = []
        named: dict[str, tuple[str, bool, bool]] = {}  # a marker's name: its path, user's, runtime's
        for m in markers:
            name = m.group(2)
            known = named.get(name)
            if known is None:  # thousands of markers name a few hundred files
                path = name.replace('\\"', '"').replace("\\\\", "\\")
                is_rt = path.startswith(RUNTIME_DIR)
                is_user = name in own and not path.startswith("<") and not is_rt and bool(user_file(path))
                known = named[name] = (path, is_user, is_rt)
            path, is_user, is_rt = known
            line = bisect.bisect_right(self.line_starts, m.start()) - 1
            self.marks.append(line + 1)
            self.files.append((path, int(m.group(1)), is_user, is_rt))
            if is_user != prev_user:
                # Outside the user's code every function is callable from device code (math, the
                # runtime): clang's CUDA checks then apply to the user's own functions only.
                insertions.append((m.start(), HD_END if is_user else HD_BEGIN))
            prev_user = is_user
        for at, words in sorted([*insertions, *spaces], key=lambda e: e[0]):  # stable: a switch first
            chunks += [text[pos:at], words]
            self.inserted.append((at, len(words)))
            pos = at
        chunks.append(text[pos:])
        chunks = [_for_clang(c) for c in chunks]
        if not text.endswith("\n"):
            chunks.append("\n")
        if prev_user is not True:
            chunks.append(HD_END)
        self.parse_text = "".join(chunks)
        # What libclang parses (its offsets count these bytes), and the way back to characters.
        self.parse_bytes = self.parse_text.encode("utf-8", "surrogateescape")
        wide = len(self.parse_bytes) != len(self.parse_text)
        self._wide = _WideCharacters(self.parse_text) if wide else None
        acc, self._ins_pos, self._ins_acc = 0, [], []
        for at, n in self.inserted:
            acc += n
            self._ins_pos.append(at + acc)  # first parse offset after this insertion
            self._ins_acc.append(acc)
        self._ins_at = [at for at, _ in self.inserted]
        # Set when libclang parsed with the precompiled prelude (syntax_pch.py): its offsets up to
        # here are the header's, mapped back to the whole text's.
        self.header_end = -1
        self._header_offset = None

    def loaded(self, cut) -> None:
        """Take libclang's offsets as those of ``cut`` (a ``syntax_pch.Layout``): the header's and
        the main file's."""
        self.header_end = len(cut.header)
        self._header_offset = cut.offset

    def whole(self, parse_offset: int) -> int:
        """The whole parse text's (byte) offset of a libclang offset."""
        if parse_offset <= self.header_end:
            return self._header_offset(parse_offset)
        return parse_offset

    def through_semicolon(self, end: int) -> int:
        """``end`` moved past the ``;`` that follows it across white space, if one does."""
        j = end
        while j < len(self.text) and self.text[j] in " \t\n":
            j += 1
        return j + 1 if j < len(self.text) and self.text[j] == ";" else end

    def pre(self, parse_offset: int) -> int:
        """The preprocessed-text (character) offset of a parse-buffer (libclang's, byte) offset."""
        if parse_offset <= self.header_end:
            parse_offset = self._header_offset(parse_offset)
        if self._wide is not None:
            parse_offset = self._wide.character(parse_offset)
        i = bisect.bisect_right(self._ins_pos, parse_offset) - 1
        return parse_offset - (self._ins_acc[i] if i >= 0 else len(_PRELUDE) + len(HD_BEGIN))

    def parse(self, pre_offset: int) -> int:
        """The parse-buffer offset of a preprocessed-text offset (the inverse of :meth:`pre`)."""
        i = bisect.bisect_right(self._ins_at, pre_offset) - 1
        return pre_offset + self._ins_acc[max(i, 0)]

    def line(self, pre_offset: int) -> int:
        return bisect.bisect_right(self.line_starts, pre_offset) - 1

    def _mark(self, pre_offset: int) -> int:
        return bisect.bisect_right(self.marks, self.line(pre_offset)) - 1

    def where(self, pre_offset: int) -> tuple[str, int]:
        line = self.line(pre_offset)
        i = bisect.bisect_right(self.marks, line) - 1
        path, first, _, _ = self.files[i]
        return path, first + line - self.marks[i]

    def is_user(self, pre_offset: int) -> bool:
        return 0 <= pre_offset < len(self.text) and self.files[self._mark(pre_offset)][2]

    def is_runtime(self, pre_offset: int) -> bool:
        return 0 <= pre_offset < len(self.text) and self.files[self._mark(pre_offset)][3]


class _WideCharacters:
    """Byte offsets into a text's UTF-8 form (``surrogateescape``) back to its character offsets."""

    def __init__(self, text: str) -> None:
        self._ends: list[int] = []  # the byte offset just after each character wider than a byte
        self._extra: list[int] = []  # the bytes beyond one a character, in all up to that one
        extra = 0
        for m in re.finditer(r"[^\x00-\x7f]", text):
            width = len(m.group().encode("utf-8", "surrogateescape"))
            if width > 1:
                extra += width - 1
                self._ends.append(m.end() + extra)
                self._extra.append(extra)

    def character(self, byte_offset: int) -> int:
        """The character offset of ``byte_offset`` (a character's first byte)."""
        k = bisect.bisect_right(self._ends, byte_offset)
        return byte_offset - (self._extra[k - 1] if k else 0)
