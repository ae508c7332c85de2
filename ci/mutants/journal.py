"""The record a session keeps of its finished mutants, so that an interrupted session can resume.

A session appends one JSON line per mutant as it finishes (``<out>/mutants-journal.jsonl``). The
first line fingerprints the checkout the workspaces copy (every tracked or untracked-but-not-ignored
file's path and bytes): an outcome holds only for the kernels and tests it ran against, so
``--resume`` refuses a journal of another checkout. A mutant is known by its file, operator and
edits (its id depends on the operators and files chosen). Mutants that did not run because a tier
could not run here are not recorded, so a resumed session tries them again.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model import Mutant
from .runner import Outcome

NAME = "mutants-journal.jsonl"
FINAL = ("killed", "survived", "not built")  # the fates a later run of the same checkout would repeat


class JournalError(ValueError):
    """A journal that cannot be resumed: missing, unreadable, or written for another checkout."""


def fingerprint(root: Path, files: list[str]) -> str:
    """A hash of ``files`` (paths relative to ``root``) and their contents."""
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0")
        digest.update((root / rel).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def mutant_key(mutant: Mutant) -> str:
    """What identifies ``mutant`` across sessions of one checkout: its file, operator and edits."""
    return json.dumps([mutant.path, mutant.operator, [[e.start, e.end, e.text] for e in mutant.edits]])


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text().splitlines()
    except OSError as err:
        raise JournalError(f"cannot read {path}: {err.strerror}") from err
    records = []
    for number, line in enumerate(lines, 1):
        try:
            records.append(json.loads(line))
        except ValueError:
            if number == len(lines):  # the run was stopped while writing its last line
                break
            raise JournalError(f"{path}:{number} is not a journal line") from None
    if not records or "fingerprint" not in records[0]:
        raise JournalError(f"{path} is not a mutants journal (its first line names no checkout)")
    return records


def earlier_seconds(records: list[dict[str, Any]]) -> float:
    """The wall time the runs recorded in ``records`` spent: each from its start to its last outcome."""
    total, start, last = 0.0, None, None
    for rec in records:
        if "start" in rec:
            if start is not None and last is not None:
                total += last - start
            start, last = rec["start"], None
        elif "finished_at" in rec:
            last = rec["finished_at"]
    if start is not None and last is not None:
        total += last - start
    return total


@dataclass
class Journal:
    """An open journal: the outcomes recorded before this run, and the file new ones go to."""

    path: Path
    done: dict[str, dict[str, Any]] = field(default_factory=dict)
    earlier_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(cls, path: Path, checkout: str, resume: bool) -> Journal:
        """Start a journal at ``path`` for the checkout fingerprinted ``checkout``; with ``resume``,
        continue the one there (JournalError when there is none or it is another checkout's)."""
        journal = cls(path)
        if resume:
            if not path.is_file():
                raise JournalError(f"--resume: no journal at {path} (a session writes it as it runs)")
            records = _read(path)
            if records[0]["fingerprint"] != checkout:
                raise JournalError(
                    f"--resume: {path} was written for another state of the checkout (kernels, tests or "
                    "harness changed since): its outcomes would not hold; run without --resume"
                )
            journal.done = {r["key"]: r for r in records if "key" in r}
            journal.earlier_seconds = earlier_seconds(records)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"fingerprint": checkout}) + "\n")
        journal._append({"start": time.time()})
        return journal

    def _append(self, record: dict[str, Any]) -> None:
        with self._lock, self.path.open("a") as f:
            f.write(json.dumps(record) + "\n")

    def record(self, outcome: Outcome) -> None:
        """Append ``outcome`` (when it is a fate a rerun would repeat)."""
        if outcome.status not in FINAL:
            return
        self._append(
            {
                "key": mutant_key(outcome.mutant),
                "status": outcome.status,
                "stage": outcome.stage,
                "test": outcome.test,
                "detail": outcome.detail,
                "seconds": round(outcome.seconds, 1),
                "finished_at": time.time(),
            }
        )

    def recorded(self, mid: str, mutant: Mutant) -> Outcome | None:
        """The outcome an earlier run recorded for ``mutant`` (given this run's id), or None."""
        rec = self.done.get(mutant_key(mutant))
        if rec is None:
            return None
        return Outcome(mid, mutant, rec["status"], rec["seconds"], rec["stage"], rec["test"], rec["detail"])
