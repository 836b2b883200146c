"""Node states over time: per pool, a stacked column per status snapshot (oldest left),
idle `░` at the bottom, then allocated `█`, drained `▒`, down `×` on top, scaled to the
pool's size; a legend with the latest counts. Glyphs differ per state, so the picture
reads the same without colour."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from npa_sop_tui.history.node_states import BUCKETS, NodeBucket, NodeStateHistory, Sample
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


def node_state_lines(history: NodeStateHistory, width: int, *, rows: int = ROWS) -> list[Text]:
    """The chart as lines (pure: tests and the widget call it)."""
    if not history.samples:
        return [Text("Node states over time: waiting for Slurm data…", style="dim")]
    samples: list[Sample] = list(history.samples)[-max(1, width) :]
    lines: list[Text] = []
    for pool in history.pools():
        latest = samples[-1].pool(pool)
        # the legend wraps rather than cuts: a cut "× dow" hides the one count that matters
        legend = Text(pool, style="bold")
        for bucket in BUCKETS:
            glyph, style = GLYPH[bucket]
            item = Text.assemble((glyph, style), f" {bucket} {latest[bucket]}")
            if legend.cell_len + 2 + item.cell_len > width and legend.plain.strip():
                lines.append(legend)
                legend = Text(" ")
            legend.append_text(Text("  ").append_text(item) if legend.plain.strip() else item)
        lines.append(legend)
        columns = [column(s.pool(pool), rows) for s in samples]
        for row in range(rows):
            line = Text()
            for cells in columns:
                glyph, style = cells[row]
                line.append(glyph, style=style)
            lines.append(line)
    first, last = samples[0].at, samples[-1].at
    minutes = (last - first) / 60
    lines.append(
        Text(f"{len(samples)} snapshots over {minutes:.0f} min, newest right", style="dim")
    )
    return lines


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
