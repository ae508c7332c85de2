"""benchmarks/ratio_chart.py: the ratios behind a benchmark table, and their PNG chart where
matplotlib is installed (one line saying why there is none where it is not)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ratio_chart import Ratios, write_ratio_chart  # noqa: E402
from timing_stats import Timing  # noqa: E402

HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
needs_matplotlib = pytest.mark.skipif(
    not HAVE_MATPLOTLIB, reason='matplotlib is not installed (pip install ".[plots]"): no chart to check'
)
STEADY = Timing((1.0, 1.0, 1.0))


def _ratios() -> Ratios:
    ratios = Ratios()
    ratios.add_row(
        "add 1M", {"cpu": (Timing((2.0, 2.0, 2.1)), STEADY), "torch": (Timing((0.5, 0.9, 0.5)), STEADY)}
    )
    ratios.add_row("matmul 256", {"cpu": (Timing((8.0, 8.0, 8.0)), Timing((2.0, 2.0, 2.0)))})
    return ratios


def test_rows_keep_each_contenders_ratio_of_minimums_in_row_order():
    ratios = _ratios()
    assert ratios.labels == ["add 1M", "matmul 256"]
    assert ratios.series == {"cpu": [2.0, 4.0], "torch": [0.5, None]}
    assert ratios.untrusted == {("add 1M", "torch")}, "torch's rounds there disagree by 80%"


def test_a_series_of_the_wrong_length_is_refused(tmp_path):
    with pytest.raises(ValueError, match="'cpu' has 1 ratios for 2 labels"):
        write_ratio_chart(tmp_path / "c.png", "t", ["a", "b"], {"cpu": [1.0]})


def test_without_matplotlib_no_chart_is_written_and_one_line_says_why(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # an import of it fails
    note = _ratios().write(tmp_path / "bench.png", "Time ratio to raw numpy")
    assert note.startswith("no chart written: matplotlib is not installed") and "\n" not in note
    assert ".[plots]" in note
    assert not (tmp_path / "bench.png").exists()


def _colours(png: Path) -> set[tuple[int, int, int]]:
    from matplotlib.image import imread

    pixels = (imread(png)[..., :3] * 255).round().astype(int)
    return {tuple(p) for p in pixels.reshape(-1, 3)}


@needs_matplotlib
def test_chart_is_a_png_with_one_bar_colour_per_contender(tmp_path):
    from matplotlib import colors

    both, one = tmp_path / "both.png", tmp_path / "one.png"
    assert _ratios().write(both, "Time ratio to raw numpy") == f"chart written to {both}"
    assert both.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    alone = Ratios()
    alone.add_row("add 1M", {"cpu": (Timing((2.0, 2.0, 2.0)), STEADY)})
    alone.write(one, "Time ratio to raw numpy")
    # matplotlib's first two cycle colours: cpu's bars, then torch's.
    first, second = (tuple(round(255 * c) for c in colors.to_rgb(f"C{i}")) for i in (0, 1))
    assert {first, second} <= _colours(both)
    assert first in _colours(one) and second not in _colours(one), "a series that is absent draws no bars"
