"""Source transform: plain CUDA C++ in, C++ that g++ compiles against the runtime header out.

Three rewrites, each on one line so that diagnostics keep the original line numbers (the
output carries ``#line`` markers for the original files):

* ``kernel<<<grid, block, smem, stream>>>(args)`` becomes a call of ``::sim::launch``;
* a function-scope ``__shared__ T name[N];`` becomes a reference to per-block storage and
  ``extern __shared__ T name[];`` a pointer to the launch's dynamic shared memory;
* ``#include "local.cuh"`` is inlined (transformed too) so that its kernels and shared
  variables get the same treatment.

Constructs the simulator cannot run are refused with the file, line and construct named
(``find_unsupported``, on the preprocessed text).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["SimBuildError", "find_unsupported", "mask_source", "translate"]


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
        r"\b__(?:match_any|match_all|reduce_add|reduce_min|reduce_max|reduce_and|reduce_or|reduce_xor)_sync\b",
        "__match_*_sync / __reduce_*_sync warp intrinsics",
        "build the result from __shfl_*_sync",
    ),
    (r"\bwmma::|\bnvcuda::", "warp matrix (tensor core) operations", "use scalar arithmetic"),
    (
        r"\b(?:cudaLaunchKernel|cudaLaunchCooperativeKernel|cudaGraph\w*|cudaEvent\w*|cudaGetDeviceProperties"
        r"|cudaOccupancy\w*|__nanosleep|clock64|cudaMemcpy2D\w*|cudaMemcpy3D\w*|cudaMallocPitch)\s*\(",
        "this CUDA runtime call or device intrinsic",
        "see simulator/README.md for the supported API",
    ),
]
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
    device: bool
    start: int
    end: int


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
                device = bool(re.search(r"\b__global__\b|\b__device__\b", header)) and not re.search(
                    r"\b__host__\b", header
                )
            else:
                kind, device = "block", stack[-1].device if stack else False
            scope = _Scope(kind, device, i, len(code))
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


def _callee_start(code: str, pos: int) -> int:
    """Start of the kernel expression that ends just before ``pos`` (``ns::kernel<T, 4>``)."""
    i = pos - 1
    while i >= 0 and code[i].isspace():
        i -= 1
    if i >= 0 and code[i] == ">":
        depth = 0
        while i >= 0:
            if code[i] == ">":
                depth += 1
            elif code[i] == "<":
                depth -= 1
                if depth == 0:
                    break
            i -= 1
        i -= 1
        while i >= 0 and code[i].isspace():
            i -= 1
    while i >= 0 and (code[i].isalnum() or code[i] in "_:"):
        i -= 1
    return i + 1


class _Translator:
    def __init__(self) -> None:
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
        masked = mask_source(text)
        code = mask_source(text, blank_directives=True)
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
            if m.group(1) == "<":
                continue
            local = os.path.join(os.path.dirname(path), name)
            if not os.path.isfile(local):
                continue
            local = os.path.abspath(local)
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
            start = _callee_start(code, m.start())
            callee = code[start : m.start()].strip()
            if not callee or not _IDENT.match(callee.lstrip(":")):
                raise self.error(path, text, m.start(), "cannot find the kernel name before '<<<'")
            if any(s.device for s in _enclosing(scopes, m.start())):
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
            config = _split_top(text[m.end() : j])
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
            name = " ".join(callee.split()).replace('"', "")
            # Config and arguments are copied verbatim; newlines elsewhere go at the end.
            pad = "\n" * (text[start : m.start()].count("\n") + text[j : k + 1].count("\n"))
            call_args = ", ".join(f"({c})" if i < 3 else c for i, c in enumerate(cfg))
            kernel = text[start : m.start()].strip()
            tail = (", " + args if args.strip() else args) + ")" + pad
            if kernel.split("::")[-1] in self.template_kernels and not kernel.endswith(">"):
                # A kernel template called with deduced arguments: deduce them per call, as nvcc does.
                deduce = f"[](auto... sim_a) {{ {kernel}(sim_a...); }}"
                repl = f'::sim::launch_deduced("{name}", __FILE__, __LINE__, {call_args}, {deduce}' + tail
            else:
                repl = f'::sim::launch("{name}", __FILE__, __LINE__, {call_args}, {kernel}' + tail
            edits.append((start, close + 1, repl))

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
            if len(_split_top(body)) > 1:
                raise self.error(
                    path, text, m.start(), "declare one __shared__ variable per statement (found a comma)"
                )
            if is_extern:
                dm = re.fullmatch(r"(.*?)\b([A-Za-z_]\w*)\s*\[\s*\]", body)
                if not dm:
                    raise self.error(path, text, m.start(), "expected 'extern __shared__ T name[];'")
                ctype = re.sub(r"\bvolatile\b", " ", _drop_align(dm.group(1)))
                ctype = " ".join(ctype.split())
                name = dm.group(2)
                if in_func:
                    repl = f"{ctype}* const {name} = reinterpret_cast<{ctype}*>(::sim::dynamic_shared());"
                else:
                    repl = (
                        f"\n#define {name} (reinterpret_cast<{ctype}*>(::sim::dynamic_shared()))\n"
                        f'#line {_line_of(text, end) + 1} "{path}"\n'
                    )
                    edits.append(
                        (begin + lead, end + 2 if text[end + 1 : end + 2] == "\n" else end + 1, repl)
                    )
                    continue
            else:
                if not in_func:
                    continue  # file scope: the header's fallback makes it per-worker storage
                bracket = body.find("[")
                head = body if bracket < 0 else body[:bracket]
                dims = "" if bracket < 0 else body[bracket:]
                nm = re.search(r"([A-Za-z_]\w*)\s*$", head)
                if not nm or nm.start() == 0:
                    raise self.error(path, text, m.start(), "cannot parse this __shared__ declaration")
                name = nm.group(1)
                ctype = head[: nm.start()].strip()
                alias = f"sim_shared_{name}_t"
                repl = (
                    f"typedef {ctype} {alias}{dims}; static char sim_shared_{name}_site; "
                    f"{alias}& {name} = ::sim::shared_var<{alias}>(&sim_shared_{name}_site);"
                )
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


def translate(path: str) -> tuple[str, list[str]]:
    """Translate one ``.cu`` file; returns the C++ text and every source file it read."""
    t = _Translator()
    return t.file(path), t.files
