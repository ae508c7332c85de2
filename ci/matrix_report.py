"""Merge the per-tier JSON of tests/matrix_plugin.py into reports/matrix.md and reports/matrix.json.

Usage: ``python ci/matrix_report.py [--tiers TIERS.json] [--out DIR] [RESULTS.json ...]``

``--tiers`` is the summary the ``matrix`` nox session writes (one entry per tier: session,
status passed/failed/unavailable, reason, seconds); the result files of the tiers that ran
are taken from its directory (``<tier>.json``) unless given as arguments. One row per op,
one column per backend and tier; each cell counts passed, failed, errors and skips, and the
skip reasons are listed below the table.

``--docker DIR`` (default ``<out>/docker``) holds what ``nox -s docker-cpu`` and ``docker-cuda``
write: one ``<image kind>.json`` per session with each image's build time, size, bases (stand-ins
included), in-image test counts next to the same session's counts outside Docker, and checks.
They become the report's ``docker`` section.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REGISTRY = Path(__file__).resolve().parent.parent / "torchlight" / "backends" / "registry.py"


def registered_backends() -> list[str]:
    """Backend names in the order of torchlight's backend registry (read without importing torchlight)."""
    spec = importlib.util.spec_from_file_location("torchlight_backend_registry", REGISTRY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module.backend_names()


TIER_ORDER = ["cpu", "cudasim", "kernels", "sanitize", "gpu"]
# Columns: the registered backends, then "-" for tests that take no backend.
BACKEND_ORDER = [*registered_backends(), "-"]
OUTCOMES = ["passed", "failed", "error", "skipped"]


def column_label(backend: str, tier: str) -> str:
    """The report column for a backend in a tier, e.g. ``numba``, ``cuda (cudasim)``."""
    if backend == "-":
        return f"{tier} tier"
    if tier == "cpu":
        return backend
    if tier == "cudasim" and backend == "cuda-c":
        return "cuda-c (simulated)"
    return f"{backend} ({tier})"


def _column_key(backend: str, tier: str) -> tuple[int, int, str]:
    tier_rank = TIER_ORDER.index(tier) if tier in TIER_ORDER else len(TIER_ORDER)
    backend_rank = BACKEND_ORDER.index(backend) if backend in BACKEND_ORDER else len(BACKEND_ORDER) - 1
    return tier_rank, backend_rank, f"{tier}/{backend}"


def load_results(paths: list[Path]) -> list[dict[str, Any]]:
    """All records of the given plugin files; ValueError naming a file that is not one."""
    records: list[dict[str, Any]] = []
    for path in paths:
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "results" not in data:
            raise ValueError(f"{path} is not a --matrix-json file (no 'results' key)")
        records.extend(data["results"])
    # Shards of one tier each report a module skipped at collection: count it once.
    unique: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        unique.setdefault((r["tier"], r["backend"], r["nodeid"]), r)
    return list(unique.values())


def build(records: list[dict[str, Any]], tiers: list[dict[str, Any]]) -> dict[str, Any]:
    """The report as data: columns, per-op per-column counts and skip reasons, tier summary."""
    pairs = sorted({(r["backend"], r["tier"]) for r in records}, key=lambda p: _column_key(*p))
    columns = [column_label(b, t) for b, t in pairs]
    cells: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in records:
        cell = cells[r["op"]].setdefault(
            column_label(r["backend"], r["tier"]), {**{o: 0 for o in OUTCOMES}, "skip_reasons": Counter()}
        )
        cell[r["outcome"]] = cell.get(r["outcome"], 0) + 1
        if r["outcome"] == "skipped":
            cell["skip_reasons"][r.get("reason") or "no reason given"] += 1
    ops = {
        op: {col: {**c, "skip_reasons": dict(c["skip_reasons"])} for col, c in sorted(by_col.items())}
        for op, by_col in sorted(cells.items())
    }
    totals = Counter(r["outcome"] for r in records)
    return {
        "columns": columns,
        "ops": ops,
        "totals": {o: totals.get(o, 0) for o in OUTCOMES},
        "tiers": tiers,
        "unavailable": [t for t in tiers if t.get("status") == "unavailable"],
    }


def _cell_text(cell: dict[str, Any] | None, notes: dict[str, int]) -> str:
    if cell is None:
        return ""
    parts = [f"{cell['passed']} passed"] if cell["passed"] else []
    parts += [f"**{cell[o]} {o}**" for o in ("failed", "error") if cell[o]]
    if cell["skipped"]:
        marks = "".join(f" [s{notes.setdefault(reason, len(notes) + 1)}]" for reason in cell["skip_reasons"])
        parts.append(f"{cell['skipped']} skipped{marks}")
    return ", ".join(parts) or "0 tests"


def render_markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown page."""
    lines = ["# torchlight test matrix", ""]
    if report["tiers"]:
        lines += ["## Tiers", "", "| tier | session | status | time | note |", "|---|---|---|---|---|"]
        for t in report["tiers"]:
            seconds = f"{t['seconds']:.0f} s" if "seconds" in t else ""
            note = t.get("reason", "")
            lines.append(f"| {t['tier']} | `nox -s {t['session']}` | {t['status']} | {seconds} | {note} |")
        lines.append("")
    totals = report["totals"]
    lines += [
        "## Results by op",
        "",
        ", ".join(f"{totals[o]} {o}" for o in OUTCOMES) + " in all.",
        "",
    ]
    notes: dict[str, int] = {}
    if report["columns"]:
        lines.append("| op | " + " | ".join(report["columns"]) + " |")
        lines.append("|---|" + "---|" * len(report["columns"]))
        for op, by_col in report["ops"].items():
            row = [_cell_text(by_col.get(col), notes) for col in report["columns"]]
            lines.append(f"| {op} | " + " | ".join(row) + " |")
    else:
        lines.append("No test results were recorded.")
    lines.append("")
    if notes:
        lines += ["Skip reasons:", ""]
        lines += [f"- s{n}: {reason.replace(chr(10), ' ')}" for reason, n in notes.items()]
        lines.append("")
    lines += ["## Tiers this machine could not run", ""]
    if report["unavailable"]:
        lines += [
            f"- **{t['tier']}** (`nox -s {t['session']}`): {t['reason']}" for t in report["unavailable"]
        ]
    else:
        lines.append("None: every tier ran here.")
    return "\n".join(lines) + "\n"


def load_docker(folder: Path | None) -> list[dict[str, Any]]:
    """The records the docker sessions wrote in ``folder`` (``*.json``); ValueError names a bad file."""
    if folder is None or not folder.is_dir():
        return []
    records = []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "images" not in data or "session" not in data:
            raise ValueError(f"{path} is not a docker session record (no 'session'/'images' keys)")
        records.append(data)
    return records


def _counts_cell(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "no results"
    return " / ".join(str(counts.get(o, 0)) for o in OUTCOMES)


def render_docker(records: list[dict[str, Any]]) -> str:
    """The ``docker`` section: one row per image, then one row per tier run inside an image."""
    lines = ["## Docker", ""]
    if not records:
        lines += ["No image was built (`nox -s docker-cpu`, `nox -s docker-cuda` write this section).", ""]
        return "\n".join(lines)
    lines += ["| session | image | status | build | size | bases | checks |", "|---|---|---|---|---|---|---|"]
    tiers = []
    for record in records:
        for image in record["images"]:
            status = "failed: " + "; ".join(image["problems"]) if image.get("problems") else "passed"
            size = f"{image.get('size_bytes', 0) / 1e9:.2f} GB"
            lines.append(
                f"| `nox -s {record['session']}` | `{image['tag']}` | {status} "
                f"| {image.get('build_seconds', 0):.0f} s | {size} | {'; '.join(image.get('bases', []))} "
                f"| {'; '.join(image.get('checks', []))} |"
            )
            for name, run in (image.get("tests") or {}).items():
                tiers.append((image["tag"], name, run))
    lines.append("")
    if tiers:
        lines += [
            f"In-image tiers ({' / '.join(OUTCOMES)}), next to the same session outside Docker:",
            "",
            "| image | session | in image | outside Docker | counts | exit | time |",
            "|---|---|---|---|---|---|---|",
        ]
        for tag, name, run in tiers:
            verdict = "match" if run.get("match") else "**differ**"
            lines.append(
                f"| `{tag}` | `nox -s {name}` | {_counts_cell(run.get('inside'))} "
                f"| {_counts_cell(run.get('outside'))} | {verdict} | {run.get('exit')} "
                f"| {run.get('seconds', 0):.0f} s |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the tier files, write matrix.md and matrix.json."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="--matrix-json files (default: from --tiers)")
    parser.add_argument("--tiers", type=Path, help="tier summary written by `nox -s matrix`")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="output directory")
    parser.add_argument("--docker", type=Path, help="docker session records (default: <out>/docker)")
    args = parser.parse_args(argv)
    tiers: list[dict[str, Any]] = json.loads(args.tiers.read_text()) if args.tiers else []
    paths = list(args.results)
    if not paths and args.tiers:
        paths = [args.tiers.parent / f"{t['tier']}.json" for t in tiers if t.get("status") != "unavailable"]
        paths = [p for p in paths if p.is_file()]
    try:
        report = build(load_results(paths), tiers)
        report["docker"] = load_docker(args.docker if args.docker else args.out / "docker")
    except (OSError, ValueError, KeyError) as err:
        print(f"matrix_report: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "matrix.json").write_text(json.dumps(report, indent=1) + "\n")
    (args.out / "matrix.md").write_text(render_markdown(report) + "\n" + render_docker(report["docker"]))
    print(f"wrote {args.out / 'matrix.md'} and {args.out / 'matrix.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
