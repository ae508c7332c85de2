"""The simulator's C++ front end: preprocessed CUDA in, C++ that g++ compiles out.

The build preprocesses a translation unit with g++ (``-DSIM_FRONTEND``, so the CUDA qualifiers
survive as clang's CUDA attributes and every line keeps its ``# N "file"`` marker), then this
module parses that text with libclang as CUDA (host side, ``-nocudainc``) and rewrites the
syntax tree's constructs at their exact ranges:

* a kernel-call expression ``k<<<grid, block, smem, stream>>>(args)`` becomes a call of
  ``::__sim::launcher`` (or ``::__sim::launch_deduced`` for a kernel template with deduced
  arguments or an overloaded kernel), marked barrier-free when the kernel's call graph reaches
  no barrier, warp operation or other wait;
* a function-scope ``__shared__`` variable becomes a reference to per-block storage and an
  ``extern __shared__`` array a pointer to the launch's dynamic shared memory;
* device-code uses of ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``/``warpSize`` read the
  running thread's state (host code's own variables with these names are left alone);
* device-code shifts follow PTX (``::__sim::shl``/``::__sim::shr``);
* with a device pass (``__CUDA_ARCH__`` defined), each device function takes its device body,
  and declarations that only the device pass has (``#if __CUDA_ARCH__ >= 700`` helpers, types,
  variables) are carried over at their place in the source.

Constructs the simulator cannot run are refused with the file, line and name. Only code in
the user's files is rewritten; system and runtime headers pass through untouched. The parts:
``linemap.py`` (offsets, files and lines of the preprocessed text), ``syntax.py`` (the parse and
the walk that collects the edits, which calls one pass object per role: ``syntax_launches.py``,
``syntax_registry.py`` and ``syntax_device.py`` for launches, registrations and device code;
``edits.py``), ``block_loops.py`` (kernels with barriers as loops over a block's threads),
``block_loops_interchange.py`` (barrier-free kernels whose loop walks a column, in lockstep order),
``block_loops_plain.py`` (other barrier-free kernels whose column index narrows, as one such loop),
``device_launches.py`` (device-side launches clang's parse drops), ``refusals.py`` (what is
refused by name), ``errors.py``.
"""

from __future__ import annotations

import gc
import os
import re

from . import ptx_operands
from .block_loops import BlockLoops
from .block_loops_plain import PlainLoops
from .errors import INSTALL_HINT, SimBuildError, clang_module
from .syntax import Edit, TranslationUnit, source_error
from .syntax_launches import c_string

__all__ = ["INSTALL_HINT", "SimBuildError", "TranslationUnit", "clang_module", "translate_preprocessed"]

# The qualifiers as NVIDIA's <crt/host_defines.h> spells them for nvcc's front end (attributes),
# and what g++ gets instead: nothing, but a __shared__ variable left at file scope is per-block
# storage (one worker runs one block at a time).
_CUDA_ATTRIBUTE = re.compile(
    r"__attribute__\(\((?:global|device|host|constant|managed|device_builtin|cudart_builtin|"
    r"device_builtin_texture_type|device_builtin_surface_type|grid_constant|nv_pure|nv_weak|"
    r"launch_bounds\([^()]*\)|cluster_dims\([^()]*\)|__maxnreg__\([^()]*\)|__cluster_dims__\([^()]*\))\)\)"
)
_SHARED = "__attribute__((shared))"


# Put before each host-only function of the program when its host code is not to be judged:
# the sanitizers then leave that code (and what is inlined into it) uninstrumented.
UNCHECKED_HOST = '__attribute__((no_sanitize("address", "undefined", "thread"))) '
# Put before each device function of the program when device code contracts a * b + c into a
# fused multiply-add, as nvcc's device compilation does by default (-fmad=true): the function may
# use the CPU's FMA instructions, which g++ then contracts into (its default -ffp-contract=fast),
# while host code stays what the host compiler makes of it (no FMA on baseline x86-64).
DEVICE_FMA = '__attribute__((target("fma"))) '


