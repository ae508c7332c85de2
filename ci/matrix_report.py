"""Merge the per-tier JSON of tests/matrix_plugin.py into reports/matrix.md, .json and .html.

Usage: ``python -m ci.matrix_report [--tiers TIERS.json] [--out DIR] [RESULTS.json ...]`` (or
``python ci/matrix_report.py ...``), from the repository root.

``--tiers`` is the summary the ``matrix`` nox session writes (one entry per tier: session,
status passed / failed / not selected / cannot run here, reason, seconds); the result files of
the tiers that ran are taken from its directory (``<tier>.json``, and ``compile_ptx.json`` from
``ci/compile_ptx.py --json``, and ``nvcc-<tier>.json``, the nvcc a tier built its kernels with,
from ``python -m ci.tiers nvcc --json``) unless given as arguments. Without ``--tiers`` a tier counts as run
when a result file names it, and as unknown otherwise.

The page starts with a header (commit, date, CPU count, and each tier's Python, numpy, numba
and numba-cuda versions), then every tier with whether it ran and why or why not, the compile
check's counts, and one row per op, one column per backend and tier; each cell counts passed,
failed, errors and skips, and the skip reasons are listed below the table.

``--mutants FILE`` (default ``<out>/mutants.json``) is what ``nox -s mutants`` wrote: its score becomes
the report's mutation-testing section, with a link to ``mutants.md``.

``--docker DIR`` (default ``<out>/docker``) holds what ``nox -s docker-cpu`` and ``docker-cuda``
write: one ``<image kind>.json`` per session with each image's build time, size, bases (stand-ins
included), in-image test counts next to the same session's counts outside Docker, and checks.
They become the report's ``docker`` section.

``matrix.html`` (``ci/matrix_html.py``) is the same report as a page to look at: the grid
coloured by outcome, each cell's failures and skip reasons on hover and click.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as `python ci/matrix_report.py`: make `ci` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ci import tiers  # noqa: E402
from ci.matrix_html import render_html  # noqa: E402
from simulator.host import cpu_count  # noqa: E402

REGISTRY = Path(__file__).resolve().parent.parent / "torchlight" / "backends" / "registry.py"


def registered_backends() -> list[str]:
    """Backend names in the order of torchlight's backend registry (read without importing torchlight)."""
    # By path: `import torchlight.backends.registry` runs the package's __init__, which needs numpy,
    # and the CI report job has a bare Python.
    spec = importlib.util.spec_from_file_location("torchlight_backend_registry", REGISTRY)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module.backend_names()


# Rows in the order of the tier table, each with the session that runs it.
TIER_ORDER = list(tiers.TIERS)
TIER_SESSIONS = {name: tier.session for name, tier in tiers.TIERS.items()}
# Columns: the registered backends, then "-" for tests that take no backend.
BACKEND_ORDER = [*registered_backends(), "-"]
OUTCOMES = ["passed", "failed", "error", "skipped"]
# A tier's status: it ran (passed or failed), or did not (not selected, cannot run here, unknown).
RAN = ("passed", "failed")
NOT_RUN = ("not selected", "cannot run here", "unknown")
REPORTED_PACKAGES = ("numpy", "numba", "numba-cuda")
COMPILE_FILE = "compile_ptx.json"
NVCC_PREFIX = "nvcc-"  # nvcc-<tier>.json: the nvcc that tier built its kernels with


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
    return load_inputs(paths)["records"]


