"""Progress of long work (the runtime's builds): a live line on a terminal, plain lines in a log.

``SIMULATOR_PROGRESS=0`` (what ``--quiet`` sets) silences it; the lines go to stderr, so a
program's own output on stdout is never mixed with them.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

PROGRESS_VARIABLE = "SIMULATOR_PROGRESS"


def enabled() -> bool:
    """Whether progress is shown (``$SIMULATOR_PROGRESS`` is not ``0``)."""
    return os.environ.get(PROGRESS_VARIABLE, "") != "0"


class Progress:
    """``what: n/N done, S s`` for ``total`` steps; ``step()`` after each (thread-safe)."""

    def __init__(self, what: str, total: int, stream: TextIO | None = None) -> None:
        self.what, self.total, self.done = what, total, 0
        self._stream = sys.stderr if stream is None else stream
        self._live = bool(getattr(self._stream, "isatty", lambda: False)())
        self._shown = enabled()
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._write(f"{self.what}: 0/{self.total}")

    def _write(self, text: str, last: bool = False) -> None:
        if not self._shown:
            return
        if self._live:  # one line, rewritten in place; the last one ends it
            self._stream.write(f"\r\033[K{text}" + ("\n" if last else ""))
        else:
            self._stream.write(text + "\n")
        self._stream.flush()

    def step(self) -> None:
        """One more step done."""
        with self._lock:
            self.done += 1
            elapsed = time.monotonic() - self._start
            self._write(
                f"{self.what}: {self.done}/{self.total} done, {elapsed:.0f} s", self.done == self.total
            )
