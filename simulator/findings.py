"""Read a simulated program's output into findings, one line each.

The sanitizers (AddressSanitizer, UBSan, LeakSanitizer, ThreadSanitizer) and the runtime print
reports; each becomes one line naming the kind of error and the first frame in the user's code
(frames in the runtime and the system are skipped). ``check`` and ``run`` both judge a child by
these lines.
"""

from __future__ import annotations

import re
import signal

__all__ = ["death_by_signal", "parse_findings", "unprinted_errors"]

_SIGNAL_HINTS = {
    signal.SIGABRT: "an abort: a failed assert() or std::abort",
    signal.SIGSEGV: "a segmentation fault: e.g. a wild pointer or a stack overflow",
    signal.SIGBUS: "a bus error: e.g. a misaligned or wild pointer",
    signal.SIGFPE: "an arithmetic fault: e.g. an integer division by zero",
    signal.SIGILL: "an illegal instruction: e.g. __builtin_trap or a function that fell off its end",
}


def death_by_signal(number: int) -> str:
    """``signal N`` with what it usually means in a simulated program."""
    hint = _SIGNAL_HINTS.get(number, "")
    return f"signal {number}" + (f" ({hint})" if hint else "")


# The patterns below are text: re compiles each on first use and caches it, so a process that never
# reads a report compiles none of them.
_FRAME = r"#\d+ 0x[0-9a-f]+ in (.+?) (/\S+?):(\d+)(?::\d+)?$|#\d+ (.+?) (/\S+?):(\d+)(?::\d+)? \("


def _runtime_frame(path: str) -> bool:
    # simulator/runtime/ in the repository, torchlight/simulator/runtime/ when installed
    return "simulator/runtime/" in path or path.startswith("/usr/") or "/gcc/" in path


def _first_user_frame(lines: list[str], start: int) -> str:
    frames = []
    for ln in lines[start : start + 40]:
        m = re.search(_FRAME, ln.strip())
        if m:
            frames.append((m.group(1) or m.group(4), m.group(2) or m.group(5), m.group(3) or m.group(6)))
    for i, (func, path, line) in enumerate(frames):
        if not _runtime_frame(path):
            # A region of a kernel run as block loops (simulator/block_loops.py) is a lambda the
            # runtime's thread loop calls: named by the kernel, as with fibers.
            # (Its lambda is generic where the loop has a fast form; memcheck's build inlines the
            # loop's body, plain_thread_loop, into for_each_plain_thread.)
            if (
                (func == "operator()" or func.startswith("operator()<"))
                and i + 2 < len(frames)
                and frames[i + 1][0].startswith(("for_each_plain_thread<", "plain_thread_loop<"))
            ):
                func = frames[i + 2][0]
            return f"{func} at {path}:{line}"
    return "source line unknown"


def _tsan_threads(lines: list[str]) -> dict[str, str]:
    """Thread names (``T3`` -> ``kernel K block (..) thread (..)``) as one report lists them.

    The runtime reuses ThreadSanitizer fibers between launches and renames them, so a name is
    only right within the report that prints it.
    """
    names = {}
    for ln in lines:
        m = re.match(r"\s*Thread (T\d+) '(.*)' \(tid=", ln)
        if m:
            names[m.group(1)] = m.group(2)
    return names


def _report_end(lines: list[str], start: int) -> int:
    for j in range(start + 1, len(lines)):
        if lines[j].startswith("SUMMARY") or "WARNING: ThreadSanitizer:" in lines[j]:
            return j
    return len(lines)


# Lines the runtime prints to label a sanitizer report, not findings of their own.
_LABEL = (
    r"simulator: memcheck: (the fault above happened in|the undefined behaviour below happened in"
    r"|host code: the report (above|below) is from host code|note: )"
)
_HOST_ABOVE = "simulator: memcheck: host code: the report above"
_HOST_BELOW = "simulator: memcheck: host code: the report below"
_UB_BELOW = r"simulator: memcheck: the undefined behaviour below happened in (.*)"