def load_inputs(paths: list[Path]) -> dict[str, Any]:
    """Records, each tier's environment, the compile counts and each tier's nvcc from the files."""
    records: list[dict[str, Any]] = []
    environments: dict[str, dict[str, str]] = {}
    compile_counts: dict[str, Any] | None = None
    nvcc: dict[str, dict[str, str] | None] = {}
    for path in paths:
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "compile_ptx" in data:
            compile_counts = data["compile_ptx"]
            continue
        if isinstance(data, dict) and "nvcc" in data and path.stem.startswith(NVCC_PREFIX):
            nvcc[path.stem[len(NVCC_PREFIX) :]] = data["nvcc"]
            continue
        if not isinstance(data, dict) or "results" not in data:
            raise ValueError(f"{path} is not a --matrix-json file (no 'results' key)")
        records.extend(data["results"])
        if data.get("tier"):
            packages = data.get("packages", {})
            environments[data["tier"]] = {
                "python": data.get("python", "unknown"),
                **{name: packages.get(name, "unknown") for name in REPORTED_PACKAGES},
            }
    # Shards of one tier each report a module skipped at collection: count it once.
    unique: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        unique.setdefault((r["tier"], r["backend"], r["nodeid"]), r)
    return {
        "records": list(unique.values()),
        "environments": environments,
        "compile": compile_counts,
        "nvcc": nvcc,
    }


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def machine_header() -> dict[str, Any]:
    """Commit (and whether the tree has uncommitted changes), date, CPU count and platform."""
    commit = _git("rev-parse", "--short=12", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return {
        "commit": commit or "unknown (not a git checkout, or git is not installed)",
        "uncommitted_changes": bool(status),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpus": cpu_count(),
        "platform": platform.platform(),
    }


def tier_statuses(
    summary_tiers: list[dict[str, Any]],
    records: list[dict[str, Any]],
    nvcc: dict[str, dict[str, str] | None] | None = None,
) -> list[dict[str, Any]]:
    """One entry per tier: ``ran`` and ``status`` with its ``reason``, whatever the input said.

    From the ``matrix`` session's summary when given (an old ``unavailable`` reads as ``cannot
    run here``); else a tier with results ran and one without is ``unknown``. A tier that ran
    and recorded its nvcc (``nvcc``: tier -> ``python -m ci.tiers nvcc`` answer) names it.
    """
    out = _statuses(summary_tiers, records)
    for entry in out:
        if entry["ran"] and entry["tier"] in (nvcc or {}):
            entry["nvcc"] = nvcc[entry["tier"]]
            built = f"kernels built with {tiers.nvcc_text(entry['nvcc'])}"
            entry["reason"] = "; ".join(filter(None, [entry.get("reason", ""), built]))
    return out


def _statuses(summary_tiers: list[dict[str, Any]], records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        counts[r["tier"]][r["outcome"]] += 1

    def summary(tier: str) -> str:
        c = counts.get(tier)
        return ", ".join(f"{c[o]} {o}" for o in OUTCOMES if c and c[o]) if c else "no test results recorded"

    out = []
    if summary_tiers:
        for t in summary_tiers:
            status = "cannot run here" if t.get("status") == "unavailable" else t.get("status", "unknown")
            entry = {**t, "status": status, "ran": status in RAN}
            if entry["ran"]:
                entry["reason"] = "; ".join(filter(None, [t.get("reason", ""), summary(t["tier"])]))
            out.append(entry)
        return out
    for tier in [*TIER_ORDER, *sorted(set(counts) - set(TIER_ORDER))]:
        session = TIER_SESSIONS.get(tier, "?")
        if tier in counts:
            failed = counts[tier]["failed"] or counts[tier]["error"]
            entry = {"status": "failed" if failed else "passed", "ran": True, "reason": summary(tier)}
        else:
            reason = "no result file for this tier and no tier summary (--tiers) to say why"
            entry = {"status": "unknown", "ran": False, "reason": reason}
        out.append({"tier": tier, "session": session, **entry})
    return out


def build(
    records: list[dict[str, Any]],
    summary_tiers: list[dict[str, Any]],
    environments: dict[str, dict[str, str]] | None = None,
    compile_counts: dict[str, Any] | None = None,
    header: dict[str, Any] | None = None,
    nvcc: dict[str, dict[str, str] | None] | None = None,
) -> dict[str, Any]:
    """The report as data: header, tier statuses, compile counts, per-op per-column counts."""
    pairs = sorted({(r["backend"], r["tier"]) for r in records}, key=lambda p: _column_key(*p))
    columns = [column_label(b, t) for b, t in pairs]
    cells: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in records:
        cell = cells[r["op"]].setdefault(
            column_label(r["backend"], r["tier"]),
            {**{o: 0 for o in OUTCOMES}, "skip_reasons": Counter(), "failures": []},
        )
        cell[r["outcome"]] = cell.get(r["outcome"], 0) + 1
        if r["outcome"] == "skipped":
            cell["skip_reasons"][r.get("reason") or "no reason given"] += 1
        elif r["outcome"] in ("failed", "error"):  # the HTML page shows each one's text
            cell["failures"].append({k: r.get(k, "") for k in ("nodeid", "outcome", "reason")})
    ops = {
        op: {col: {**c, "skip_reasons": dict(c["skip_reasons"])} for col, c in sorted(by_col.items())}
        for op, by_col in sorted(cells.items())
    }
    totals = Counter(r["outcome"] for r in records)
    statuses = tier_statuses(summary_tiers, records, nvcc)
    return {
        "header": {**(header or machine_header()), "environments": environments or {}},
        "columns": columns,
        "ops": ops,
        "totals": {o: totals.get(o, 0) for o in OUTCOMES},
        "tiers": statuses,
        "not_run": [t for t in statuses if not t["ran"]],
        "compile": compile_counts,
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


def compile_text(report: dict[str, Any]) -> str:
    """One line on the compile check: its counts, or why there are none."""
    counts = report.get("compile")
    kernels = next((t for t in report["tiers"] if t["tier"] == "kernels"), None)
    if counts:
        line = (
            f"compile_ptx: {counts['passed']}/{counts['total']} kernel builds passed "
            f"({counts['kernels']} kernels x {', '.join(counts['archs'])}"
            + (f"; assembled by {counts['ptxas']}" if counts.get("ptxas") else "; PTX only, no ptxas")
            + ")"
        )
        failures = counts.get("failures") or []
        return line + "".join(f"\n  - {f}" for f in failures)
    if kernels is None:
        return "compile_ptx: no result (the kernels tier is not in this report)"
    if not kernels["ran"]:
        return f"compile_ptx: not run (kernels tier {kernels['status']}: {kernels.get('reason', '')})"
    return f"compile_ptx: no result recorded although the kernels tier ran ({COMPILE_FILE} missing)"


def _header_lines(header: dict[str, Any]) -> list[str]:
    commit = f"`{header['commit']}`" + (
        " with uncommitted changes" if header.get("uncommitted_changes") else ""
    )
    lines = [f"Commit {commit}, {header['date']}, {header['cpus']} CPUs, {header['platform']}.", ""]
    envs = header.get("environments") or {}
    if envs:
        lines += ["| tier | Python | " + " | ".join(REPORTED_PACKAGES) + " |"]
        lines += ["|---|---|" + "---|" * len(REPORTED_PACKAGES)]
        for tier, env in sorted(envs.items(), key=lambda kv: _column_key("-", kv[0])):
            row = [env.get("python", "unknown"), *(env.get(p, "unknown") for p in REPORTED_PACKAGES)]
            lines.append(f"| {tier} | " + " | ".join(row) + " |")
    else:
        lines.append("No tier recorded its Python and package versions (no result files).")
    return [*lines, ""]


def render_markdown(report: dict[str, Any]) -> str:
    """The report as a Markdown page."""
    lines = ["# torchlight test matrix", "", *_header_lines(report["header"])]
    lines += [
        "## Tiers",
        "",
        "| tier | session | ran | status | time | reason |",
        "|---|---|---|---|---|---|",
    ]
    for t in report["tiers"]:
        seconds = f"{t['seconds']:.0f} s" if "seconds" in t else ""
        reason = t.get("reason", "").replace("|", "\\|")
        ran = "yes" if t["ran"] else "no"
        lines.append(
            f"| {t['tier']} | `nox -s {t['session']}` | {ran} | {t['status']} | {seconds} | {reason} |"
        )
    lines.append("")
    groups = {s: [t["tier"] for t in report["tiers"] if t["status"] == s] for s in (*RAN, *NOT_RUN)}
    ran = [t["tier"] for t in report["tiers"] if t["ran"]]
    summary = [f"Ran: {', '.join(ran) or 'none'}."]
    summary += [
        f"{s.capitalize()}: {', '.join(names)}." for s, names in groups.items() if s in NOT_RUN and names
    ]
    lines += [" ".join(summary), "", "## Compile check", "", compile_text(report), ""]
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
    if any(col.startswith("cuda-c") for col in report["columns"]):
        lines += [
            "In the cuda-c columns only float32 fused ops run the CUDA C kernels: float64 ones (the "
            "gradient checks) run the numba-cuda kernels. The C backward passes meet float64 "
            "gradients in `tests/backends/cuda_c/test_cuda_c_library.py`.",
            "",
        ]
    lines += ["## Tiers that did not run", ""]
    if report["not_run"]:
        lines += [
            f"- **{t['tier']}** (`nox -s {t['session']}`): {t['status']}: {t.get('reason', '')}"
            for t in report["not_run"]
        ]
    elif all(any(t["tier"] == name for t in report["tiers"]) for name in TIER_ORDER):
        lines.append("None: every tier ran here.")
    else:
        missing = [n for n in TIER_ORDER if not any(t["tier"] == n for t in report["tiers"])]
        lines.append(f"The tier summary does not mention {', '.join(missing)}.")
    return "\n".join(lines) + "\n"


def load_mutants(path: Path) -> dict[str, Any] | None:
    """The summary of the last ``nox -s mutants`` session (its ``mutants.json``), or None."""
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    keys = ("date", "commit", "wall_seconds", "jobs", "cpus", "tiers_not_run", "selection")
    return {
        "summary": data["summary"],
        **{k: data.get(k) for k in keys},
        "report": path.with_suffix(".md").name,
    }


def render_mutants(mutants: dict[str, Any] | None) -> str:
    """The report's mutation-testing section: the last session's score and a link to its report."""
    lines = ["## Mutation testing", ""]
    if mutants is None:
        lines.append(
            "Not run here: `nox -s mutants` plants GPU bugs in the kernels, runs the CPU tiers on each "
            "and writes `mutants.md` beside this report (it takes hours, so CI does not run it)."
        )
        return "\n".join(lines) + "\n"
    s = mutants["summary"]
    judged = s["killed"] + s["survived"]
    score = "n/a" if s["score"] is None else f"{100 * s['score']:.1f}%"
    partial = f" (a partial run: {mutants['selection']})" if mutants.get("selection") else ""
    lines.append(
        f"{s['killed']} of {judged} non-equivalent mutants killed ({score}), {s['survived']} survived, "
        f"{s['equivalent']} equivalent{partial}; {mutants['date']}, commit {mutants['commit'] or 'unknown'}, "
        f"{mutants['wall_seconds']:.0f} s. Every mutant and what killed it: "
        f"[{mutants['report']}]({mutants['report']})."
    )
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
    in_image = []
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
                in_image.append((image["tag"], name, run))
    lines.append("")
    if in_image:
        lines += [
            f"In-image tiers ({' / '.join(OUTCOMES)}), next to the same session outside Docker:",
            "",
            "| image | session | in image | outside Docker | counts | exit | time |",
            "|---|---|---|---|---|---|---|",
        ]
        for tag, name, run in in_image:
            verdict = "match" if run.get("match") else "**differ**"
            lines.append(
                f"| `{tag}` | `nox -s {name}` | {_counts_cell(run.get('inside'))} "
                f"| {_counts_cell(run.get('outside'))} | {verdict} | {run.get('exit')} "
                f"| {run.get('seconds', 0):.0f} s |"
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: read the tier files, write matrix.md, matrix.json and matrix.html."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="*", type=Path, help="--matrix-json files (default: from --tiers)")
    parser.add_argument("--tiers", type=Path, help="tier summary written by `nox -s matrix`")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="output directory")
    parser.add_argument("--docker", type=Path, help="docker session records (default: <out>/docker)")
    parser.add_argument("--mutants", type=Path, help="nox -s mutants' record (default: <out>/mutants.json)")
    args = parser.parse_args(argv)
    summary: list[dict[str, Any]] = json.loads(args.tiers.read_text()) if args.tiers else []
    paths = list(args.results)
    if not paths and args.tiers:
        ran = [t["tier"] for t in summary if t.get("status") in RAN]
        paths = [args.tiers.parent / f"{name}.json" for name in ran]
        paths += [args.tiers.parent / f"{NVCC_PREFIX}{name}.json" for name in ran]
        paths = [p for p in [*paths, args.tiers.parent / COMPILE_FILE] if p.is_file()]
    try:
        inputs = load_inputs(paths)
        report = build(
            inputs["records"], summary, inputs["environments"], inputs["compile"], nvcc=inputs["nvcc"]
        )
        report["docker"] = load_docker(args.docker if args.docker else args.out / "docker")
        report["mutants"] = load_mutants(args.mutants if args.mutants else args.out / "mutants.json")
    except (OSError, ValueError, KeyError) as err:
        print(f"matrix_report: {err}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "matrix.json").write_text(json.dumps(report, indent=1) + "\n")
    sections = [render_markdown(report), render_mutants(report["mutants"]), render_docker(report["docker"])]
    (args.out / "matrix.md").write_text("\n".join(sections))
    page = render_html(report, compile_text(report), TIER_ORDER, REPORTED_PACKAGES)
    (args.out / "matrix.html").write_text(page, encoding="utf-8")
    print(f"wrote {args.out / 'matrix.md'}, {args.out / 'matrix.json'} and {args.out / 'matrix.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
