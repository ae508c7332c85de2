"""How long the simulator takes to notice that what it waits for is over, in milliseconds.

Usage: ``python benchmarks/bench_waits.py [--repeat 20]``

Two waits every run and build pays, each timed from the moment the awaited event happened (a
``CLOCK_MONOTONIC`` stamp the other process takes, the same clock system-wide on Linux) to the
moment the waiter goes on:

* a program's end: ``run`` waits for its program with a time limit. ``Popen.wait(timeout)``
  checks, sleeps, and checks again in steps of up to 50 ms; ``supervise.wait_for`` wakes on the
  program's pidfd. The child sleeps a different time each round, so that the steps do not line up.
* a build-cache lock's release: a second builder of an artefact waits on its lock. filelock
  (when installed) retries every 50 ms; ``file_lock.FileLock`` waits in ``flock(2)``.

Each line gives the median and the largest delay over ``--repeat`` rounds; a busy machine adds
its scheduling delay to both sides alike.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# Sleeps, then prints the clock and exits at once (os._exit: no interpreter teardown after it).
_SLEEPER = (
    "import os, sys, time; time.sleep(float(sys.argv[1])); print(time.monotonic(), flush=True); os._exit(0)"
)
# Takes the lock (LOCK_KIND: 'flock' or 'filelock'), says so, holds it a moment, prints the clock
# as it lets go, and exits.
_HOLDER = """
import sys, time
path, kind = sys.argv[1], sys.argv[2]
if kind == "flock":
    from simulator.file_lock import FileLock
    held = FileLock(__import__("pathlib").Path(path))
else:
    from filelock import FileLock
    held = FileLock(path)
with held:
    print("held", flush=True)
    time.sleep(float(sys.argv[3]))
    released = time.monotonic()
print(released, flush=True)
"""


def _pause(round_no: int) -> float:
    """A hold or sleep between 0.1 s and 0.2 s, a different fraction of 50 ms each round."""
    return 0.1 + (round_no * 0.0137) % 0.1


def _program_end_delay(wait: Callable[[subprocess.Popen], object], round_no: int) -> float:
    """Seconds from a child's last clock reading to ``wait(child)`` returning."""
    child = subprocess.Popen(
        [sys.executable, "-c", _SLEEPER, str(_pause(round_no))], stdout=subprocess.PIPE, text=True
    )
    wait(child)
    woke = time.monotonic()
    return woke - float(child.stdout.read())


def _lock_delay(kind: str, folder: Path, round_no: int) -> float:
    """Seconds from a holder process letting go of a lock to this process holding it."""
    path = folder / f"{kind}-{round_no}.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), kind, str(_pause(round_no))],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    if holder.stdout.readline().strip() != "held":
        raise SystemExit(f"the {kind} holder did not take its lock")
    if kind == "flock":
        from simulator.file_lock import FileLock

        lock = FileLock(path)
    else:
        from filelock import FileLock as PolledLock

        lock = PolledLock(str(path))
    with lock:
        got = time.monotonic()
    released = float(holder.stdout.readline())
    holder.wait()
    return got - released


def _report(name: str, delays: list[float]) -> None:
    print(f"{name:<44} median {1000 * statistics.median(delays):6.2f} ms   max {1000 * max(delays):6.2f} ms")


def main(argv: list[str] | None = None) -> int:
    """Time each wait ``--repeat`` times and print the median and largest delay of each."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=20)
    a = p.parse_args(argv)
    if a.repeat < 1:
        p.error(f"--repeat must be at least 1, not {a.repeat}")
    from simulator.supervise import wait_for

    waits = {
        "program end: Popen.wait(timeout=60)": lambda proc: proc.wait(timeout=60),
        "program end: supervise.wait_for(proc, 60)": lambda proc: wait_for(proc, 60),
    }
    for name, wait in waits.items():
        _report(name, [_program_end_delay(wait, n) for n in range(a.repeat)])
    kinds = ["flock"]
    try:
        import filelock  # noqa: F401
    except ModuleNotFoundError:
        print("lock release: filelock is not installed; timing file_lock.FileLock only")
    else:
        kinds.insert(0, "filelock")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            label = "filelock.FileLock" if kind == "filelock" else "file_lock.FileLock (flock)"
            _report(f"lock release: {label}", [_lock_delay(kind, Path(tmp), n) for n in range(a.repeat)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
