"""``reports/mutants.md`` and ``reports/mutants.json``: every mutant, its operator, line and fate."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import equivalent
from .registry import OPERATORS
from .runner import Outcome

STATUSES = ("killed", "survived", "equivalent", "not built", "not run")

HOW_TO_READ = """\
Each mutant is one realistic GPU bug planted in one kernel source (an operator of
`ci/mutants/registry.py` applied at one site found from the syntax tree: libclang for CUDA C, `ast`
for the numba kernels). The session builds it for the CPU and runs the tests of the CPU tiers that
can catch it, cheapest first, and stops at the first failing test:

* **killed**: a test failed (or hung and was stopped); *killed by* names the stage and the test;
* **survived**: every stage passed: no CPU tier catches this bug (a gap, listed under *Survivors*);
* **equivalent**: survived, and cannot change any result the kernels return (the reason is listed;
  such mutants are left out of the score);
* **not built**: the mutated source does not compile (the compiler catches the bug before any
  test runs; left out of the score);
* **not run**: a tier its stages need cannot run on this machine (named in the summary).

The score is killed / (killed + survived). `change` shows the code before and after, as written.
Rerun with `nox -s mutants` (`-- --help` for the options: operators, files, jobs).
"""


def judge(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with the equivalence table applied: ``equivalent`` holds the listed reason (or None),
    and a survivor listed as equivalent has the status ``equivalent``."""
    out = []
    for row in rows:
        ran = "survived" if row["status"] == "equivalent" else row["status"]
        fields = (row["path"], row["function"], row["operator"], row["original"], row["mutated"])
        reason = equivalent.reason_for_change(*fields, row.get("source_line", ""), row.get("line", 0))
        out.append(
            {**row, "status": "equivalent" if ran == "survived" and reason else ran, "equivalent": reason}
        )
    return out


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per status, and the score over the non-equivalent mutants that ran."""
    counts = Counter(r["status"] for r in rows)
    judged = counts["killed"] + counts["survived"]
    return {
        "total": len(rows),
        **{s.replace(" ", "_"): counts[s] for s in STATUSES},
        "score": round(counts["killed"] / judged, 4) if judged else None,
        "wrongly_listed_equivalent": sum(1 for r in rows if r["status"] == "killed" and r["equivalent"]),
    }


def to_json(outcomes: list[Outcome], meta: dict[str, Any]) -> dict[str, Any]:
    """The whole session as one JSON-ready dict."""
    rows = []
    for o in outcomes:
        m = asdict(o.mutant)
        m.pop("edits")
        rows.append(
            {
                "id": o.id,
                **m,
                "status": o.status,
                "stage": o.stage,
                "test": o.test,
                "detail": o.detail,
                "seconds": round(o.seconds, 1),
            }
        )
    return rejudge({**meta, "mutants": rows})


def rejudge(data: dict[str, Any]) -> dict[str, Any]:
    """A session's JSON with the current equivalence table and operator list applied again."""
    rows = judge(data["mutants"])
    return {
        **{k: v for k, v in data.items() if k not in ("operators", "summary", "mutants")},
        "operators": {n: op.bug for n, op in OPERATORS.items()},
        "summary": summarize(rows),
        "mutants": rows,
    }


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def _change(row: dict[str, Any]) -> str:
    return f"`{_cell(row['original'])}` → `{_cell(row['mutated'])}`"


def _where(row: dict[str, Any]) -> str:
    return f"{row['path'].rsplit('/', 1)[-1]}:{row['line']}"


def _percent(score: float | None) -> str:
    return "n/a" if score is None else f"{100 * score:.1f}%"


