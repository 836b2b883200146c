"""Node states over time, drawn with plotext (textual-plotext's Plot): the cluster's Slurm
nodes idle `░`, allocated `█`, drained `▒` and down `×`, stacked per stretch of time, on a
y-scale of nodes and a time axis (HH:MM) whose right edge is now, under a legend and each
pool's latest counts (`cpu ░1 █0 ▒1 ×0`). Each column is the worst sample of its stretch
(a short outage shows however long the window), and a stretch without a sample stays
empty (the app was closed, or the cluster unreachable). Glyphs differ per state, so the
picture reads the same without colour.

Where the rows are few (a 24-row dashboard), the chart is one line per pool instead: its
counts and a sparkline, `▁`…`█` for the share of nodes allocated, `▒` where a node was
drained and `×` where one was down.

The history comes from the cluster's file in the home (history/node_states.py) and grows
with each snapshot the view receives.
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from npa_sop_tui.history.node_states import (
    BUCKETS,
    HistoryStore,
    NodeBucket,
    NodeStateHistory,
    Sample,
    time_buckets,
)
from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded

GLYPH: dict[NodeBucket, tuple[str, str]] = {
    "idle": ("░", "green"),
    "allocated": ("█", "blue"),
    "drained": ("▒", "yellow"),
    "down": ("×", "bold red"),
}
PLOT_COLOURS = {"idle": "green", "allocated": "blue", "drained": "orange", "down": "red"}
SPARKS = "▁▂▃▄▅▆▇█"
WINDOW_SECONDS = 24 * 3600.0
"""The chart shows at most the last day of the (7-day) history."""
MIN_PLOT_ROWS = 6
"""Below this many rows for the plot, the chart is the sparkline rows instead."""


def legend_line(width: int) -> Text:
    line = Text()
    for bucket in BUCKETS:
        glyph, style = GLYPH[bucket]
        if line:
            line.append("  ")
        # bold like the state cells of the tables, so NO_COLOR still sets the key apart
        line.append_text(Text.assemble((glyph, style), " ", (bucket, "bold")))
    line.truncate(width)
    return line


def pool_counts(sample: Sample, pool: str) -> Text:
    """`cpu ░1 █0 ▒1 ×0`: a pool's latest counts, every state named by its glyph."""
    counts = sample.pool(pool)
    line = Text(safe_text(pool), style="bold")  # from Slurm's node names
    for bucket in BUCKETS:
        glyph, style = GLYPH[bucket]
        line.append(" ")
        line.append(glyph, style=style)
        line.append(str(counts[bucket]))
    return line


def counts_lines(history: NodeStateHistory, width: int) -> list[Text]:
    """Every pool's counts, side by side while they fit, never cut within one."""
    newest = history.samples[-1]
    lines = [Text()]
    for pool in history.pools():
        item = pool_counts(newest, pool)
        if lines[-1] and lines[-1].cell_len + 3 + item.cell_len > width:
            lines.append(Text())
        if lines[-1]:
            lines[-1].append("   ")
        lines[-1].append_text(item)
    for line in lines:
        line.truncate(width)
    return lines


def window(history: NodeStateHistory, now: float) -> tuple[float, float]:
    """The stretch of time drawn: the last day at most, ending now."""
    oldest = history.samples[0].at
    start = max(oldest, now - WINDOW_SECONDS)
    return (start, now) if now - start >= 60 else (now - 60, now)


def _spark(sample: Sample | None, pool: str | None) -> tuple[str, str]:
    if sample is None:
        return " ", ""
    counts = sample.pool(pool) if pool else {b: sample.total(b) for b in BUCKETS}
    if counts["down"]:
        return GLYPH["down"]
    if counts["drained"]:
        return GLYPH["drained"]
    total = sum(counts.values())
    if not total:
        return " ", ""
    level = round(counts["allocated"] / total * (len(SPARKS) - 1))
    return SPARKS[level], "blue" if counts["allocated"] else "green"


def spark_lines(history: NodeStateHistory, width: int, now: float, rows: int) -> list[Text]:
    """One line per pool (as many as `rows` allow; the rest summed in the last): counts,
    then the sparkline to the right edge, then how long it spans."""
    start, end = window(history, now)
    span = _span_text(end - start)
    pools: list[str | None] = list(history.pools())
    if len(pools) > rows:
        pools = [*pools[: rows - 1], None]  # None: every pool together
    newest = history.samples[-1]
    lines = []
    for pool in pools:
        head = pool_counts(newest, pool) if pool else _all_counts(newest)
        room = width - head.cell_len - len(span) - 2
        line = head.copy()
        if room >= 4:
            line.append(" ")
            for sample in time_buckets(history.samples, start, end, room):
                glyph, style = _spark(sample, pool)
                line.append(glyph, style=style)
            line.append(" " + span, style="dim")
        line.truncate(width)
        lines.append(line)
    return lines


