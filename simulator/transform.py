"""Source transform: plain CUDA C++ in, C++ that g++ compiles against the runtime header out.

Four rewrites, each on one line so that diagnostics keep the original line numbers (the
output carries ``#line`` markers for the original files):

* ``kernel<<<grid, block, smem, stream>>>(args)`` becomes a call of ``::sim::launcher`` (or
  ``::sim::launch_deduced`` for a kernel template with deduced arguments); the kernel may be
  a name, whose default arguments then apply, or any expression yielding a kernel pointer;
* a function-scope ``__shared__ T name[N];`` becomes a reference to per-block storage and
  ``extern __shared__ T name[];`` a pointer to the launch's dynamic shared memory;
* host code's own names ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``/``warpSize``
  (and member accesses such as ``prop.warpSize``) become ``sim_host_NAME``, clear of the
  device built-ins;
* ``#include "local.cuh"`` (and headers found in the ``-I`` folders) is inlined and
  transformed too, so that its kernels and shared variables get the same treatment.

Constructs the simulator cannot run are refused with the file, line and construct named
(``find_unsupported``, on the preprocessed text).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["SimBuildError", "arch_conditionals", "find_unsupported", "mask_source", "translate"]


class SimBuildError(Exception):
    """A source the simulator cannot build; the message names the file, line and construct."""


# (pattern on code with comments/strings blanked, what it is, what to do instead)
_UNSUPPORTED = [
    (r"\b(?:asm|__asm__|__asm)\b", "inline assembly (asm / PTX)", "write it in CUDA C++"),
    (
        r"\btex(?:1D|2D|3D|1Dfetch|Cubemap)\w*\s*[<(]|\btexture\s*<|\bcudaTextureObject_t\b"
        r"|\bcudaSurfaceObject_t\b|\bsurf(?:1D|2D|3D)\w*\s*[<(]",
        "textures / surfaces",
        "read global memory instead",
    ),
    (
        r"\b__shfl(?:_up|_down|_xor)?\s*\(|\b__ballot\s*\(|\b__any\s*\(|\b__all\s*\(",
        "warp intrinsic without _sync (removed in CUDA 9)",
        "use the *_sync form with a mask",
    ),
    (
        r"\b(?:cudaMemcpy2D(?:To|From)Array\w*|cudaMemcpy3D\w*|cudaMalloc3D\w*|cudaMallocArray)\s*\(",
        "this CUDA runtime call or device intrinsic",
        "see simulator/README.md for the supported API",
    ),
]
_UNSUPPORTED.append(
    (
        r"<<<",
        "a kernel launch written inside a macro (launches are rewritten before the preprocessor runs)",
        "write the launch in the code itself, or a macro that expands to a call of a host function",
    )
)
_UNSUPPORTED_RE = [(re.compile(p), what, fix) for p, what, fix in _UNSUPPORTED]

_IDENT = re.compile(r"[A-Za-z_]\w*")
_TEMPLATE_FUNC = re.compile(r"\btemplate\s*<[^;{]*?>\s*(?:(?:static|inline|__\w+__)\s+)*void\s+(\w+)\s*\(")


def mask_source(text: str, blank_directives: bool = False) -> str:
    """Return ``text`` with comments and string/char literal contents blanked (same length).

    Newlines are kept, so offsets and line numbers match the original. With
    ``blank_directives`` preprocessor lines (and their continuations) are blanked too.
    """
    out = list(text)
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if line_start and c in " \t":
            i += 1
            continue
        if line_start and c == "#" and blank_directives:
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                j += 1
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
            continue
        line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c == '"' or c == "'":
            if c == '"' and i > 0 and text[i - 1] == "R":
                m = re.match(r'R"([^(\s]*)\(', text[i - 1 :])
                if m:
                    end = text.find(")" + m.group(1) + '"', i)
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    for k in range(i + 1, end - 1):
                        if out[k] != "\n":
                            out[k] = " "
                    i = end
                    continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


@dataclass
class _Scope:
    kind: str  # "ns" (namespace / extern "C" / file), "class", "func", "block"
    device: bool  # device-only code (__global__ / __device__ without __host__)
    start: int
    end: int
    host: bool = False  # host-only code (a function, or a block in one, without __device__/__global__)


def _scopes(code: str) -> list[_Scope]:
    """Brace scopes of ``code`` (comments, strings and directives blanked)."""
    scopes: list[_Scope] = []
    stack: list[_Scope] = []
    last_stmt = 0
    for i, c in enumerate(code):
        if c == "{":
            header = code[last_stmt:i]
            enclosing_is_ns = all(s.kind == "ns" for s in stack)
            if re.search(r"\bnamespace\b|\bextern\s*\"", header) and enclosing_is_ns:
                kind, device = "ns", False
            elif re.search(r"\b(?:struct|class|union|enum)\b", header) and "(" not in header:
                kind, device = "class", False
            elif enclosing_is_ns or (stack and stack[-1].kind == "class"):
                kind = "func"
                marked = re.search(r"\b__global__\b|\b__device__\b", header) is not None
                device = marked and not re.search(r"\b__host__\b", header)
                host = not marked
            else:
                # A block, or a lambda's body: a lambda marked __device__ is device code.
                kind, device = "block", stack[-1].device if stack else False
                host = stack[-1].host if stack else False
                if re.search(r"\b__device__\b", header):
                    device, host = True, False
            scope = _Scope(kind, device, i, len(code), host if kind in ("func", "block") else False)
            stack.append(scope)
            scopes.append(scope)
            last_stmt = i + 1
        elif c == "}":
            if stack:
                stack.pop().end = i
            last_stmt = i + 1
        elif c == ";":
            last_stmt = i + 1
    return scopes


def _enclosing(scopes: list[_Scope], pos: int) -> list[_Scope]:
    return [s for s in scopes if s.start < pos < s.end]


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def _split_declarators(decl: str) -> list[str]:
    """``decl`` split at its top-level commas (not inside (), [], {} or template <>)."""
    parts, depth, angle, cur = [], 0, 0, []
    for c in decl:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "<" and depth == 0:
            angle += 1
        elif c == ">" and depth == 0 and angle > 0:
            angle -= 1
        if c == "," and depth == 0 and angle == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return parts


def _top_bracket(declarator: str) -> int:
    """Index of the first '[' outside template arguments (the array dimensions), or -1."""
    angle = 0
    for i, c in enumerate(declarator):
        if c == "<":
            angle += 1
        elif c == ">" and angle > 0:
            angle -= 1
        elif c == "[" and angle == 0:
            return i
    return -1


def _drop_align(text: str) -> str:
    """``text`` without its ``__align__(...)`` specifiers (balanced parentheses)."""
    while True:
        m = re.search(r"__align__\s*\(", text)
        if not m:
            return text
        close = _match_forward(text, m.end() - 1, "(", ")")
        if close < 0:
            return text
        text = text[: m.start()] + " " + text[close + 1 :]


def _match_forward(code: str, pos: int, open_c: str, close_c: str) -> int:
    depth = 0
    for i in range(pos, len(code)):
        if code[i] == open_c:
            depth += 1
        elif code[i] == close_c:
            depth -= 1
            if depth == 0:
                return i
    return -1


# Words before a parenthesised group that is not an operand (`if (x) kernel<<<...`).
_PAREN_WORDS = frozenset(
    "if while for switch catch sizeof alignof decltype typeid noexcept static_assert __attribute__".split()
)
# Words that are not part of a launched expression (statement keywords, declarations).
_STOP_WORDS = _PAREN_WORDS | frozenset(
    "return else do case default goto throw co_return co_yield new delete typedef using static const "
    "volatile inline extern auto void int unsigned float double char long short".split()
)


def _skip_space_back(code: str, i: int) -> int:
    while i > 0 and code[i - 1].isspace():
        i -= 1
    return i


def _word_before(code: str, i: int) -> tuple[int, str]:
    """The identifier ending at ``i`` and its start (``(i, "")`` when there is none)."""
    j = i
    while j > 0 and (code[j - 1].isalnum() or code[j - 1] == "_"):
        j -= 1
    word = code[j:i]
    return (j, word) if word and _IDENT.fullmatch(word) else (i, "")


def _match_backward(code: str, close: int) -> int:
    """Index of the bracket that opens the one at ``close`` (``)``, ``]`` or ``>``), or -1."""
    want, closer = {")": "(", "]": "[", ">": "<"}[code[close]], code[close]
    depth = 0
    for i in range(close, -1, -1):
        c = code[i]
        if c == closer and not (closer == ">" and i > 0 and code[i - 1] == "-"):
            depth += 1
        elif c == want:
            depth -= 1
            if depth == 0:
                return i
        elif closer == ">" and c in ";{}":
            return -1
    return -1


def _operand_back(code: str, end: int, depth: int = 0) -> tuple[int, bool] | None:
    """Start of the postfix expression that ends at ``end`` and whether it is a plain name.

    A name is an identifier with optional ``ns::`` qualifiers and template arguments
    (``ns::kernel<T, 4>``); anything else (``kernels[k]``, ``(flag ? a : b)``, ``table.fn``,
    ``pick(k)``) is an expression whose value is a kernel pointer.
    """
    if depth > 64:
        return None
    j = _skip_space_back(code, end)
    if j == 0:
        return None
    c = code[j - 1]
    if c in ")]":
        o = _match_backward(code, j - 1)
        if o < 0:
            return None
        before = _skip_space_back(code, o)
        _, word = _word_before(code, before)
        if c == ")" and word in _PAREN_WORDS:
            return None  # `if (x)`: a condition, not an operand
        if (word and word not in _STOP_WORDS) or code[before - 1 : before] in (")", "]"):
            base = _operand_back(code, o, depth + 1)
            if base is not None:
                return base[0], False  # a call or subscript of what precedes it
        return (o, False) if c == ")" else None
    if c == ">":
        o = _match_backward(code, j - 1)
        if o < 0:
            return None
        ws, word = _word_before(code, _skip_space_back(code, o))
        if not word or word in _STOP_WORDS:
            return None
        return _qualified(code, ws, depth)
    ws, word = _word_before(code, j)
    if not word or word in _STOP_WORDS:
        return None
    return _qualified(code, ws, depth)


def _qualified(code: str, ws: int, depth: int) -> tuple[int, bool]:
    """Extend the name starting at ``ws`` over ``ns::``, ``obj.`` and ``ptr->`` before it."""
    p = _skip_space_back(code, ws)
    if code[p - 2 : p] == "::":
        base = _operand_back(code, p - 2, depth + 1)
        return (base[0], base[1]) if base is not None else (p - 2, True)
    if code[p - 1 : p] == "." or code[p - 2 : p] == "->":
        base = _operand_back(code, p - 1 if code[p - 1] == "." else p - 2, depth + 1)
        if base is not None:
            return base[0], False
    return ws, True


# Device built-in variables: macros of the runtime header, so host code that declares its own
# variable, parameter or member with one of these names gets it renamed (they exist only in device
# code under nvcc, and `prop.warpSize` is a member of cudaDeviceProp).
BUILTIN_NAMES = ("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize")
HOST_PREFIX = "sim_host_"
_BUILTIN_RE = re.compile(r"\b(?:" + "|".join(BUILTIN_NAMES) + r")\b")


def _rename_host_builtins(text: str, code: str, scopes: list[_Scope]) -> str:
    """``text`` with host-code uses of the built-in names renamed to ``sim_host_NAME``.

    Renamed: member accesses (``x.gridDim``, ``p->warpSize``, ``S::blockDim``) anywhere, and
    every use in host-only functions, at file scope and in class bodies, except in the header
    (parameters) of a device function. Device code and ``__host__ __device__`` functions keep
    the built-ins; so do preprocessor directives (blanked in ``code``).
    """
    edits = []
    for m in _BUILTIN_RE.finditer(code):
        p = _skip_space_back(code, m.start())
        member = code[p - 1 : p] == "." or code[p - 2 : p] in ("->", "::")
        if not member:
            inner = [s for s in scopes if s.start < m.start() < s.end]
            scope = inner[-1] if inner else None
            if scope is not None and scope.kind in ("func", "block"):
                if not scope.host:
                    continue
            else:
                stmt = max(
                    code.rfind(";", 0, m.start()),
                    code.rfind("{", 0, m.start()),
                    code.rfind("}", 0, m.start()),
                )
                head_end = min(
                    x for x in (code.find("{", m.end()), code.find(";", m.end()), len(code)) if x >= 0
                )
                if re.search(r"\b__global__\b|\b__device__\b", code[stmt + 1 : head_end]):
                    continue  # a parameter of a device function
        edits.append(m)
    if not edits:
        return text
    out, prev = [], 0
    for m in edits:
        out.append(text[prev : m.start()])
        out.append(HOST_PREFIX + m.group(0))
        prev = m.end()
    out.append(text[prev:])
    return "".join(out)


class _Translator:
    def __init__(self, include_dirs: tuple[str, ...] = ()) -> None:
        self.include_dirs = tuple(os.path.abspath(d) for d in include_dirs)
        self.once: set[str] = set()
        self.stack: list[str] = []
        self.files: list[str] = []
        self.template_kernels: set[str] = set()

    def error(self, path: str, text: str, pos: int, msg: str) -> SimBuildError:
        return SimBuildError(f"{path}:{_line_of(text, pos)}: {msg}")

    def file(self, path: str) -> str:
        path = os.path.abspath(path)
        if path in self.stack or len(self.stack) > 32:
            raise SimBuildError(f"{path}: recursive #include")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as exc:
            raise SimBuildError(f"{path}: cannot read the source ({exc.strerror})") from exc
        except UnicodeDecodeError as exc:
            raise SimBuildError(f"{path}: not UTF-8 text") from exc
        self.files.append(path)
        self.stack.append(path)
        try:
            return self._translate(path, text)
        finally:
            self.stack.pop()

    def _translate(self, path: str, text: str) -> str:
        code = mask_source(text, blank_directives=True)
        renamed = _rename_host_builtins(text, code, _scopes(code))
        if renamed != text:
            text = renamed
            code = mask_source(text, blank_directives=True)
        masked = mask_source(text)
        scopes = _scopes(code)
        edits: list[tuple[int, int, str]] = []
        self._includes(path, text, masked, edits)
        for tm in _TEMPLATE_FUNC.finditer(code):
            self.template_kernels.add(tm.group(1))
        self._launches(path, text, code, scopes, edits)
        self._shared(path, text, code, scopes, edits)
        edits.sort()
        for a, b in zip(edits, edits[1:]):
            if a[1] > b[0]:
                raise self.error(path, text, b[0], "overlapping constructs the simulator cannot rewrite")
        out = []
        prev = 0
        for start, end, repl in edits:
            out.append(text[prev:start])
            out.append(repl)
            prev = end
        out.append(text[prev:])
        return f'#line 1 "{path}"\n' + "".join(out)

    def _includes(self, path: str, text: str, masked: str, edits: list) -> None:
        for m in re.finditer(r'(?m)^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"][^\n]*', masked):
            name = text[m.start(2) : m.end(2)].strip()
            # As the compiler searches: "x.h" in the including file's folder first, then the -I
            # folders (for <x.h> too). Headers found there are the program's own and are
            # translated with it; system and CUDA headers are left to the compiler.
            folders = ((os.path.dirname(path),) if m.group(1) == '"' else ()) + self.include_dirs
            found = [os.path.join(d, name) for d in folders if os.path.isfile(os.path.join(d, name))]
            if not found:
                continue
            local = os.path.abspath(found[0])
            with open(local, encoding="utf-8", errors="replace") as f:
                once = re.search(r"(?m)^[ \t]*#[ \t]*pragma[ \t]+once\b", f.read()) is not None
            if once and local in self.once:
                edits.append((m.start(), m.end(), ""))
                continue
            if once:
                self.once.add(local)
            body = self.file(local)
            line = _line_of(text, m.start())
            edits.append((m.start(), m.end(), f'{body}\n#line {line + 1} "{path}"\n'))
            # The inlined text ends with a #line for the next line, so drop the directive's newline.
            if m.end() < len(text) and text[m.end()] == "\n":
                edits[-1] = (m.start(), m.end() + 1, edits[-1][2])

    def _launches(self, path: str, text: str, code: str, scopes: list, edits: list) -> None:
        for m in re.finditer(r"<<<", code):
            found = _operand_back(code, m.start())
            if found is None:
                raise self.error(path, text, m.start(), "cannot find the kernel before '<<<'")
            start, is_name = found
            callee = code[start : m.start()].strip()
            enclosing = _enclosing(scopes, m.start())
            if any(s.device for s in enclosing):
                raise self.error(
                    path,
                    text,
                    m.start(),
                    f"unsupported CUDA construct: kernel launch of '{callee}' from device code "
                    "(dynamic parallelism)",
                )
            depth, j = 0, m.end()
            while j < len(code):
                if code[j] in "([{":
                    depth += 1
                elif code[j] in ")]}":
                    depth -= 1
                elif depth == 0 and code.startswith(">>>", j):
                    break
                j += 1
            else:
                raise self.error(path, text, m.start(), "'<<<' without a matching '>>>'")
            # Split where the code (comments blanked) has its commas; keep the original text.
            config, pos = [], m.end()
            for part in _split_top(code[m.end() : j]):
                config.append(text[pos : pos + len(part)])
                pos += len(part) + 1
            if len(config) < 2 or len(config) > 4 or any(not c.strip() for c in config):
                raise self.error(
                    path, text, m.start(), "a launch needs <<<grid, block[, shared_bytes[, stream]]>>>"
                )
            k = j + 3
            while k < len(code) and code[k].isspace():
                k += 1
            if k >= len(code) or code[k] != "(":
                raise self.error(path, text, j, "expected the kernel's argument list after '>>>'")
            close = _match_forward(code, k, "(", ")")
            if close < 0:
                raise self.error(path, text, k, "unbalanced parentheses in the kernel's argument list")
            args = text[k + 1 : close]
            cfg = [c for c in config] + ["0"] * (4 - len(config))
            cfg[3] = f"(cudaStream_t)({cfg[3]})"
            name = " ".join(callee.split()).replace('"', "").replace("\\", "")
            # Config and arguments are copied verbatim; newlines elsewhere go at the end.
            pad = "\n" * (text[start : m.start()].count("\n") + text[j : k + 1].count("\n"))
            call_args = ", ".join(f"({c})" if i < 3 else c for i, c in enumerate(cfg))
            kernel = " ".join(code[start : m.start()].split())
            in_function = any(s.kind in ("func", "block") for s in enclosing)
            capture = "&" if in_function else ""
            head = f'"{name}", __FILE__, __LINE__, {call_args}'
            if is_name and kernel.split("::")[-1] in self.template_kernels and not kernel.endswith(">"):
                # A kernel template called with deduced arguments: deduce them per call, as nvcc does.
                deduce = f"[{capture}](auto... sim_a) {{ {kernel}(sim_a...); }}"
                repl = (
                    f"::sim::launch_deduced({head}, {deduce}" + (", " + args if args.strip() else args) + ")"
                )
            elif is_name:
                # Called by name when arguments are left out, so the kernel's default arguments apply.
                by_name = f"[{capture}](auto... sim_a) {{ {kernel}(sim_a...); }}"
                repl = f"::sim::launcher({head}, {kernel}, {by_name})({args})"
            else:
                # An expression yielding a kernel pointer: evaluated once, before the arguments.
                repl = f"::sim::launcher({head}, ({kernel}), ::sim::no_default_args{{}})({args})"
            edits.append((start, close + 1, repl + pad))

    def _shared(self, path: str, text: str, code: str, scopes: list, edits: list) -> None:
        for m in re.finditer(r"\b__shared__\b", code):
            begin = max(
                code.rfind(";", 0, m.start()), code.rfind("{", 0, m.start()), code.rfind("}", 0, m.start())
            )
            begin += 1
            end = code.find(";", m.end())
            if end < 0:
                raise self.error(path, text, m.start(), "__shared__ declaration without ';'")
            decl = code[begin:end]
            lead = len(decl) - len(decl.lstrip())
            newlines = decl[lead:].count("\n")
            in_func = any(s.kind in ("func", "block") for s in _enclosing(scopes, m.start()))
            body = " ".join(decl.split())
            is_extern = re.search(r"\bextern\b", body) is not None
            body = re.sub(r"\b(?:__shared__|extern|static)\b", " ", body)
            body = " ".join(body.split())
            if "=" in body:
                raise self.error(path, text, m.start(), "a __shared__ variable cannot have an initializer")
            declarators = _split_declarators(body)
            if is_extern:
                dm = re.fullmatch(r"(.*?)\b([A-Za-z_]\w*)\s*\[\s*\]\s*((?:\[[^\[\]]+\]\s*)*)", body)
                if not dm or len(declarators) > 1:
                    raise self.error(
                        path, text, m.start(), "expected 'extern __shared__ T name[];' (or T name[][N]...)"
                    )
                ctype = re.sub(r"\bvolatile\b", " ", _drop_align(dm.group(1)))
                ctype = " ".join(ctype.split())
                name = dm.group(2)
                inner = "".join(dm.group(3).split())  # the fixed inner dimensions of name[][N]...
                elem = f"{ctype}(*){inner}" if inner else f"{ctype}*"
                if in_func:
                    pointer = f"{ctype} (* const {name}){inner}" if inner else f"{ctype}* const {name}"
                    repl = f"{pointer} = reinterpret_cast<{elem}>(::sim::dynamic_shared());"
                else:
                    repl = (
                        f"\n#define {name} (reinterpret_cast<{elem}>(::sim::dynamic_shared()))\n"
                        f'#line {_line_of(text, end) + 1} "{path}"\n'
                    )
                    edits.append(
                        (begin + lead, end + 2 if text[end + 1 : end + 2] == "\n" else end + 1, repl)
                    )
                    continue
            else:
                if not in_func:
                    continue  # file scope: the header's fallback makes it per-worker storage
                # `__shared__ T a[N], *p, b;`: one per-block variable per declarator.
                parts = []
                specifiers = None
                for k, declarator in enumerate(declarators):
                    bracket = _top_bracket(declarator)
                    head = declarator if bracket < 0 else declarator[:bracket]
                    dims = "" if bracket < 0 else declarator[bracket:].strip()
                    nm = re.search(r"([A-Za-z_]\w*)\s*$", head)
                    if not nm or (k == 0 and nm.start() == 0):
                        raise self.error(path, text, m.start(), "cannot parse this __shared__ declaration")
                    rest = head[: nm.start()]
                    stars = re.search(r"[\s*&]*$", rest).group(0)
                    if k == 0:
                        specifiers = rest[: len(rest) - len(stars)].strip()
                    elif rest[: len(rest) - len(stars)].strip():
                        raise self.error(path, text, m.start(), "cannot parse this __shared__ declaration")
                    name = nm.group(1)
                    ctype = f"{specifiers} {''.join(stars.split())}".strip()
                    alias = f"sim_shared_{name}_t"
                    parts.append(
                        f"typedef {ctype} {alias}{dims}; static char sim_shared_{name}_site; "
                        f"{alias}& {name} = ::sim::shared_var<{alias}>(&sim_shared_{name}_site);"
                    )
                repl = " ".join(parts)
            edits.append((begin + lead, end + 1, repl + "\n" * newlines))


def find_unsupported(preprocessed: str, user_files: set[str]) -> SimBuildError | None:
    """The first unsupported construct in the user's code that survived the preprocessor.

    Scanning after ``g++ -E`` means a construct inside an inactive ``#if`` branch (say an
    ``asm`` block under ``#ifdef __CUDA_ARCH__``) is no obstacle. Line markers in the output
    map each line back to its file and line; system and runtime headers are skipped.
    """
    lines: list[str] = []
    origin: list[tuple[str, int]] = []
    current, lineno = "", 0
    for raw in preprocessed.splitlines():
        mk = re.match(r'#\s*(\d+)\s+"([^"]*)"', raw)
        if mk:
            lineno, current = int(mk.group(1)), mk.group(2)
            continue
        if current in user_files:
            lines.append(raw)
            origin.append((current, lineno))
        lineno += 1
    text = mask_source("\n".join(lines), blank_directives=True)
    for rx, what, fix in _UNSUPPORTED_RE:
        m = rx.search(text)
        if m:
            path, line = origin[text.count("\n", 0, m.start())]
            found = m.group(0).strip()
            return SimBuildError(f"{path}:{line}: unsupported CUDA construct '{found}' ({what}); {fix}")
    return None


_ARCH_CONDITIONAL = re.compile(r"(?m)^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*\b__CUDA_ARCH__\b")


def arch_conditionals(paths: list[str]) -> list[tuple[str, int]]:
    """``(file, line)`` of each ``#if``/``#ifdef``/``#elif`` on ``__CUDA_ARCH__`` in ``paths``.

    The simulator compiles host and device code in one pass without ``__CUDA_ARCH__``, so each
    of these takes its host branch: device code under ``#if __CUDA_ARCH__ >= 700`` is left out.
    """
    found = []
    for path in paths:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = mask_source(f.read())
        except OSError:
            continue
        found += [(path, _line_of(text, m.start())) for m in _ARCH_CONDITIONAL.finditer(text)]
    return found


def translate(path: str, include_dirs: tuple[str, ...] | list[str] = ()) -> tuple[str, list[str]]:
    """Translate one ``.cu`` file; returns the C++ text and every source file it read.

    Headers that ``#include`` finds next to the file (``"x.h"``) or in ``include_dirs`` are
    inlined and translated too.
    """
    t = _Translator(tuple(include_dirs))
    return t.file(path), t.files
