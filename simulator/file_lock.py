"""An exclusive lock on a file, shared by every process and thread that opens the same path.

The build cache's builders of one artefact (pytest workers, threads of one build) wait on it for
each other. The wait is a blocking ``flock(2)``: the kernel wakes the waiter the moment the
holder lets go (or dies), where a lock that retries every few milliseconds adds that much to
every build that waited. Ctrl-C still ends a wait (Python runs the handler and gives up the call).
The lock file is opened without following a link, never truncated and created private (0600).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from types import TracebackType

__all__ = ["FileLock"]


class FileLock:
    """``with FileLock(path):`` holds an exclusive lock on ``path`` (created if missing) inside.

    Not reentrant: a second ``FileLock`` of the same path in the same process waits for the first,
    as another process would. OSError when the file cannot be opened (a link there: ELOOP).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> FileLock:
        if self._fd is not None:
            raise RuntimeError(f"the lock on {self.path} is already held by this FileLock")
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # the lock belongs to this open file, and goes with its last descriptor