def translate_preprocessed(
    text: str,
    user_file,
    device_text: str | None = None,
    unchecked_host: bool = False,
    fma: bool = False,
    unjudged: bool = False,
    hoisted: bool = False,
) -> str:
    """Parse ``text`` (``g++ -E`` output) and return the C++ that g++ compiles.

    ``user_file(path)`` tells the user's files (rewritten) from headers left alone. With
    ``device_text`` (the same source preprocessed with ``__CUDA_ARCH__``), each device
    function's body comes from that pass and a ``__host__ __device__`` function whose bodies
    differ chooses one at run time. ``unchecked_host`` marks the user's host-only function
    definitions ``no_sanitize`` for AddressSanitizer, UBSan and ThreadSanitizer
    (:data:`UNCHECKED_HOST`), as a GPU checker sees device code only. ``fma`` lets the user's
    device functions contract multiplies and adds into fused multiply-adds (:data:`DEVICE_FMA`).
    ``unjudged``: block-loop regions that no shared-memory hazard can involve are compiled without
    ThreadSanitizer's calls (``modes.Build.unjudged_regions``, ``block_loops_epochs.py``).
    ``hoisted``: a block-loop region whose accesses the front end can bound gets a copy without
    the sanitizers' checks (``modes.Build.hoisted_checks``, ``block_loops_hoist.py``).
    """
    # A translation makes millions of short-lived objects (cursors, offsets, matches) that
    # reference counting frees; the cyclic collector's passes over them find nothing and cost
    # 3-9% of the translation's CPU time (measured on the test programs).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _translate(text, user_file, device_text, unchecked_host, fma, unjudged, hoisted)
    finally:
        if collecting:
            gc.enable()


def _translate(
    text: str,
    user_file,
    device_text: str | None,
    unchecked_host: bool,
    fma: bool,
    unjudged: bool,
    hoisted: bool,
) -> str:
    """:func:`translate_preprocessed`'s work."""
    ptx_operands.restart_statement_numbers()
    host = _parse_legacy(text, user_file)
    device = None
    if device_text is not None and device_text != text:
        device = _parse_legacy(device_text, user_file)
        # Each pass judges its own code: device function bodies the device pass, the rest the host.
        host.problems = [p for p in host.problems if host.function_kind(p[0]) not in ("global", "device")]
        device.problems = [
            p for p in device.problems if device.function_kind(p[0]) in ("global", "device", "hd")
        ]
    problems = [(tu, p) for tu in (host, device) if tu is not None for p in tu.problems]
    if problems:
        tu, (pos, msg) = min(problems, key=lambda tp: tp[0].src.where(tp[1][0]))
        raise source_error(tu.src, pos, msg)
    runs = device if device is not None else host
    loops = BlockLoops(runs, fma, unjudged, hoisted)
    lockstep = PlainLoops(runs, fma)
    for edit, keys in host.launches:
        matched = [_match(host, runs, key) for key in keys]
        free = bool(keys) and all(runs.barrier_free(key) for key in matched)
        looped = not free and bool(keys) and all(loops.rewritten(key) for key in matched)
        checked = looped and all(loops.checkers_too(key) for key in matched)
        kind = (
            "::__sim::kInterchangedFast"
            if free and all(lockstep.rewritten(key) for key in matched)
            else "true"
            if free
            else "::__sim::kBlockLoops"
            if checked
            else "::__sim::kBlockLoopsFast"
            if looped
            else _fibers_kind(runs, loops, matched)
        )
        edit.parts = [kind if p == "SIM_BARRIER_FREE" else p for p in edit.parts]
    if device is not None:
        host.edits.extend(_device_bodies(host, device))
        host.edits.extend(_device_only(host, device))
    if unchecked_host:
        host.edits.extend(_attribute_at(host, pos, UNCHECKED_HOST) for pos in host.unchecked_host_starts())
    if fma:
        host.edits.extend(_attribute_at(host, pos, DEVICE_FMA) for pos in host.device_starts())
    out = host.render().replace(_SHARED, "static thread_local")
    return _CUDA_ATTRIBUTE.sub("", out)