def _all_counts(sample: Sample) -> Text:
    line = Text("all", style="bold")
    for bucket in BUCKETS:
        glyph, style = GLYPH[bucket]
        line.append(f" {glyph}", style=style)
        line.append(str(sample.total(bucket)))
    return line


def _span_text(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes:.0f}m" if minutes < 120 else f"{minutes / 60:.0f}h"


def _time_label(at: float, span: float) -> str:
    local = time.localtime(at)
    form = "%a %H:%M" if span > 86400 else "%H:%M" if span > 600 else "%H:%M:%S"
    return time.strftime(form, local)


def plot_text(history: NodeStateHistory, width: int, height: int, now: float) -> Text:
    """The stacked bars as plotext draws them at `width` × `height` cells."""
    from textual_plotext.plot import Plot

    start, end = window(history, now)
    nodes = max(sum(s.pool(p)[b] for p in s.counts for b in BUCKETS) for s in history.samples)
    y_label_w = len(str(nodes)) + 2
    columns = max(4, width - y_label_w - 2)
    buckets = time_buckets(history.samples, start, end, columns)
    xs = [i for i, s in enumerate(buckets) if s is not None]
    series = [[buckets[i].total(b) for i in xs] for b in BUCKETS]  # type: ignore[union-attr]
    plt = Plot()
    plt.theme("clear")
    # plotext sizes a plot to this process's terminal unless told not to (a browser
    # session's app has none; a snapshot's is 80 wide): the widget's cells decide
    plt._limit_size(False, False)
    plt.plotsize(width, height)
    plt._set_size(width, height)  # as textual-plotext's own widget does (its issue 5)
    if xs:
        plt.stacked_bar(
            xs,
            series,
            marker=[GLYPH[b][0] for b in BUCKETS],
            color=[PLOT_COLOURS[b] for b in BUCKETS],
            width=1,
        )
    plt.xlim(-0.5, columns - 0.5)
    plt.ylim(0, max(1, nodes))
    step = max(1, -(-nodes // max(1, (height - 3) // 2)))
    plt.yticks(list(range(0, nodes + 1, step)))
    ticks = max(2, min(6, columns // 12))
    positions = [round(i * (columns - 1) / (ticks - 1)) for i in range(ticks)]
    span = end - start
    labels = [_time_label(start + (p + 0.5) * span / columns, span) for p in positions]
    plt.xticks(positions, labels)
    return Text.from_ansi(plt.build(), no_wrap=True)


def node_state_lines(
    history: NodeStateHistory, width: int, height: int, *, now: float | None = None
) -> list[Text]:
    """The chart as lines of at most `width` cells and `height` rows (pure: tests and the
    widget call it): a plot when there is room for one, else the sparkline rows."""
    if not history.samples:
        return [Text("Node states over time: waiting for Slurm data…", style="dim")]
    now = history.samples[-1].at if now is None else max(now, history.samples[-1].at)
    width = max(20, width)
    head = [legend_line(width), *counts_lines(history, width)]
    if height - len(head) < MIN_PLOT_ROWS:
        return spark_lines(history, width, now, max(1, height))
    plot = plot_text(history, width, height - len(head), now)
    return [*head, *plot.split(allow_blank=True)][:height]


class NodeStatesChart(Guarded, Widget):
    """Idle/allocated/drained/down of one cluster's Slurm nodes over time."""

    DEFAULT_CSS = """
    NodeStatesChart { height: 1fr; width: 1fr; }
    """

    version: reactive[int] = reactive(0)
    """Bumped on every new sample, to redraw."""

    clock: float | None = None
    """A fixed 'now' (snapshot tests); None: the wall clock."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = NodeStateHistory()
        self._drawn: tuple[tuple[int, int, int, int], Text] | None = None

    def follow(self, cluster: str, *, writable: bool) -> None:
        """Keep this cluster's history in the home and show what was kept before (read in
        a worker; a read-only session writes nothing)."""
        self.history.store = HistoryStore(cluster, writable=writable)
        self.run_worker(self._load, thread=True, group="node-states", exit_on_error=False)

    def _load(self) -> None:
        store = self.history.store
        if store is not None:
            stored = store.load()
            self.app.call_from_thread(self._merged, stored)

    def _merged(self, stored: list[Sample]) -> None:
        self.history.merge(stored)
        self.version += 1

    def add(self, status: Any) -> None:
        from npa_sop_tui.status.model import ClusterStatus

        if isinstance(status, ClusterStatus) and self.history.add(status):
            self.version += 1

    def render(self) -> Text:
        width, height = self.size.width or 40, self.size.height or 3
        minute = int((self.clock or time.time()) // 60)  # the right edge moves each minute
        key = (self.version, width, height, minute)
        if self._drawn is None or self._drawn[0] != key:
            now = self.clock if self.clock is not None else time.time()
            lines = node_state_lines(self.history, width, height, now=now)
            self._drawn = key, Text("\n").join(lines)
        return self._drawn[1]
