"""The deploy timeline: one row per Terraform resource, a bar from its start to its end,
grouped by module, under a time axis with round ticks; the critical path in bold `█`, other
bars `▒`, a failed bar ends in `✗`, a running one in `▶` (glyphs, not only colours: NO_COLOR
shows the same picture).

The widget draws only the rows on screen (Textual's line API): its height is the number of
rows, known without drawing any, and a repaint costs the visible rows, not the whole
operation, however many resources a deploy has or how often its events arrive.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from rich.segment import Segment
from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget

from npa_sop_tui.history.timeline import Bar, Timeline, time_ticks
from npa_sop_tui.history.timeline import duration_text as seconds_text
from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded

CRITICAL, OTHER, FAILED_END, RUNNING_END = "█", "▒", "✗", "▶"
DURATION_WIDTH = 7
TICK_SPACING = 9  # cells between tick labels at least ("1m30s" and a gap)


@dataclass(frozen=True)
class Geometry:
    """Where the chart's parts go at one width, for one time span."""

    t0: float
    total: float
    label_w: int
    area: int

    @property
    def scale(self) -> float:
        return self.area / self.total


def geometry(timeline: Timeline, width: int, now: float) -> Geometry:
    span = timeline.span
    assert span is not None
    t0, t1 = span
    if any(b.end is None for b in timeline.bars) and timeline.finished is None:
        t1 = max(t1, now)
    label_w = max(12, min(40, width // 3))
    area = max(10, width - label_w - DURATION_WIDTH - 2)
    return Geometry(t0, max(t1 - t0, 1e-6), label_w, area)


def head_line(timeline: Timeline, width: int, now: float) -> Text:
    g = geometry(timeline, width, now)
    critical = timeline.critical_path
    head = Text.assemble(
        (f"{len(timeline.bars)} resources in {seconds_text(g.total)}", "bold"),
        "  ",
        (CRITICAL, "bold yellow"),
        f" critical path: {len(critical)} resources over {seconds_text(timeline.path_span(now))}"
        f" ({timeline.path_source})  ",
        (OTHER, "cyan"),
        " other",
    )
    if timeline.left_out:
        head.append(f"  ({timeline.left_out} more not drawn)", style="dim")
    if head.cell_len > width:  # terse, so the path's figures stay whole
        source = "graph" if timeline.dependencies is not None else "inferred"
        head = Text.assemble(
            (f"{len(timeline.bars)} res {seconds_text(g.total)}", "bold"),
            " ",
            (CRITICAL, "bold yellow"),
            f" path {len(critical)} over {seconds_text(timeline.path_span(now))} ({source}) ",
            (OTHER, "cyan"),
            " other",
        )
    head.truncate(width)
    return head


def axis_line(g: Geometry) -> Text:
    """Round ticks under the bars (0, 30s, 1m, …): a `┬` at each, its time beside it."""
    cells = ["─"] * g.area
    labels = [" "] * (g.area + 8)
    ticks = time_ticks(g.total, max(2, g.area // TICK_SPACING))
    free = 0  # the first cell a label may use
    for tick in ticks:
        at = min(g.area - 1, round(tick * g.scale))
        cells[at] = "┬"
        text = "0" if tick == 0 else seconds_text(tick)
        if at >= free and at + len(text) <= len(labels):
            labels[at : at + len(text)] = list(text)
            free = at + len(text) + 1
    pad = " " * (g.label_w + 1)
    return Text(pad + "".join(cells) + "\n" + pad + "".join(labels).rstrip(), style="dim")


def bar_line(bar: Bar, g: Geometry, now: float) -> Text:
    label_w, area = g.label_w, g.area
    label = safe_text(bar.label)  # a Terraform address: shown, never obeyed
    label = label if len(label) <= label_w else "…" + label[-(label_w - 1) :]
    first = min(area - 1, math.floor((bar.start - g.t0) * g.scale))
    end = bar.end if bar.end is not None else now
    last = min(area, max(first + 1, math.ceil((end - g.t0) * g.scale)))
    glyph, style = (CRITICAL, "bold yellow") if bar.critical else (OTHER, "cyan")
    body = glyph * (last - first)
    if bar.failed:
        body, style = body[:-1] + FAILED_END, "bold red"
    elif bar.end is None:
        body = body[:-1] + RUNNING_END
    line = Text(label.ljust(label_w) + " " + " " * first)
    line.append(body, style=style)
    line.append(" " * (area - last) + " " + seconds_text(bar.duration(now)).rjust(DURATION_WIDTH))
    return line


Row = tuple[str, object]  # ("head", None) | ("axis", 0|1) | ("module", name) | ("bar", Bar)


def chart_rows(timeline: Timeline | None) -> list[Row]:
    """What each line of the chart shows, top to bottom (no drawing: cheap to count)."""
    if timeline is None or not timeline.bars:
        return [("empty", None)]
    rows: list[Row] = [("head", None), ("axis", 0), ("axis", 1)]
    for module, bars in timeline.modules():
        rows.append(("module", module))
        rows.extend(("bar", bar) for bar in bars)
    return rows


def row_text(row: Row, timeline: Timeline | None, width: int, now: float) -> Text:
    kind, value = row
    if kind == "empty" or timeline is None:
        return Text("No resource has started yet.", style="dim")
    if kind == "head":
        return head_line(timeline, width, now)
    g = geometry(timeline, width, now)
    if kind == "axis":
        return axis_line(g).split()[int(value)]  # type: ignore[call-overload]
    if kind == "module":
        title = Text(safe_text(str(value)), style="bold underline")
        title.truncate(width)
        return title
    assert isinstance(value, Bar)
    return bar_line(value, g, now)


def timeline_lines(timeline: Timeline | None, width: int, *, now: float) -> list[Text]:
    """The whole chart as lines of `width` cells (pure: tests and the report's text)."""
    return [row_text(row, timeline, width, now) for row in chart_rows(timeline)]


class TimelineChart(Guarded, Widget):
    """The timeline of one operation; set `timeline` (live or from a log) to redraw."""

    DEFAULT_CSS = """
    TimelineChart { height: auto; width: 1fr; }
    """

    timeline: reactive[Timeline | None] = reactive(None, always_update=True)
    """The operation drawn; None before its first resource starts. A layout follows only
    when the number of rows changed (a repaint costs the visible rows; a layout, the
    whole screen)."""

    clock: reactive[float | None] = reactive(None)
    """Fixed 'now' for running bars (snapshots, tests); None: the wall clock."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[Row] = chart_rows(None)

    def watch_timeline(self, timeline: Timeline | None) -> None:
        rows = chart_rows(timeline)
        grown = len(rows) != len(self._rows)
        self._rows = rows
        self.refresh(layout=grown)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._rows)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        style = self.rich_style
        if not 0 <= y < len(self._rows) or width <= 0:
            return Strip.blank(width, style)
        now = self.clock if self.clock is not None else time.time()
        text = row_text(self._rows[y], self.timeline, width, now)
        text.truncate(width)
        segments = [s for s in text.render(self.app.console) if s.text != "\n"]
        strip = Strip(Segment.apply_style(segments, style), text.cell_len)
        return strip.extend_cell_length(width, style)
