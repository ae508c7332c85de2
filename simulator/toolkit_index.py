"""What NVIDIA's headers declare, read once per release with libclang: the tables the runtime and
the link step generate from them instead of retyping them.

* the error codes of ``enum cudaError`` (``cudaGetErrorName`` names every one of them) and of the
  driver API's ``CUresult``;
* every function the headers declare, by its linker name, with what its stub returns: a program
  that calls a declared function the simulator does not implement links to a stub that says so
  at run time (``link_stubs.py``) instead of failing to build.

The index is a JSON file beside the include folder it describes (``cuda_headers.include_dir``),
written atomically; a missing or damaged one is made again.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from functools import cache
from pathlib import Path

from .errors import SimBuildError, clang_module

__all__ = ["INDEX_VERSION", "error_codes", "functions", "index", "status_value", "write_error_table"]

INDEX_VERSION = 3
# Every header a program may include whose declarations the index covers.
_HEADERS = (
    "cuda_runtime.h",
    "cuda.h",
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cuda_fp8.h",
    "cuda_fp6.h",
    "cuda_fp4.h",
    "curand.h",
    "cuda_profiler_api.h",
    "cublas_v2.h",
    "cublasLt.h",
)
# What a stub returns, by the declared result type: each library's own "not supported" status.
_STATUS = {
    "cudaError_t": "cudaErrorNotSupported",
    "enum cudaError": "cudaErrorNotSupported",
    "CUresult": "CUDA_ERROR_NOT_SUPPORTED",
    "enum cudaError_enum": "CUDA_ERROR_NOT_SUPPORTED",
    "cublasStatus_t": "CUBLAS_STATUS_NOT_SUPPORTED",
    "curandStatus_t": "CURAND_STATUS_INTERNAL_ERROR",
}


def _parse(folder: Path):
    ci = clang_module()
    present = [h for h in _HEADERS if (folder / h).is_file()]
    text = "".join(f"#include <{h}>\n" for h in present)
    args = ["-x", "cuda", "-nocudainc", "-nocudalib", "--cuda-host-only", "-std=gnu++17", "-w"]
    args += ["-D__CUDACC__", "-D__NVCC__", f"-D__CUDACC_VER_MAJOR__={13}", "-isystem", str(folder)]
    cccl = folder / "cccl"
    if cccl.is_dir():
        args += ["-isystem", str(cccl)]
    name = "sim_toolkit_index.cu"
    return ci, ci.Index.create().parse(name, args=args, unsaved_files=[(name, text)])


def _words(name: str, prefix: str) -> str:
    """``cudaErrorMpsRpcFailure`` -> ``mps rpc failure``."""
    rest = name[len(prefix) :] if name.startswith(prefix) else name
    return " ".join(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", rest)) or name


def _build(folder: Path) -> dict:
    ci, tu = _parse(folder)
    ck = ci.CursorKind
    errors: dict[str, list] = {"cudaError": [], "cudaError_enum": []}
    funcs: dict[str, dict] = {}
    constants: dict[str, int] = {}
    root = str(folder)

    def visit(cursor) -> None:
        for c in cursor.get_children():
            loc = c.location.file
            if loc is None or not loc.name.startswith(root):
                continue
            if c.kind in (ck.NAMESPACE, ck.LINKAGE_SPEC):
                visit(c)
            elif c.kind == ck.ENUM_DECL and c.is_definition():
                values = [
                    [e.spelling, e.enum_value] for e in c.get_children() if e.kind == ck.ENUM_CONSTANT_DECL
                ]
                if c.spelling in errors:
                    errors[c.spelling] = values
                constants.update((n, v) for n, v in values if n in _STATUS.values())
            elif c.kind == ck.FUNCTION_DECL and not c.is_definition():
                mangled = c.mangled_name
                if not mangled or mangled in funcs:
                    continue
                first = c.canonical.location.file
                if first is None or not first.name.startswith(root):
                    continue  # a C or C++ library function (memcpy, sinf, ...) redeclared for device code
                attrs = {a.kind for a in c.get_children()}
                device_only = ck.CUDADEVICE_ATTR in attrs and ck.CUDAHOST_ATTR not in attrs
                result = c.result_type.spelling
                funcs[mangled] = {
                    "name": c.spelling,
                    "header": os.path.relpath(loc.name, root),
                    "device": device_only,
                    "returns": _STATUS.get(result, "void" if result == "void" else "zero"),
                }

    visit(tu.cursor)
    if not errors["cudaError"]:
        raise SimBuildError(f"{folder}: no enum cudaError in cuda_runtime_api.h: not CUDA's headers")
    return {"version": INDEX_VERSION, "errors": errors, "functions": funcs, "constants": constants}


@cache
def index(folder: Path) -> dict:
    """The index of the include folder ``folder`` (read from its JSON file, or built and written)."""
    path = folder / "sim-toolkit-index.json"
    try:
        data = json.loads(path.read_text())
        if data.get("version") == INDEX_VERSION:
            return data
    except (OSError, ValueError):
        pass
    data = _build(folder)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return data


def error_codes(folder: Path, enum: str = "cudaError") -> list[tuple[str, int]]:
    """The enumerators of ``enum cudaError`` (or ``cudaError_enum``, the driver API's) in header order."""
    return [(n, v) for n, v in index(folder)["errors"][enum]]


def status_value(folder: Path, name: str) -> int:
    """The value of a library's status enumerator (``CUBLAS_STATUS_NOT_SUPPORTED`` ...)."""
    return index(folder)["constants"][name]


def functions(folder: Path) -> dict[str, dict]:
    """Every function the headers declare: linker name -> name, header, device-only, stub result."""
    return index(folder)["functions"]


def write_error_table(folder: Path, dest: Path) -> Path:
    """``dest``/sim_toolkit_errors.inc: ``SIM_ERROR(name, "text")`` for every runtime error code and
    ``SIM_DRIVER_ERROR(name, "text")`` for every driver one, the text made from the name (the runtime's
    own texts, in error_texts.h, take precedence)."""
    lines = [f'SIM_ERROR({n}, "{_words(n, "cudaError")}")' for n, _ in error_codes(folder)]
    lines += [
        f'SIM_DRIVER_ERROR({n}, "{_words(n, "CUDA_ERROR_").replace("_", " ")}")'
        for n, _ in error_codes(folder, "cudaError_enum")
    ]
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / "sim_toolkit_errors.inc"
    text = "// Generated from NVIDIA's headers by simulator/toolkit_index.py.\n" + "\n".join(lines) + "\n"
    if not out.is_file() or out.read_text() != text:
        fd, tmp = tempfile.mkstemp(dir=dest, prefix=out.name + ".")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, out)
    return out
