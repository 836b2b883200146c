"""Node states over time: per pool, a stacked column per status snapshot (oldest left),
idle `░` at the bottom, then allocated `█`, drained `▒`, down `×` on top, scaled to the
pool's size, under the pool's latest counts. A session longer than the width is put in
time buckets (each column the worst snapshot of its run), so the chart reads at 80 columns
as at 200. Glyphs differ per state, so the picture reads the same without colour."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from npa_sop_tui.history.node_states import BUCKETS, NodeBucket, NodeStateHistory, Sample
from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded

GLYPH: dict[NodeBucket, tuple[str, str]] = {
    "idle": ("░", "green"),
    "allocated": ("█", "blue"),
    "drained": ("▒", "yellow"),
    "down": ("×", "bold red"),
}
ROWS = 3
"""Rows of one pool's chart: enough to see a change, few enough for 24-row terminals."""


def column(counts: dict[NodeBucket, int], rows: int) -> list[tuple[str, str]]:
    """One sample's stacked column, top row first: each cell shows the state that holds
    its middle (so a single down node among many still shows once the pool is small)."""
    total = sum(counts.values())
    if total == 0:
        return [(" ", "")] * rows
    cells: list[tuple[str, str]] = []
    for row in range(rows):
        middle = (rows - row - 0.5) / rows * total  # height of this cell's middle, in nodes
        reached = 0
        for bucket in BUCKETS:
            reached += counts[bucket]
            if middle < reached:
                cells.append(GLYPH[bucket])
                break
        else:
            cells.append(GLYPH[BUCKETS[-1]])
    return cells


def bucketed(samples: list[Sample], columns: int) -> tuple[list[Sample], int]:
    """At most `columns` samples standing for the whole session, oldest first, and how many
    snapshots one column stands for. A column shows the worst snapshot of its run (most
    down, then most drained), so a short outage stays visible however narrow the chart."""
    columns = max(1, columns)
    per = max(1, -(-len(samples) // columns))  # ceiling division
    if per == 1:
        return samples, 1
    # runs end at the newest snapshot: the right edge is always "now"
    runs = [samples[max(0, end - per) : end] for end in range(len(samples), 0, -per)][::-1]
    return [max(run, key=_badness) for run in runs], per


def _badness(sample: Sample) -> tuple[int, int, float]:
    down = sum(c["down"] for c in sample.counts.values())
    drained = sum(c["drained"] for c in sample.counts.values())
    return down, drained, sample.at


def legend_lines(width: int) -> list[Text]:
    """The glyph key, once above the pools; it wraps rather than cuts (a cut "× dow" would
    hide the key of the state that matters most)."""
    lines = [Text()]
    for bucket in BUCKETS:
        glyph, style = GLYPH[bucket]
        # bold like the state cells of the tables, so NO_COLOR still sets the key apart
        item = Text.assemble((glyph, style), " ", (bucket, "bold"))
        line = lines[-1]
        if line and line.cell_len + 2 + item.cell_len > width:
            line = Text()
            lines.append(line)
        if line:
            line.append("  ")
        line.append_text(item)
    for line in lines:
        line.truncate(width)
    return lines


def node_state_lines(history: NodeStateHistory, width: int, *, rows: int = ROWS) -> list[Text]:
    """The chart as lines of at most `width` cells (pure: tests and the widget call it):
    the glyph key, then per pool its latest counts and its stacked columns."""
    if not history.samples:
        return [Text("Node states over time: waiting for Slurm data…", style="dim")]
    width = max(8, width)
    all_samples: list[Sample] = list(history.samples)
    samples, per = bucketed(all_samples, width)
    lines: list[Text] = legend_lines(width)
    for pool in history.pools():
        latest = all_samples[-1].pool(pool)
        counts = Text(safe_text(pool), style="bold")  # from Slurm's node names
        for bucket in BUCKETS:
            glyph, style = GLYPH[bucket]
            counts.append(" ")
            counts.append(glyph, style=style)
            counts.append(str(latest[bucket]))
        counts.truncate(width)
        lines.append(counts)
        columns = [column(s.pool(pool), rows) for s in samples]
        for row in range(rows):
            line = Text()
            for cells in columns:
                glyph, style = cells[row]
                line.append(glyph, style=style)
            lines.append(line)
    minutes = (all_samples[-1].at - all_samples[0].at) / 60
    count = len(all_samples)
    parts = [f"{count} snapshot{'' if count == 1 else 's'}", f"{minutes:.0f} min", "newest right"]
    if per > 1:
        parts.append(f"{per} per column (worst)")
    lines.extend(_wrapped(parts, width))
    return lines


def _wrapped(parts: list[str], width: int) -> list[Text]:
    """`parts` joined by commas, broken between parts to fit `width` (a narrow column)."""
    out: list[str] = []
    for part in parts:
        if out and len(out[-1]) + 2 + len(part) <= width:
            out[-1] += ", " + part
        else:
            out.append(part)
    return [Text(line[:width], style="dim") for line in out]


class NodeStatesChart(Guarded, Widget):
    """Idle/allocated/drained/down per pool over this session's snapshots."""

    DEFAULT_CSS = """
    NodeStatesChart { height: auto; width: 1fr; }
    """

    version: reactive[int] = reactive(0, layout=True)
    """Bumped on every new sample, to redraw."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history = NodeStateHistory()

    def add(self, status: object) -> None:
        from npa_sop_tui.status.model import ClusterStatus

        if isinstance(status, ClusterStatus) and self.history.add(status):
            self.version += 1

    def render(self) -> Text:
        return Text("\n").join(node_state_lines(self.history, self.size.width or 40))
