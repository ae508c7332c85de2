"""reports/matrix.html as a person sees it: built from a small set of tier results by
``ci/matrix_report.py``, then loaded in headless Chromium, whose DOM (after the page's script ran)
is read back: the grid's cells and their colours, a failed cell's text on hover and in the details
panel after a click, the tiers that did not run and why, and no console message."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from ci import matrix_report as report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install chromium): the page is checked in a real browser",
)

FAILURE = "AssertionError: <b>1 & 2</b> differ <script>alert(1)</script>"
ERROR = "RuntimeError: setup broke"
SKIP = "numba is not installed (pip install 'torchlight[numba]')"
NOT_RUN = {
    "kernels": ("cannot run here", "nvcc not found on PATH"),
    "sanitize": ("not selected", "not in TORCHLIGHT_MATRIX_TIERS=cpu,cudasim"),
    "gpu": ("cannot run here", "nvidia-smi not found on PATH"),
}
# op -> column -> the outcomes recorded there (each one test).
RESULTS = {
    "add": {"cpu": ["passed", "passed"], "numba": ["skipped"], "cuda (cudasim)": ["passed"]},
    "matmul": {"cpu": ["passed", "failed"], "numba": ["passed", "skipped"]},
    "softmax": {"cuda (cudasim)": ["error"], "cuda-c (simulated)": ["passed"]},
}
COLUMN = {  # report column -> (backend, tier)
    "cpu": ("cpu", "cpu"),
    "numba": ("numba", "cpu"),
    "cuda (cudasim)": ("cuda", "cudasim"),
    "cuda-c (simulated)": ("cuda-c", "cudasim"),
}
REASONS = {"failed": FAILURE, "error": ERROR, "skipped": SKIP, "passed": ""}


def _write_inputs(raw: Path) -> Path:
    """Per-tier result files as tests/matrix_plugin.py writes them, and the matrix session's summary."""
    raw.mkdir()
    by_tier: dict[str, list[dict]] = {"cpu": [], "cudasim": []}
    for op, columns in RESULTS.items():
        for column, outcomes in columns.items():
            backend, tier = COLUMN[column]
            for i, outcome in enumerate(outcomes):
                by_tier[tier].append(
                    {
                        "nodeid": f"tests/generic/test_{op}.py::test_{op}[{backend}-{i}]",
                        "op": op,
                        "backend": backend,
                        "tier": tier,
                        "outcome": outcome,
                        "reason": REASONS[outcome],
                    }
                )
    packages = {"numpy": "2.1.0", "numba": "0.62.0", "numba-cuda": "0.20.0"}
    for tier, results in by_tier.items():
        data = {"tier": tier, "python": "3.11.7", "packages": packages, "results": results}
        (raw / f"{tier}.json").write_text(json.dumps(data))
    summary = [
        {"tier": "cpu", "session": "tests-cpu", "status": "failed", "seconds": 30.0},
        {"tier": "cudasim", "session": "tests-cudasim", "status": "failed", "seconds": 60.0},
    ]
    summary += [
        {"tier": t, "session": report.TIER_SESSIONS[t], "status": status, "reason": reason}
        for t, (status, reason) in NOT_RUN.items()
    ]
    (raw / "tiers.json").write_text(json.dumps(summary))
    return raw / "tiers.json"


COUNTS = {"passed": 5, "failed": 0, "error": 0, "skipped": 2}
IMAGE = {
    "tag": "torchlight-cpu:dev",
    "build_seconds": 61.2,
    "size_bytes": 1_230_000_000,
    "bases": ["python:3.11-slim-bookworm"],
    "checks": [],
    "problems": [],
    "tests": {"tests-cpu": {"exit": 0, "seconds": 300.4, "inside": COUNTS, "outside": COUNTS, "match": True}},
}
BROKEN_IMAGE = {**IMAGE, "tag": "torchlight-cuda:dev", "problems": ["libx.so <missing>"], "tests": {}}
MUTANTS = {"killed": 9, "survived": 1, "equivalent": 2, "score": 0.9}


def _write_docker_and_mutants(out: Path) -> None:
    """What the docker sessions and `nox -s mutants` leave in the report folder."""
    (out / "docker").mkdir(parents=True)
    for kind, image in (("cpu", IMAGE), ("cuda", BROKEN_IMAGE)):
        record = {"session": f"docker-{kind}", "status": "passed", "images": [image]}
        (out / "docker" / f"{kind}.json").write_text(json.dumps(record))
    session = {"summary": MUTANTS, "date": "today", "commit": "abc", "wall_seconds": 120.0, "mutants": []}
    (out / "mutants.json").write_text(json.dumps(session))


@pytest.fixture
def page(tmp_path) -> Path:
    summary = _write_inputs(tmp_path / "raw")
    out = tmp_path / "out"
    _write_docker_and_mutants(out)
    assert report.main(["--tiers", str(summary), "--out", str(out)]) == 0
    return out / "matrix.html"


class _Node:
    def __init__(self, tag: str, attrs: dict[str, str]):
        self.tag, self.attrs, self.children, self.parts = tag, attrs, [], []

    def text(self) -> str:
        return "".join(p if isinstance(p, str) else p.text() for p in self.parts)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class _Tree(HTMLParser):
    """A small DOM of the HTML Chromium dumps (it closes every non-void element)."""

    VOID = {"meta", "link", "br", "img", "input", "hr", "col", "source", "wbr"}

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {})
        self.stack = [self.root]
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        self.stack[-1].parts.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].parts.append(data)

    def by_id(self, ident: str) -> _Node:
        found = [n for n in self.root.walk() if n.attrs.get("id") == ident]
        assert len(found) == 1, f"{len(found)} elements with id {ident!r}"
        return found[0]


