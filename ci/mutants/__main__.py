"""``python -m ci.mutants``: generate the mutants, run them in parallel, write the report.

Usage (from the repository root; ``nox -s mutants -- ARGS`` passes ARGS here)::

    python -m ci.mutants [--jobs N] [--operators A,B] [--files PATH,...] [--ids M001,M007]
                         [--limit N] [--list] [--no-baseline] [--resume] [--out DIR] [--workdir DIR]
    python -m ci.mutants --rejudge reports/mutants.json [--out DIR]

Exit status: 0 when the session ran (whatever the score), 1 when a stage fails on the unmutated
code or a tier it needs cannot run here, 2 for a bad argument.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from ci import tiers

from . import journal, registry, report, runner, stages
from .cuda_source import CudaParseError
from .model import Mutant, numbered

ROOT = Path(__file__).resolve().parent.parent.parent
BUILD_TIER = stages.BUILD.tier
# The package each tier's stages import, and how to get it.
TIER_PACKAGES = {
    "cpu": ("numba", 'pip install -e ".[numba,test]"'),
    "cudasim": ("numba_cuda", 'pip install -e ".[cuda,test]"'),
    "sanitize": ("clang", 'pip install -e ".[test]"'),
}


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m ci.mutants", description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--jobs", type=int, default=None, help="mutants at a time (default: the CPUs this process may use)"
    )
    p.add_argument("--operators", type=_csv, default=None, metavar="A,B", help="only these operators")
    p.add_argument("--files", type=_csv, default=None, metavar="PATH,...", help="only these target files")
    p.add_argument(
        "--ids", type=_csv, default=None, metavar="M001,...", help="only these mutants (ids of --list)"
    )
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N mutants")
    p.add_argument("--list", action="store_true", help="print the mutants and stop")
    p.add_argument(
        "--no-baseline", action="store_true", help="skip running every stage on the unmutated code first"
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help=f"keep the outcomes in DIR/{journal.NAME} (an interrupted session of this same checkout) "
        "and run only the mutants it lacks",
    )
    p.add_argument(
        "--rejudge",
        type=Path,
        default=None,
        metavar="JSON",
        help="rewrite the report of a finished session (its mutants.json) with the current equivalence table",
    )
    p.add_argument(
        "--out", type=Path, default=ROOT / "reports", metavar="DIR", help="where mutants.md/.json go"
    )
    p.add_argument(
        "--workdir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the workspaces go (default: a temp dir)",
    )
    return p


def blocked_tiers() -> dict[str, str]:
    """Tier -> why it cannot run here: its machine requirements (ci/tiers.py) or a missing package."""
    out = stages.tier_problems(can_install=False)
    for tier, (module, hint) in TIER_PACKAGES.items():
        if tier not in out and importlib.util.find_spec(module) is None:
            out[tier] = f"{module} is not installed ({hint})"
    return out


def _commit() -> str | None:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def main(argv: list[str] | None = None) -> int:
    """Run the session; see the module docstring."""
    args = _parser().parse_args(argv)
    if args.rejudge is not None:
        try:
            data = report.rejudge(json.loads(args.rejudge.read_text()))
        except (OSError, ValueError, KeyError) as err:
            print(
                f"ci.mutants: --rejudge {args.rejudge}: not a session's mutants.json ({err})", file=sys.stderr
            )
            return 2
        md, js = report.write(args.out, data)
        print(f"ci.mutants: wrote {md} and {js}")
        return 0
    unknown = registry.unknown_operators(args.operators or [])
    if unknown:
        print(
            f"ci.mutants: unknown operator(s) {', '.join(unknown)}: "
            f"choose from {', '.join(registry.OPERATORS)}",
            file=sys.stderr,
        )
        return 2
    targets = (*registry.CUDA_TARGETS, *registry.PYTHON_TARGETS)
    bad_files = [f for f in args.files or [] if f not in targets]
    if bad_files:
        print(
            f"ci.mutants: {', '.join(bad_files)} is not a target: choose from {', '.join(targets)}",
            file=sys.stderr,
        )
        return 2
    if args.jobs is not None and args.jobs < 1:
        print(f"ci.mutants: --jobs {args.jobs}: give a whole number >= 1", file=sys.stderr)
        return 2
    try:
        all_mutants = numbered(registry.generate(ROOT, args.operators, args.files))
    except CudaParseError as err:
        print(f"ci.mutants: {err}", file=sys.stderr)
        return 1
    chosen = [(i, m) for i, m in all_mutants if not args.ids or i in args.ids]
    if args.limit is not None:
        chosen = chosen[: args.limit]
    if args.list:
        for mid, m in chosen:
            print(f"{mid} {m.operator:21} {m.path}:{m.line} {m.function}: {m.original} -> {m.mutated}")
        return 0
    blocked = blocked_tiers()
    if blocked:
        for tier, why in blocked.items():
            print(f"ci.mutants: the {tier} tier cannot run here: {why}", file=sys.stderr)
    out = args.out.resolve()  # the report and journal, if inside the checkout, are not what it judges
    judged = [f for f in runner.workspace_files(ROOT) if not (ROOT / f).resolve().is_relative_to(out)]
    try:
        record = journal.Journal.open(args.out / journal.NAME, journal.fingerprint(ROOT, judged), args.resume)
    except journal.JournalError as err:
        print(f"ci.mutants: {err}", file=sys.stderr)
        return 2
    resumed = {mid: o for mid, m in chosen if (o := record.recorded(mid, m)) is not None}
    todo = [(mid, m) for mid, m in chosen if mid not in resumed]
    if args.resume:
        print(f"ci.mutants: {len(resumed)} outcomes kept from {record.path}", flush=True)
    cpus = tiers.cpu_count()
    jobs = min(args.jobs or cpus, max(1, len(todo)))
    selection = []
    for flag in ("operators", "files", "ids"):
        if getattr(args, flag):
            selection.append(f"--{flag} {','.join(getattr(args, flag))}")
    if args.limit is not None:
        selection.append(f"--limit {args.limit}")
    start = time.monotonic()
    try:
        ran, base = _run(todo, jobs, max(1, cpus // jobs), blocked, record, args) if todo else ({}, [])
    except runner.BaselineError as err:
        print(f"ci.mutants: {err}", file=sys.stderr)
        return 1
    outcomes = [resumed.get(mid) or ran[mid] for mid, _ in chosen]
    meta = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _commit(),
        "cpus": cpus,
        "jobs": jobs,
        "wall_seconds": round(time.monotonic() - start + record.earlier_seconds, 1),
        "resumed": len(resumed),
        "tiers_not_run": blocked,
        "baseline": base,
        "selection": " ".join(selection),
    }
    data = report.to_json(outcomes, meta)
    md, js = report.write(args.out, data)
    s = data["summary"]
    print(
        f"ci.mutants: {s['killed']} killed, {s['survived']} survived, {s['equivalent']} equivalent, "
        f"{s['not_built']} not built, {s['not_run']} not run in {meta['wall_seconds']:.0f} s; "
        f"wrote {md} and {js}"
    )
    return 1 if blocked else 0


def _run(
    todo: list[tuple[str, Mutant]],
    jobs: int,
    threads: int,
    blocked: dict[str, str],
    record: journal.Journal,
    args: argparse.Namespace,
) -> tuple[dict[str, runner.Outcome], list[dict[str, object]]]:
    """Workspaces, the baseline (unless ``--no-baseline``) and ``todo``'s mutants: outcomes by id and
    the baseline's stage times; BaselineError when the unmutated code fails a stage or does not build."""
    cache = Path(os.environ.get("SIMULATOR_CACHE") or ROOT / "build" / "simulator-cache").resolve()
    with tempfile.TemporaryDirectory(prefix="tl-mutants-", dir=args.workdir) as work:
        print(f"ci.mutants: {len(todo)} mutants to run, {jobs} at a time, workspaces in {work}", flush=True)
        pool = runner.Workspaces(ROOT, Path(work), jobs, threads, cache, build=BUILD_TIER not in blocked)
        base: list[dict[str, object]] = []
        if not args.no_baseline:
            needed = {
                s.name
                for _, m in todo
                for s in stages.stages_for(m.path)
                if s.tier not in blocked and not s.builds
            }
            ordered = {s.name: s for group in stages.STAGES.values() for s in group if s.name in needed}
            results = runner.baseline(pool, list(ordered.values()), jobs, _say)
            base = [{"stage": r.stage, "seconds": round(r.seconds, 1)} for r in results]
        ran = {o.id: o for o in runner.run_all(pool, todo, jobs, blocked, _say, record.record)}
    return ran, base


def _say(line: str) -> None:
    print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
