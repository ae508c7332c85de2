"""The linker of a build's links: GNU gold where the compiler links and runs a program with it,
else the compiler's default one.

Every program, ``check`` driver and kernel library links the runtime's object, megabytes of
debug information that the linker copies and relocates: gold does that in about half the CPU
time of the default ld.bfd (0.06 s against 0.12 s for a memcheck program), and a test suite
links hundreds of programs. Whether it can is asked once per compiler and kept in the build
cache: a small program with a thread-local variable (read through TLS descriptors under
``-mtls-dialect=gnu2``) is linked with ``-fuse-ld=gold`` and run. A link that fails with gold
is done again with the default linker, so that a program gold cannot link still links, and a
link that fails says so in the default linker's words.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

from .build_cache import cache_dir, cache_key, cached_output, write_new
from .compiler_errors import compile_step, compiles
from .compiler_run import invoke
from .errors import SimBuildError
from .toolchain import common_flags, compiler_id

__all__ = ["GOLD", "fast_linker_flags", "link_step"]

GOLD = "-fuse-ld=gold"

# It exits 0 only where the thread-local variable is each thread's own, initialised in each.
_PROBE_SOURCE = """
#include <thread>
thread_local int counter = 40;
int main() {
    int seen = 0;
    std::thread t([&] { counter += 1; seen = counter; });
    t.join();
    return seen == 41 && counter == 40 ? 0 : 1;
}
"""


def _gold_identity() -> str:
    """Path, size and modification time of ``ld.gold`` on PATH (a new or removed gold asks again)."""
    found = shutil.which("ld.gold")
    if found is None:
        return "absent"
    info = os.stat(os.path.realpath(found))
    return f"{found}:{info.st_size}:{info.st_mtime_ns}"


def _gold_links(cxx: str, folder: Path) -> bool:
    """Whether ``cxx`` links the probe program with gold in ``folder`` and the program runs right."""
    source = folder / "probe.cpp"
    program = folder / "probe"
    write_new(source, _PROBE_SOURCE.encode())
    try:
        args = [cxx, *common_flags(cxx), "-O1", GOLD, "-x", "c++", str(source), "-o", str(program)]
        if invoke(args, "a test of the gold linker").returncode != 0:
            return False
        try:
            run = subprocess.run([str(program)], capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            return False
        return run.returncode == 0
    finally:
        source.unlink(missing_ok=True)
        program.unlink(missing_ok=True)


@cache
def fast_linker_flags(cxx: str) -> tuple[str, ...]:
    """``(GOLD,)`` where ``cxx`` links with gold (asked once, kept in the build cache), else ``()``."""
    try:
        folder = cache_dir()
        flags = " ".join(common_flags(cxx))
        key = cache_key("linker", _PROBE_SOURCE, cxx, compiler_id(cxx), _gold_identity(), flags)
    except (SimBuildError, OSError):
        return ()  # the build itself says why the cache or the compiler cannot be used
    record = folder / f"linker-{key}.txt"

    def produce(tmp: Path) -> None:
        work = tmp.with_name(tmp.name + ".d")
        work.mkdir()
        try:
            tmp.write_text(GOLD if _gold_links(cxx, work) else "")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    try:
        answer = cached_output(record, produce).read_text().split()
    except SimBuildError:
        return ()
    return tuple(f for f in answer if f == GOLD)


def link_step(args: list[str], what: str) -> None:
    """Run the link ``args`` (``args[0]`` the compiler) with the fast linker where there is one,
    else, or where that fails, as given; :class:`SimBuildError` explaining a failure."""
    fast = fast_linker_flags(args[0])
    if fast and compiles([args[0], *fast, *args[1:]], what):
        return
    compile_step(args, what)
