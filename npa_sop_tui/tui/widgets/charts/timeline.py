"""The deploy timeline: one row per Terraform resource, a bar from its start to its end,
grouped by module; the critical path in bold `█`, other bars `▒`, a failed bar ends in
`✗`, a running one in `▶` (glyphs, not only colours: NO_COLOR shows the same picture)."""

from __future__ import annotations

import math
import time

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from npa_sop_tui.history.timeline import Bar, Timeline
from npa_sop_tui.history.timeline import duration_text as seconds_text
from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded

CRITICAL, OTHER, FAILED_END, RUNNING_END = "█", "▒", "✗", "▶"
DURATION_WIDTH = 7


def timeline_lines(timeline: Timeline | None, width: int, *, now: float) -> list[Text]:
    """The chart as lines of `width` cells (pure: tests and the widget call it)."""
    if timeline is None or not timeline.bars:
        return [Text("No resource has started yet.", style="dim")]
    span = timeline.span
    assert span is not None
    t0, t1 = span
    if any(b.end is None for b in timeline.bars) and timeline.finished is None:
        t1 = max(t1, now)
    total = max(t1 - t0, 1e-6)
    label_w = max(12, min(40, width // 3))
    area = max(10, width - label_w - DURATION_WIDTH - 2)
    scale = area / total
    critical = timeline.critical_path
    on_path = seconds_text(sum(b.duration(now) for b in critical))
    head = Text.assemble(
        (f"{len(timeline.bars)} resources in {seconds_text(total)}", "bold"),
        "  ",
        (CRITICAL, "bold yellow"),
        f" critical path ({len(critical)} resources, {on_path})  ",
        (OTHER, "cyan"),
        " other",
    )
    head.truncate(width)
    lines = [head, _axis(label_w, area, total)]
    for module, bars in timeline.modules():
        title = Text(safe_text(module), style="bold underline")
        title.truncate(width)
        lines.append(title)
        for bar in bars:
            lines.append(_bar_line(bar, t0, scale, area, label_w, now))
    return lines


def _axis(label_w: int, area: int, total: float) -> Text:
    """Ticks under the bars: 0 at the left, the whole duration at the right, one between."""
    cells = [" "] * area
    marks = [(0, "0"), (area // 2, seconds_text(total / 2)), (area, seconds_text(total))]
    for at, text in marks:
        at = min(max(0, at - (len(text) if at == area else 0)), area - len(text))
        for i, ch in enumerate(text):
            cells[at + i] = ch
    return Text(" " * (label_w + 1) + "".join(cells), style="dim")


def _bar_line(bar: Bar, t0: float, scale: float, area: int, label_w: int, now: float) -> Text:
    label = safe_text(bar.label)  # a Terraform address: shown, never obeyed
    label = label if len(label) <= label_w else "…" + label[-(label_w - 1) :]
    first = min(area - 1, math.floor((bar.start - t0) * scale))
    end = bar.end if bar.end is not None else now
    last = min(area, max(first + 1, math.ceil((end - t0) * scale)))
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


class TimelineChart(Guarded, Widget):
    """The timeline of one operation; set `timeline` (live or from a log) to redraw."""

    DEFAULT_CSS = """
    TimelineChart { height: auto; width: 1fr; }
    """

    timeline: reactive[Timeline | None] = reactive(None, always_update=True, layout=True)
    """The operation drawn; None before its first resource starts."""

    clock: reactive[float | None] = reactive(None)
    """Fixed 'now' for running bars (snapshots, tests); None: the wall clock."""

    def render(self) -> Text:
        now = self.clock if self.clock is not None else time.time()
        return Text("\n").join(timeline_lines(self.timeline, self.size.width or 80, now=now))