def _asan_is_host(lines: list[str], start: int) -> bool:
    """Whether the AddressSanitizer report at ``start`` is labelled as host code after it."""
    for ln in lines[start + 1 :]:
        if "ERROR: AddressSanitizer" in ln or "runtime error:" in ln:
            return False
        if ln.startswith(_HOST_ABOVE):
            return True
    return False


def _ub_label(lines: list[str], at: int) -> tuple[bool, str]:
    """(host code?, the CUDA thread) from the runtime's label printed just before a UBSan report."""
    for ln in reversed(lines[max(0, at - 3) : at]):
        if ln.startswith(_HOST_BELOW):
            return True, ""
        m = re.match(_UB_BELOW, ln)
        if m:
            return False, m.group(1)
    return False, ""


# memcheck's device faults as the runtime prints them (runtime/memcheck_reports.cpp), in compute-sanitizer's
# shape: a header, then indented lines; the raw AddressSanitizer report, when shown, comes first.
_FAULT = r"========= Invalid .* \(([\w-]+)\)$|========= Invalid .*"
_FAULT_AT = r"=========     at (.*) in (\S+:\d+)$"
_FAULT_BY = r"=========     by thread (\(\S+\)) in block (\(\S+\)) of kernel '(.*)' launched at (\S+:\d+)$"
_UNPRINTED = r"simulator: memcheck: note: (\d+) error\(s\) past the print limit"


def unprinted_errors(out: str) -> int:
    """How many memcheck errors in ``out`` were past the print limit (counted, not listed)."""
    m = re.search(_UNPRINTED, out)
    return int(m.group(1)) if m else 0


def _device_fault(lines: list[str], start: int) -> str:
    """The one-line finding of the fault block at ``start`` (today's shape: kind, frame, thread)."""
    m = re.match(_FAULT, lines[start])
    kind = (m.group(1) if m and m.group(1) else "") or lines[start].removeprefix("========= ")
    at, thread = "source line unknown", ""
    for ln in lines[start + 1 : start + 40]:
        if not ln.startswith("=========     "):
            break
        if am := re.match(_FAULT_AT, ln):
            at = f"{am.group(1)} at {am.group(2)}"
        elif bm := re.match(_FAULT_BY, ln):
            launched = f"(launched at {bm.group(4)})"
            thread = f"kernel '{bm.group(3)}' block {bm.group(2)} {launched} thread {bm.group(1)}"
    return f"memcheck: {kind}: {at}" + (f"; in {thread}" if thread else "")


_UB = "========= Undefined behaviour: "
_UB_INSIDE_RUNTIME = "=========     inside the simulator's runtime at "


def _device_ub(lines: list[str], start: int) -> str:
    """The one-line finding of the undefined-behaviour block at ``start``, as from UBSan's report.

    UBSan's line when it is the program's, else the program's frame that called the runtime.
    """
    what = lines[start].removeprefix(_UB)
    func, where, thread, inside_runtime = "", "", "", False
    for ln in lines[start + 1 : start + 40]:
        if not ln.startswith("=========     "):
            break
        if am := re.match(_FAULT_AT, ln):
            func, where = am.group(1), am.group(2)
        elif bm := re.match(_FAULT_BY, ln):
            thread = (
                f"kernel '{bm.group(3)}' block {bm.group(2)} (launched at {bm.group(4)}) thread {bm.group(1)}"
            )
        elif ln.startswith(_UB_INSIDE_RUNTIME):
            inside_runtime = True
    at = "source line unknown"
    if where:
        at = f"{func} at {where}" if inside_runtime else f"at {where}"
    return f"memcheck: undefined behaviour: {what} {at}" + (f"; in {thread}" if thread else "")


