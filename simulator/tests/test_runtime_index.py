"""The runtime's host API has one index: the table at the top of ``runtime/host_api.h`` names every
``cuda*``/``cu*`` call the runtime defines and the one ``.cpp`` file of its area that defines it.
These tests scan the runtime's sources for definitions and hold the index to them, so that adding
a call is its area's ``.cpp`` plus its index line (and its test)."""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import REPO

RUNTIME = REPO / "simulator" / "runtime"
INDEX_HEADER = RUNTIME / "host_api.h"

# Comments, string and character literals: blanked before the scan (newlines kept), so that a name
# in a comment or a message is never taken for a definition.
_NOISE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
# A function's head at namespace scope (column 0): its return type words, then a cuda*/cu* name.
_HEAD = re.compile(r"^(?:[A-Za-z_][\w:]*[ \t\*&]+)+(cu(?:da)?[A-Z]\w*)[ \t]*\(", re.M)
# The index's lines: a file and what its area holds, then the names of the calls it defines.
_FILE_LINE = re.compile(r"^//\s{2}(\w+\.cpp):")
_NAMES_LINE = re.compile(r"^//\s+((?:cu(?:da)?[A-Z]\w*\s*)+)$")


def _blank(text: str) -> str:
    """``text`` with comments and literals replaced by spaces, line numbers kept."""
    return _NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def definitions(text: str) -> list[tuple[str, int, bool]]:
    """Each cuda*/cu* function defined (a body follows its parameters) in C++ source ``text``:
    its name, its line and whether a ``template`` line heads it."""
    code = _blank(text)
    found = []
    for m in _HEAD.finditer(code):
        depth, i = 0, m.end() - 1
        while i < len(code):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            i += 1
            if depth == 0:
                break
        rest = code[i:].lstrip()
        if not rest.startswith("{"):
            continue  # a declaration
        line = code.count("\n", 0, m.start()) + 1
        before = code[: m.start()].rstrip().rsplit("\n", 1)[-1].lstrip()
        found.append((m.group(1), line, before.startswith("template")))
    return found


def defined_calls(runtime: Path = RUNTIME) -> dict[str, list[str]]:
    """Every cuda*/cu* call the runtime's ``.cpp`` files define: its name -> the files (one, when right)."""
    calls: dict[str, list[str]] = {}
    for src in sorted(runtime.glob("*.cpp")):
        for name, _, _ in definitions(src.read_text()):
            calls.setdefault(name, []).append(src.name)
    return calls


def read_index(text: str) -> dict[str, list[str]]:
    """The index in a header's ``text``: each call name -> the files it is listed under."""
    start = text.index("// ---- index")
    index: dict[str, list[str]] = {}
    current = None
    for raw in text[start:].splitlines()[1:]:
        if not raw.startswith("//"):
            break
        if m := _FILE_LINE.match(raw):
            current = m.group(1)
        elif m := _NAMES_LINE.match(raw):
            assert current is not None, f"names in the index before any file: {raw!r}"
            for name in m.group(1).split():
                index.setdefault(name, []).append(current)
    return index


def problems(defined: dict[str, list[str]], index: dict[str, list[str]]) -> list[str]:
    """What is wrong between the calls the sources define and the index: one line each."""
    out = []
    for name, files in sorted(defined.items()):
        if len(files) > 1:
            out.append(f"{name} is defined in {len(files)} places ({', '.join(files)}): keep one")
        listed = index.get(name)
        if listed is None:
            out.append(f"{name} (defined in {files[0]}) is missing from the index in runtime/host_api.h")
        elif len(listed) > 1:
            out.append(f"{name} is listed {len(listed)} times in the index ({', '.join(listed)}): keep one")
        elif listed[0] not in files:
            out.append(f"{name} is defined in {files[0]}, but the index lists it under {listed[0]}")
    for name, listed in sorted(index.items()):
        if name not in defined:
            out.append(f"{name} is in the index under {listed[0]} but no runtime source defines it")
    return out


def test_every_host_call_is_defined_once_in_the_file_the_index_names():
    defined = defined_calls()
    index = read_index(INDEX_HEADER.read_text())
    # The scan and the index both see the whole API (a broken pattern would find next to nothing).
    assert len(defined) > 150 and len(index) > 150, (len(defined), len(index))
    assert defined["cudaMemcpyAsync"] == ["memory.cpp"] and index["cudaLaunchKernel"] == ["launch.cpp"]
    found = problems(defined, index)
    assert not found, "runtime/host_api.h's index and the runtime's sources disagree:\n" + "\n".join(found)


def test_runtime_headers_define_no_host_call_but_forwarding_templates():
    # A header may add C++ overloads that forward to a call (sim_textures.h's texture<> forms);
    # an implementation belongs in the .cpp file of its area.
    bodies = [
        f"{h.name}:{line}: {name}"
        for h in sorted(RUNTIME.glob("*.h"))
        for name, line, template in definitions(h.read_text())
        if not template
    ]
    assert not bodies, "define these in the .cpp file of their area, in the index:\n" + "\n".join(bodies)


def test_the_scan_tells_definitions_from_declarations_comments_and_messages():
    source = (
        'extern "C" {\n'
        "cudaError_t cudaDeclared(int x);\n"
        "// cudaError_t cudaInComment(int x) { return 0; }\n"
        "cudaError_t cudaTwoLines(int a,\n"
        "                         int b) {\n"
        '    report("cudaInMessage(%d) {", a);\n'
        "    return cudaCalled(a);\n"
        "}\n"
        "const char* cudaPointerResult(void) { return nullptr; }\n"
        "CUresult cuDriverCall(unsigned int f) { return f; }\n"
        "template <class T>\n"
        "static inline cudaError_t cudaOverload(T t) { return cudaDeclared(t); }\n"
        "}\n"
    )
    assert definitions(source) == [
        ("cudaTwoLines", 4, False),
        ("cudaPointerResult", 9, False),
        ("cuDriverCall", 10, False),
        ("cudaOverload", 12, True),
    ]


def test_the_check_names_each_kind_of_disagreement():
    index = read_index(
        "// ---- index\n//  memory.cpp: memory\n//      cudaMalloc cudaFree\n//      cudaMemcpy\n//\n"
        "//  streams.cpp: streams, see cudaMalloc\n//      cudaStreamCreate cudaGone cudaMalloc\n"
        "#ifndef X\n//  late.cpp: after the index\n//      cudaLate\n"
    )
    assert index == {
        "cudaMalloc": ["memory.cpp", "streams.cpp"],
        "cudaFree": ["memory.cpp"],
        "cudaMemcpy": ["memory.cpp"],
        "cudaStreamCreate": ["streams.cpp"],
        "cudaGone": ["streams.cpp"],
    }
    defined = {
        "cudaMalloc": ["memory.cpp"],
        "cudaFree": ["memory.cpp", "graphs.cpp"],
        "cudaMemcpy": ["graphs.cpp"],
        "cudaStreamCreate": ["streams.cpp"],
        "cudaNew": ["events.cpp"],
    }
    assert problems(defined, index) == [
        "cudaFree is defined in 2 places (memory.cpp, graphs.cpp): keep one",
        "cudaMalloc is listed 2 times in the index (memory.cpp, streams.cpp): keep one",
        "cudaMemcpy is defined in graphs.cpp, but the index lists it under memory.cpp",
        "cudaNew (defined in events.cpp) is missing from the index in runtime/host_api.h",
        "cudaGone is in the index under streams.cpp but no runtime source defines it",
    ]