def _fibers_kind(runs: TranslationUnit, loops: BlockLoops, keys: list) -> str:
    """``false`` with the first reason one of kernels ``keys`` keeps fibers, for the launch log:
    the block-loop analysis's, else the barrier-free analysis's, with its file and line."""
    for key in keys:
        found = loops.fibers_why(key) or runs.fibers_why(key)
        if found is None:
            continue
        at, what = found
        path, line = runs.src.where(key if at is None else at)
        why = f"{what} ({os.path.basename(path)}:{line})"
        return f"::__sim::BarrierKind{{false, false, {c_string(why)}}}"
    return "false"


def _attribute_at(tu: TranslationUnit, pos: int, attribute: str) -> Edit:
    """An attribute inserted at ``pos``; on a line of its own before a line marker (a qualifier
    written with a macro that a system header defines starts with one)."""
    text = tu.src.text
    if (pos == 0 or text[pos - 1] == "\n") and text.startswith("# ", pos):
        return Edit(pos, pos, [attribute + "\n"], exact=True)
    return Edit(pos, pos, [attribute])


_LEGACY = re.compile(r"<<[ \t]+<(?!<)|>>[ \t]+>(?!>)")


def _parse_legacy(text: str, user_file) -> TranslationUnit:
    """Parse ``text``, first joining the legacy launch spelling ``<< <``/``>> >`` where clang stops.

    nvcc accepts ``k<< <grid, block>> >(args)``; clang reads ``<< <`` as a shift and reports an
    error there. Only lines where the parse failed are joined, and then parsed again.
    """
    for _ in range(4):
        tu = TranslationUnit(text, user_file)
        lines = set()
        for d in tu.tu.diagnostics:
            if d.severity >= 3 and d.location.file is not None:
                pos = tu.src.pre(d.location.offset)
                if tu.src.is_user(pos):
                    lines.add(tu.src.line(pos))
        fixed = text
        for ln in sorted(lines, reverse=True):
            a = tu.src.line_starts[ln]
            b = tu.src.line_starts[ln + 1] if ln + 1 < len(tu.src.line_starts) else len(text)
            row = _LEGACY.sub(lambda m: m.group(0)[:2] + m.group(0)[-1], text[a:b])
            fixed = fixed[:a] + row + fixed[b:]
        if fixed == text:
            return tu
        text = fixed
    return tu


def _match(host: TranslationUnit, other: TranslationUnit, key: int | None) -> int | None:
    """The key in ``other`` of the function ``key`` of ``host`` (same file, line, column, name)."""
    if key is None or other is host:
        return key
    if key not in host.funcs:
        return None
    return other.function_at(host.origin(key))


def _marker(tu: TranslationUnit, pos: int) -> str:
    path, line = tu.src.where(pos)
    escaped = path.replace("\\", "\\\\").replace('"', '\\"')
    return f'\n# {line} "{escaped}"\n'


def _device_bodies(host: TranslationUnit, device: TranslationUnit) -> list[Edit]:
    """Edits giving each device function of ``host`` its body from the ``__CUDA_ARCH__`` pass."""
    edits = []
    for key, f in host.funcs.items():
        if not f.user or f.body is None or f.kind == "host":
            continue
        dkey = _match(host, device, key)
        dbody = device.funcs[dkey].body if dkey is not None else None
        if dbody is None:
            continue
        dev = device.render(*dbody)
        start, end = f.body
        # The device body keeps its own line numbers; a marker after it puts the next line back.
        after = _marker(host, end)
        if f.kind == "hd":
            if dev == host.render(start, end):
                continue
            parts = [
                "{ if (::__sim::on_device()) ",
                dev,
                _marker(host, start),
                " else ",
                (start, end),
                " }",
                after,
            ]
        else:
            parts = [dev, after]
        edits.append(Edit(start, end, parts, exact=True))
    return edits


_SCOPES = ("NAMESPACE", "LINKAGE_SPEC")


