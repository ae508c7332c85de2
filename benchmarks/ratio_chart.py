"""A PNG bar chart of benchmark ratios, written beside a script's text table (matplotlib optional).

matplotlib comes with the ``plots`` extra (``pip install ".[plots]"``); without it
``write_ratio_chart`` draws nothing and says so in one line, and the text table stands alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from timing_stats import Timing

NO_MATPLOTLIB = 'matplotlib is not installed (pip install ".[plots]" from the repository root)'


def _minor_label(value: float, _position: int) -> str:
    # Between the powers of ten only 2 and 5 are labelled, so that a wide axis stays readable.
    if value <= 0:
        return ""
    leading = round(value / 10 ** math.floor(math.log10(value)))
    return f"{value:g}" if leading in (2, 5) else ""


def write_ratio_chart(
    path: Path,
    title: str,
    labels: list[str],
    series: dict[str, list[float | None]],
    untrusted: set[tuple[str, str]] | None = None,
) -> str:
    """Draw ``series`` (name -> one ratio per label, None: not measured) as grouped bars into ``path``.

    Bars in ``untrusted`` ((label, name) pairs whose rounds disagreed) are hatched. Returns one
    line saying where the chart went, or why none was written. ValueError names a series whose
    length differs from ``labels``.
    """
    for name, values in series.items():
        if len(values) != len(labels):
            raise ValueError(f"series {name!r} has {len(values)} ratios for {len(labels)} labels")
    try:
        from matplotlib.figure import Figure  # no pyplot: no display and no global state
        from matplotlib.ticker import FuncFormatter
    except ModuleNotFoundError:
        return f"no chart written: {NO_MATPLOTLIB}"
    if not labels or not series:
        return "no chart written: no ratios were measured"
    untrusted = untrusted or set()
    figure = Figure(figsize=(8, 1.5 + 0.3 * len(labels) * len(series) ** 0.5), layout="constrained")
    axes = figure.subplots()
    height = 0.8 / len(series)
    hatched = []
    for i, (name, values) in enumerate(series.items()):
        rows = [(k, v) for k, v in enumerate(values) if v is not None]
        # Bars grow from 1, the reference: to the right when slower, to the left when faster.
        bars = axes.barh(
            [k + (i - (len(series) - 1) / 2) * height for k, _ in rows],
            [v - 1.0 for _, v in rows],
            left=1.0,
            height=height,
            label=name,
        )
        hatched += [bar for bar, (k, _) in zip(bars, rows) if (labels[k], name) in untrusted]
    axes.legend(fontsize=8)  # before the hatching, so the legend's swatches stay plain
    for bar in hatched:
        bar.set_hatch("//")
    axes.axvline(1.0, color="black", linewidth=0.8)
    axes.set_xscale("log")
    axes.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axes.xaxis.set_minor_formatter(FuncFormatter(_minor_label))
    axes.set_yticks(range(len(labels)), labels)
    axes.invert_yaxis()  # the first label on top, as in the table
    axes.set_xlabel("time ratio (log scale; < 1 is faster than the reference)")
    note = " (hatched: rounds disagreed, not to be trusted)" if hatched else ""
    axes.set_title(title + note, fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    return f"chart written to {path}"


@dataclass
class Ratios:
    """The numbers behind a ratio table, row by row, for its chart."""

    labels: list[str] = field(default_factory=list)
    series: dict[str, list[float | None]] = field(default_factory=dict)
    untrusted: set[tuple[str, str]] = field(default_factory=set)

    def add_row(self, label: str, timings: dict[str, tuple[Timing, Timing]]) -> None:
        """One row: contender name -> (its timing, the reference's); a ratio of minimums each."""
        for values in self.series.values():
            values.append(None)
        for name, (timing, reference) in timings.items():
            values = self.series.setdefault(name, [None] * (len(self.labels) + 1))
            values[-1] = timing.min / reference.min
            if timing.wide or reference.wide:
                self.untrusted.add((label, name))
        self.labels.append(label)

    def write(self, path: Path, title: str) -> str:
        """The chart of these rows in ``path``; the one-line note of ``write_ratio_chart``."""
        return write_ratio_chart(path, title, self.labels, self.series, self.untrusted)
