"""reports/matrix.html: the matrix report (``ci/matrix_report.py``'s data) as one page to look at.

The page is self-contained (inline CSS and script, no network): the header, every tier with its
status, the op x backend/tier grid with each cell coloured by its outcome, the tiers that did not
run and why, the compile check, mutation testing and the Docker images. Hovering a cell shows its
counts, failures and skip reasons (the ``title``); clicking it (or Enter) shows them in a panel.
Every text from the data goes through ``html.escape``.
"""

from __future__ import annotations

from html import escape
from typing import Any

OUTCOMES = ("passed", "failed", "error", "skipped")
# A cell takes the colour of its worst outcome; "not run": no test of the op ran in that column.
CELL_CLASSES = ("failed", "error", "passed", "skipped", "not-run")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { white-space: pre-wrap; margin: 0.2em 0; }
.legend span { display: inline-block; padding: 0.15em 0.6em; margin-right: 0.4em; border: 1px solid #bbb; }
td.cell { cursor: pointer; min-width: 6em; }
td.cell.selected { outline: 3px solid #1565c0; outline-offset: -3px; }
.passed { background: #c8e6c9; }
.failed { background: #ef9a9a; }
.error { background: #ffcc80; }
.skipped { background: #fff59d; }
.not-run { background: #e0e0e0; color: #666; }
#details { border: 1px solid #888; padding: 0.5em 1em; background: #fafafa; max-width: 60em; }
"""

# Copies the clicked cell's hidden detail block into the panel (cloned nodes: no HTML parsing).
SCRIPT = """
(function () {
  "use strict";
  var panel = document.getElementById("details");
  function show(cell) {
    var source = document.getElementById(cell.getAttribute("data-detail"));
    if (!panel || !source) { return; }
    panel.replaceChildren.apply(panel, Array.prototype.map.call(source.childNodes, function (n) {
      return n.cloneNode(true);
    }));
    var selected = document.querySelectorAll("td.cell.selected");
    for (var i = 0; i < selected.length; i++) { selected[i].classList.remove("selected"); }
    cell.classList.add("selected");
  }
  var cells = document.querySelectorAll("td.cell[data-detail]");
  for (var i = 0; i < cells.length; i++) {
    cells[i].addEventListener("click", function (event) { show(event.currentTarget); });
    cells[i].addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(event.currentTarget); }
    });
  }
})();
"""


def cell_outcome(cell: dict[str, Any] | None) -> str:
    """The class a grid cell is coloured by: its worst outcome, or ``not-run`` when it has no tests."""
    if cell is None:
        return "not-run"
    for outcome in ("failed", "error", "passed", "skipped"):
        if cell.get(outcome):
            return outcome
    return "not-run"


def _counts(cell: dict[str, Any]) -> str:
    return ", ".join(f"{cell[o]} {o}" for o in OUTCOMES if cell.get(o)) or "0 tests"


def _cell_lines(op: str, column: str, cell: dict[str, Any] | None) -> list[str]:
    """The plain-text lines of a cell's hover text."""
    if cell is None:
        return [f"{op} in {column}: no test of this op ran here"]
    lines = [f"{op} in {column}: {_counts(cell)}"]
    lines += [f"{f['outcome']}: {f['nodeid']}: {f.get('reason', '')}" for f in cell.get("failures", [])]
    lines += [f"skipped ({n}): {reason}" for reason, n in cell.get("skip_reasons", {}).items()]
    return lines


def _detail_block(op: str, column: str, cell: dict[str, Any] | None) -> str:
    """The panel's content for a cell: counts, then each failure and each skip reason."""
    parts = [f"<h3>{escape(op)} in {escape(column)}</h3>"]
    if cell is None:
        return "".join([*parts, "<p>No test of this op ran in this column.</p>"])
    parts.append(f"<p>{escape(_counts(cell))}</p>")
    failures = cell.get("failures", [])
    if failures:
        parts.append("<h4>Failures and errors</h4><ul>")
        parts += [
            f'<li class="{escape(f["outcome"])}"><code>{escape(f["nodeid"])}</code> ({escape(f["outcome"])})'
            f"<pre>{escape(f.get('reason') or 'no message recorded')}</pre></li>"
            for f in failures
        ]
        parts.append("</ul>")
    elif cell.get("failed") or cell.get("error"):
        parts.append("<p>The failures' texts were not recorded (a report from an older version).</p>")
    reasons = cell.get("skip_reasons", {})
    if reasons:
        parts.append("<h4>Skip reasons</h4><ul>")
        parts += [f"<li>{n} &times; <pre>{escape(reason)}</pre></li>" for reason, n in reasons.items()]
        parts.append("</ul>")
    return "".join(parts)


def _table(header: list[str], rows: list[list[str]], table_id: str = "") -> str:
    """A table of already-escaped cells."""
    ident = f' id="{table_id}"' if table_id else ""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _header(header: dict[str, Any], packages: tuple[str, ...]) -> str:
    commit = escape(str(header.get("commit", "unknown")))
    dirty = " with uncommitted changes" if header.get("uncommitted_changes") else ""
    line = (
        f"<p>Commit <code>{commit}</code>{dirty}, {escape(str(header.get('date', '')))}, "
        f"{escape(str(header.get('cpus', '?')))} CPUs, {escape(str(header.get('platform', '')))}.</p>"
    )
    envs = header.get("environments") or {}
    if not envs:
        return line + "<p>No tier recorded its Python and package versions (no result files).</p>"
    rows = [
        [escape(tier), *(escape(str(env.get(k, "unknown"))) for k in ("python", *packages))]
        for tier, env in envs.items()
    ]
    return line + _table(["tier", "Python", *map(escape, packages)], rows, "environments")


_STATUS_CLASS = {"passed": "passed", "failed": "failed"}


def _tiers(tiers: list[dict[str, Any]]) -> str:
    rows = []
    for t in tiers:
        status = escape(t["status"])
        seconds = f"{t['seconds']:.0f} s" if "seconds" in t else ""
        rows.append(
            [
                escape(t["tier"]),
                f"<code>nox -s {escape(t.get('session', '?'))}</code>",
                "yes" if t["ran"] else "no",
                f'<span class="{_STATUS_CLASS.get(t["status"], "not-run")}">{status}</span>',
                seconds,
                escape(t.get("reason", "")),
            ]
        )
    return _table(["tier", "session", "ran", "status", "time", "reason"], rows, "tiers")


def _grid(report: dict[str, Any]) -> tuple[str, str]:
    """The grid table and the hidden block of each cell's details."""
    columns: list[str] = report["columns"]
    if not columns:
        return '<p id="grid-empty">No test results were recorded.</p>', ""
    head = "<th>op</th>" + "".join(f'<th scope="col">{escape(c)}</th>' for c in columns)
    rows, details = [], []
    for op, by_col in report["ops"].items():
        cells = []
        for col in columns:
            cell = by_col.get(col)
            ident = f"detail-{len(details)}"
            details.append(f'<div id="{ident}">{_detail_block(op, col, cell)}</div>')
            text = _counts(cell) if cell else "not run"
            title = escape("\n".join(_cell_lines(op, col, cell)))
            outcome = cell_outcome(cell)
            cells.append(
                f'<td class="cell {outcome}" data-outcome="{outcome}" data-detail="{ident}" '
                f'tabindex="0" title="{title}">{escape(text)}</td>'
            )
        rows.append(f'<tr><th scope="row">{escape(op)}</th>{"".join(cells)}</tr>')
    table = f'<table id="grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    return table, f'<div id="detail-sources" hidden>{"".join(details)}</div>'


def _not_run(report: dict[str, Any], tier_names: list[str]) -> str:
    if report["not_run"]:
        items = "".join(
            f"<li><b>{escape(t['tier'])}</b> (<code>nox -s {escape(t.get('session', '?'))}</code>): "
            f"{escape(t['status'])}: {escape(t.get('reason', ''))}</li>"
            for t in report["not_run"]
        )
        return f'<ul id="not-run">{items}</ul>'
    missing = [n for n in tier_names if not any(t["tier"] == n for t in report["tiers"])]
    if missing:
        return f'<p id="not-run">The tier summary does not mention {escape(", ".join(missing))}.</p>'
    return '<p id="not-run">None: every tier ran here.</p>'


def _mutants(mutants: dict[str, Any] | None) -> str:
    if mutants is None:
        return (
            '<p id="mutants">Not run here: <code>nox -s mutants</code> plants GPU bugs in the kernels, '
            "runs the CPU tiers on each and writes <code>mutants.md</code> beside this report (it takes "
            "hours, so CI does not run it).</p>"
        )
    s = mutants["summary"]
    score = "n/a" if s["score"] is None else f"{100 * s['score']:.1f}%"
    partial = f" (a partial run: {escape(str(mutants['selection']))})" if mutants.get("selection") else ""
    link = escape(mutants["report"])
    return (
        f'<p id="mutants">{s["killed"]} of {s["killed"] + s["survived"]} non-equivalent'
        f" mutants killed ({score}), "
        f"{s['survived']} survived, {s['equivalent']} equivalent{partial}; {escape(str(mutants['date']))}, "
        f"commit {escape(str(mutants['commit'] or 'unknown'))}, {mutants['wall_seconds']:.0f} s. "
        f'Every mutant and what killed it: <a href="{link}">{link}</a>.</p>'
    )


def _docker_counts(counts: dict[str, int] | None) -> str:
    return "no results" if counts is None else " / ".join(str(counts.get(o, 0)) for o in OUTCOMES)


def _docker(records: list[dict[str, Any]]) -> str:
    if not records:
        return (
            "<p>No image was built (<code>nox -s docker-cpu</code>, <code>nox -s docker-cuda</code> "
            "write this section).</p>"
        )
    images, in_image = [], []
    for record in records:
        for image in record["images"]:
            problems = image.get("problems")
            status = (
                f'<span class="failed">failed: {escape("; ".join(problems))}</span>'
                if problems
                else '<span class="passed">passed</span>'
            )
            images.append(
                [
                    f"<code>nox -s {escape(record['session'])}</code>",
                    f"<code>{escape(image['tag'])}</code>",
                    status,
                    f"{image.get('build_seconds', 0):.0f} s",
                    f"{image.get('size_bytes', 0) / 1e9:.2f} GB",
                    escape("; ".join(image.get("bases", []))),
                    escape("; ".join(image.get("checks", []))),
                ]
            )
            for name, run in (image.get("tests") or {}).items():
                match = run.get("match")
                verdict = '<span class="passed">match</span>' if match else '<b class="failed">differ</b>'
                in_image.append(
                    [
                        f"<code>{escape(image['tag'])}</code>",
                        f"<code>nox -s {escape(name)}</code>",
                        _docker_counts(run.get("inside")),
                        _docker_counts(run.get("outside")),
                        verdict,
                        escape(str(run.get("exit"))),
                        f"{run.get('seconds', 0):.0f} s",
                    ]
                )
    out = _table(["session", "image", "status", "build", "size", "bases", "checks"], images, "docker")
    if in_image:
        out += f"<p>In-image tiers ({' / '.join(OUTCOMES)}), next to the same session outside Docker:</p>"
        header = ["image", "session", "in image", "outside Docker", "counts", "exit", "time"]
        out += _table(header, in_image, "docker-tests")
    return out


def render_html(
    report: dict[str, Any],
    compile_line: str,
    tier_names: list[str],
    packages: tuple[str, ...] = ("numpy", "numba", "numba-cuda"),
) -> str:
    """The report (``matrix_report.build`` plus ``docker`` and ``mutants``) as one HTML page.

    ``compile_line``: the compile check's text (``matrix_report.compile_text``); ``tier_names``:
    every tier of the table, to say which ones the summary leaves out.
    """
    totals = report["totals"]
    grid, details = _grid(report)
    legend = "".join(f'<span class="{c}">{c.replace("-", " ")}</span>' for c in CELL_CLASSES)
    body = [
        "<h1>torchlight test matrix</h1>",
        _header(report["header"], packages),
        "<h2>Tiers</h2>",
        _tiers(report["tiers"]),
        "<h2>Results by op</h2>",
        f'<p id="totals">{escape(", ".join(f"{totals[o]} {o}" for o in OUTCOMES))} in all. '
        "Hover a cell for its tests' outcomes; click it for the details below the grid.</p>",
        f'<p class="legend">{legend}</p>',
        grid,
        '<h3>Details</h3><div id="details" aria-live="polite"><p>Click a cell of the grid.</p></div>',
        details,
        "<h2>Tiers that did not run</h2>",
        _not_run(report, tier_names),
        "<h2>Compile check</h2>",
        f'<pre id="compile">{escape(compile_line)}</pre>',
        "<h2>Mutation testing</h2>",
        _mutants(report.get("mutants")),
        "<h2>Docker</h2>",
        _docker(report.get("docker") or []),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>torchlight test matrix</title><style>{STYLE}</style></head>\n<body>\n"
        + "\n".join(body)
        + f"\n<script>{SCRIPT}</script>\n</body></html>\n"
    )