def _decls(tu: TranslationUnit, cursor, scope: tuple, out: list) -> None:
    """The user's namespace-scope declarations under ``cursor``: (scope, origin, start, end, cursor)."""
    for c in cursor.get_children():
        start = tu.off(c.extent.start)
        if start < 0 or not tu.src.is_user(start):
            continue
        path, line = tu.src.where(start)
        origin = (path, line, c.kind.name, c.spelling)
        end = tu.src.through_semicolon(tu.off(c.extent.end))
        out.append((scope, origin, start, end, c))
        if c.kind.name in _SCOPES:
            _decls(tu, c, (*scope, origin[2:]), out)


def _body(tu: TranslationUnit, cursor) -> tuple[int, int] | None:
    """The range of a function definition's body, or None for a declaration."""
    for ch in cursor.get_children():
        if ch.kind.name == "COMPOUND_STMT":
            return tu.rng(ch)
    return None


def _per_pass_definition(host: TranslationUnit, device: TranslationUnit, hosts: list, dev) -> Edit | None:
    """One function defined once per pass (``#if __CUDA_ARCH__ __device__ int f() {...} #else int
    f() {...} #endif``), as nvcc compiles each pass on its own: the host pass's definition runs its
    device body on a CUDA thread and its own elsewhere. None when ``dev`` has no such twin."""
    scope, origin, start, end, cursor = dev
    if origin[2] != "FUNCTION_DECL":
        return None
    dbody = _body(device, cursor)
    if dbody is None:
        return None
    for hscope, horigin, _start, _end, hcursor in hosts:
        if hscope != scope or horigin[2:] != origin[2:] or hcursor.type.spelling != cursor.type.spelling:
            continue
        hbody = _body(host, hcursor)
        if hbody is None:
            continue
        bstart, bend = hbody
        text = device.render(*dbody).replace("SIM_BARRIER_FREE", "false")
        parts = ["{ if (::__sim::on_device()) ", _marker(device, dbody[0]), text, _marker(host, bstart)]
        parts += [" else ", (bstart, bend), " }", _marker(host, bend)]
        return Edit(bstart, bend, parts, exact=True)
    return None


def _device_only(host: TranslationUnit, device: TranslationUnit) -> list[Edit]:
    """Edits inserting the declarations only the ``__CUDA_ARCH__`` pass has, at their place.

    A helper defined inside ``#if __CUDA_ARCH__ >= 700`` exists for nvcc's device compile only;
    the device bodies taken from that pass call it, so its text (with the device pass's rewrites
    and its own line markers) goes before the next host declaration that follows it in its file.
    """
    hosts: list = []
    devs: list = []
    _decls(host, host.tu.cursor, (), hosts)
    _decls(device, device.tu.cursor, (), devs)
    known = {(h[0], h[1]) for h in hosts}
    host_scopes = {(*h[0], h[1][2:]) for h in hosts} | {()}
    host_vars = {(h[0], h[1][3]) for h in hosts if h[1][2] == "VAR_DECL"}
    inserts: dict[int, list[str]] = {}
    merged: list[Edit] = []
    for dev in devs:
        scope, origin, start, end, _ = dev
        if (scope, origin) in known or scope not in host_scopes:
            continue  # in both passes, or inside a scope that is itself carried over whole
        if origin[2] == "VAR_DECL" and (scope, origin[3]) in host_vars:
            # `#if __CUDA_ARCH__ ... const int N = 48K; #else const int N = 16K; #endif` (as in
            # Rodinia's dwt2d): one program has one variable, so the host pass's definition stays.
            continue
        twin = _per_pass_definition(host, device, hosts, dev)
        if twin is not None:
            merged.append(twin)
            continue
        path, line = origin[0], origin[1]
        siblings = [h for h in hosts if h[0] == scope and h[1][0] == path]
        after = [h for h in siblings if h[1][1] > line]
        if after:
            at = min(h[2] for h in after)
        elif siblings:
            at = max(h[3] for h in siblings)
        else:
            continue
        text = device.render(start, end).replace("SIM_BARRIER_FREE", "false")
        inserts.setdefault(at, []).append(_marker(device, start) + text + _marker(host, at))
    return merged + [Edit(at, at, ["".join(parts)], exact=True) for at, parts in sorted(inserts.items())]