def render_markdown(data: dict[str, Any]) -> str:
    """The Markdown page of a session's JSON."""
    s = data["summary"]
    rows = data["mutants"]
    judged = s["killed"] + s["survived"]
    out = ["# Mutation testing of the GPU kernels", "", HOW_TO_READ, "## Summary", ""]
    out.append(
        f"- **Score: {s['killed']} of {judged} non-equivalent mutants killed ({_percent(s['score'])})**; "
        f"{s['equivalent']} equivalent, {s['not_built']} not built, {s['not_run']} not run, "
        f"{s['total']} in all."
    )
    if s["wrongly_listed_equivalent"]:
        out.append(
            f"- {s['wrongly_listed_equivalent']} mutant(s) listed as equivalent were killed: "
            "their listing in `ci/mutants/equivalent.py` is wrong."
        )
    out.append(
        f"- Session: {data['wall_seconds']:.0f} s wall time, {data['jobs']} mutants at a time on "
        f"{data['cpus']} CPUs; commit {data.get('commit') or 'unknown'}; {data['date']}."
    )
    if data.get("resumed"):
        out.append(
            f"- Resumed (`--resume`): {data['resumed']} outcomes kept from an interrupted run of the same "
            "checkout; the wall time adds up the runs."
        )
    if data.get("baseline"):
        stages = ", ".join(f"{b['stage']} {b['seconds']:.0f} s" for b in data["baseline"])
        out.append(f"- Baseline (every stage on the unmutated code, all passed): {stages}.")
    else:
        out.append(
            "- Baseline: not run (`--no-baseline`): a stage failing on the unmutated code would "
            "kill every mutant."
        )
    blocked = data.get("tiers_not_run") or {}
    if blocked:
        for tier, why in blocked.items():
            out.append(f"- **Tier that cannot run here: {tier}** ({why}); its stages were skipped.")
    else:
        out.append("- Every CPU tier the stages use ran here (cpu, cudasim, sanitize).")
    out.append(
        "- Not run by this session: the gpu tier (real hardware) and the kernels tier (nvcc and ptxas "
        "compile checks), which compile but do not run the kernels on a CPU."
    )
    if data.get("selection"):
        out.append(f"- Selection: {data['selection']} (a partial run: the score covers these mutants only).")
    out += [
        "",
        "## By operator",
        "",
        "| operator | bug | mutants | killed | survived | equivalent | not built | not run |",
    ]
    out.append("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, bug in data["operators"].items():
        mine = [r for r in rows if r["operator"] == name]
        if not mine:
            continue
        c = Counter(r["status"] for r in mine)
        out.append(
            f"| {name} | {_cell(bug)} | {len(mine)} | {c['killed']} | {c['survived']} | {c['equivalent']} "
            f"| {c['not built']} | {c['not run']} |"
        )
    out += [
        "",
        "## By file",
        "",
        "| file | mutants | killed | survived | equivalent | score |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for path in dict.fromkeys(r["path"] for r in rows):
        c = Counter(r["status"] for r in rows if r["path"] == path)
        n = c["killed"] + c["survived"]
        score = c["killed"] / n if n else None
        out.append(
            f"| `{path}` | {sum(c.values())} | {c['killed']} | {c['survived']} | {c['equivalent']} "
            f"| {_percent(score)} |"
        )
    survivors = [r for r in rows if r["status"] == "survived"]
    out += ["", "## Survivors", ""]
    if survivors:
        out += ["| id | operator | where | function | change | note |", "|---|---|---|---|---|---|"]
        out += [
            f"| {r['id']} | {r['operator']} | {_where(r)} | `{r['function']}` | {_change(r)} "
            f"| {_cell(r['detail'])} |"
            for r in survivors
        ]
    else:
        out.append("None: every non-equivalent mutant was killed.")
    equivalents = [r for r in rows if r["status"] == "equivalent"]
    out += ["", "## Equivalent mutants", ""]
    if equivalents:
        out += ["| id | operator | where | change | why no result can change |", "|---|---|---|---|---|"]
        out += [
            f"| {r['id']} | {r['operator']} | {_where(r)} | {_change(r)} | {_cell(r['equivalent'])} |"
            for r in equivalents
        ]
    else:
        out.append("None.")
    out += ["", "## Every mutant", "", "| id | operator | where | change | outcome | killed by | s |"]
    out.append("|---|---|---|---|---|---|---:|")
    for r in rows:
        by = ""
        if r["status"] == "killed":
            by = f"{r['stage']}: `{_cell(r['test'])}`" if r["test"] else f"{r['stage']}: {_cell(r['detail'])}"
            if r["equivalent"]:
                by += " (listed as equivalent: the listing is wrong)"
        elif r["status"] in ("not built", "not run"):
            by = _cell(r["detail"])
        out.append(
            f"| {r['id']} | {r['operator']} | {_where(r)} | {_change(r)} | {r['status']} | {by} "
            f"| {r['seconds']:.0f} |"
        )
    return "\n".join(out) + "\n"


def write(out_dir: Path, data: dict[str, Any]) -> tuple[Path, Path]:
    """Write ``mutants.md`` and ``mutants.json`` into ``out_dir``; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md, js = out_dir / "mutants.md", out_dir / "mutants.json"
    js.write_text(json.dumps(data, indent=1) + "\n")
    md.write_text(render_markdown(data))
    return md, js