def _ub_shown_by_runtime(lines: list[str], at: int) -> bool:
    """Whether UBSan's report at ``at`` follows the runtime's block of it (raw reports shown)."""
    if at == 0 or lines[at - 1] != "=========":
        return False
    for j in range(at - 2, max(-1, at - 40), -1):
        if not lines[j].startswith("========="):
            return False
        if lines[j].startswith(_UB):
            return True
    return False


def _shown_by_runtime(lines: list[str], start: int) -> bool:
    """Whether the AddressSanitizer report at ``start`` is a device fault the runtime also printed."""
    for ln in lines[start + 1 :]:
        if "ERROR: AddressSanitizer" in ln or "runtime error:" in ln:
            return False
        if ln.startswith("========= ") or ln == "=========":  # not AddressSanitizer's rule of "="
            return True
    return False


def parse_findings(mode: str, out: str) -> list[str]:
    """The findings (one line each) in a simulated program's output ``out`` for ``mode``."""
    lines = out.splitlines()
    found: list[str] = []
    where = ""
    for ln in lines:
        m = re.search(r"simulator: memcheck: the fault above happened in (.*)", ln)
        if m:
            where = m.group(1)
    for i, ln in enumerate(lines):
        if ln.startswith("========= Invalid "):
            found.append(_device_fault(lines, i))
            continue
        m = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", ln)
        if m:
            if _shown_by_runtime(lines, i):
                continue
            kind = m.group(1)
            if _asan_is_host(lines, i):
                found.append(f"memcheck: host code: {kind}: {_first_user_frame(lines, i + 1)}")
                continue
            detail = f"{kind}: {_first_user_frame(lines, i + 1)}"
            if where:
                detail += f"; in {where}"
            found.append(f"memcheck: {detail}")
            continue
        if "ERROR: LeakSanitizer" in ln:
            block = "\n".join(lines[i : i + 30])
            what = (
                "device memory leak (cudaMalloc without cudaFree)" if "cudaMalloc" in block else "memory leak"
            )
            found.append(f"memcheck: {what}: {_first_user_frame(lines, i + 1)}")
            continue
        if ln.startswith(_UB):
            found.append(_device_ub(lines, i))
            continue
        m = re.search(r"(/\S+?):(\d+):\d+: runtime error: (.*)", ln)
        if m:
            if _ub_shown_by_runtime(lines, i):
                continue
            host, thread = _ub_label(lines, i)
            at = f"at {m.group(1)}:{m.group(2)}"
            if _runtime_frame(m.group(1)):  # inside a runtime header: name the program's line
                at = _first_user_frame(lines, i + 1)
            detail = f"memcheck: {'host code: ' if host else ''}undefined behaviour: {m.group(3)} {at}"
            found.append(detail + (f"; in {thread}" if thread else ""))
            continue
        if "WARNING: ThreadSanitizer:" in ln:
            kind = ln.split("WARNING: ThreadSanitizer:", 1)[1].split("(")[0].strip()
            detail = f"racecheck: {kind}"
            tsan_names = _tsan_threads(lines[i : _report_end(lines, i)])
            accesses = []
            for j in range(i + 1, min(i + 60, len(lines))):
                am = re.match(
                    r"\s*(?:Previous )?(\w+) of size (\d+) at (0x[0-9a-f]+) by thread (T\d+)", lines[j]
                )
                if am:
                    who = tsan_names.get(am.group(4), am.group(4))
                    accesses.append(f"{am.group(1).lower()} by {who} in {_first_user_frame(lines, j + 1)}")
                if lines[j].startswith("SUMMARY"):
                    break
            if accesses:
                detail += ": " + "; ".join(accesses[:2])
            found.append(detail)
            continue
        if re.match(_LABEL, ln):
            continue
        if ln.startswith("simulator: racecheck: warning (not a hazard)"):
            continue  # as compute-sanitizer's warnings: shown, but not a finding
        m = re.match(r"simulator: (.*)", ln)
        if m:
            found.append(m.group(1))
    return found