def _chromium(html_file: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM after the page's scripts ran, and the console messages it logged."""
    proc = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",  # a container's /dev/shm is small
            f"--user-data-dir={profile}",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
            html_file.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


# Run after the page's own script: records each cell's computed colour, then clicks the first
# failed cell as a person would, so the dumped DOM shows the details panel it filled.
PROBE = """<script>
for (const cell of document.querySelectorAll("td.cell")) {
  cell.setAttribute("data-probe-bg", getComputedStyle(cell).backgroundColor);
}
const failed = document.querySelector("td.cell.failed");
if (failed) { failed.click(); }
</script>"""


def test_page_is_self_contained_and_escapes_the_texts(page):
    html = page.read_text()
    remote = re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html)
    assert remote is None, f"the page must not load anything: {remote}"
    assert "<link" not in html and "@import" not in html
    assert "<script>alert(1)</script>" not in html, "a failure's text must be escaped"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


@needs_chromium
def test_the_console_check_sees_a_script_error(tmp_path):
    # The check below is only worth something if an error in a page does show up.
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><script>notDefined();</script></body></html>")
    _, console = _chromium(bad, tmp_path / "profile")
    assert any("notDefined" in line for line in console), console


@needs_chromium
def test_browser_shows_the_grid_failures_and_tiers_not_run(page, tmp_path):
    probe = page.with_name("probe.html")
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    dom, console = _chromium(probe, tmp_path / "profile")
    assert console == [], f"the page logged to the console: {console}"
    tree = _Tree(dom)

    # The grid: one row per op, one cell per column, each coloured by its worst outcome.
    grid = tree.by_id("grid")
    header = [th.text() for th in grid.walk() if th.tag == "th" and th.attrs.get("scope") == "col"]
    assert header == list(COLUMN)
    rows = [tr for tr in grid.walk() if tr.tag == "tr" and any(c.tag == "td" for c in tr.children)]
    assert [r.children[0].text() for r in rows] == list(RESULTS)
    cells = {}
    for row in rows:
        tds = [c for c in row.children if c.tag == "td"]
        assert len(tds) == len(COLUMN)
        for column, td in zip(COLUMN, tds):
            cells[row.children[0].text(), column] = td
    assert len(cells) == len(RESULTS) * len(COLUMN)
    colours: dict[str, set[str]] = {}
    for (op, column), td in cells.items():
        outcomes = RESULTS[op].get(column)
        want = next((o for o in ("failed", "error", "passed", "skipped") if o in (outcomes or [])), "not-run")
        assert want in td.classes(), f"{op} / {column}: classes {td.classes()}, expected {want}"
        colours.setdefault(want, set()).add(td.attrs["data-probe-bg"])
        if outcomes:
            for outcome in set(outcomes):
                assert f"{outcomes.count(outcome)} {outcome}" in td.text()
        else:
            assert td.text() == "not run"
    assert set(colours) == {"failed", "error", "passed", "skipped", "not-run"}
    for outcome, seen in colours.items():
        assert len(seen) == 1, f"{outcome} cells differ in colour: {seen}"
        assert seen != {"rgba(0, 0, 0, 0)"}, f"{outcome} cells have no colour"
    distinct = {next(iter(s)) for s in colours.values()}
    assert len(distinct) == len(colours), f"outcomes share a colour: {colours}"

    # A failed cell: its hover text and, after the click, the details panel name the test and the message.
    failed = cells["matmul", "cpu"]
    assert "1 failed" in failed.text() and "1 passed" in failed.text()
    assert FAILURE in failed.attrs["title"]
    assert "selected" in failed.classes()
    details = tree.by_id("details").text()
    assert "matmul in cpu" in details and FAILURE in details
    assert "tests/generic/test_matmul.py::test_matmul[cpu-1]" in details
    assert SKIP in cells["add", "numba"].attrs["title"]
    assert ERROR in cells["softmax", "cuda (cudasim)"].attrs["title"]
    scripts = [n for n in tree.root.walk() if n.tag == "script"]
    assert len(scripts) == 2, "only the page's script and the probe: the failure's <script> is text"

    # The tiers that did not run, each with its status and reason.
    not_run = tree.by_id("not-run")
    items = [li.text() for li in not_run.walk() if li.tag == "li"]
    assert len(items) == len(NOT_RUN)
    for item, (tier, (status, reason)) in zip(items, NOT_RUN.items()):
        assert item.startswith(tier) and status in item and reason in item
    assert "not run" in tree.by_id("compile").text(), "the compile check says why it has no counts"

    # The Docker images, the in-image tier next to the same session outside, and mutation testing.
    docker = [[td.text() for td in tr.children] for tr in tree.by_id("docker").walk() if tr.tag == "tr"]
    assert docker[1][:5] == ["nox -s docker-cpu", "torchlight-cpu:dev", "passed", "61 s", "1.23 GB"]
    assert docker[2][1:3] == ["torchlight-cuda:dev", "failed: libx.so <missing>"]
    in_image = [
        [td.text() for td in tr.children] for tr in tree.by_id("docker-tests").walk() if tr.tag == "tr"
    ]
    assert in_image[1] == [
        "torchlight-cpu:dev",
        "nox -s tests-cpu",
        "5 / 0 / 0 / 2",
        "5 / 0 / 0 / 2",
        "match",
        "0",
        "300 s",
    ]
    mutants = tree.by_id("mutants").text()
    assert "9 of 10 non-equivalent mutants killed (90.0%), 1 survived, 2 equivalent" in mutants
