"""The deploy timeline as inline SVG: one row per resource grouped by module, under a time
axis with round ticks and grid lines, the critical path in a darker colour and marked ★ in
its label (so a grey print reads the same), and a legend. Labels are cut to their column
(keeping the resource's own name, at the end), so none runs into a bar."""

from __future__ import annotations

from html import escape

from npa_sop_tui.history.timeline import Timeline, time_ticks
from npa_sop_tui.history.timeline import duration_text as _seconds

ROW, LABEL_W, CHART_W, PAD = 18, 360, 560, 8
CHAR_W = 6.7  # the width of one 11px monospace character
LABEL_CHARS = int((LABEL_W - PAD - 12 - 10) / CHAR_W)
TEXT = 'font-family="monospace" font-size="11"'
CRITICAL, OTHER, FAILED = "#b9770e", "#5dade2", "#c0392b"
HEAD = 3 * ROW  # legend, tick labels, axis line


def _label(text: str) -> str:
    return text if len(text) <= LABEL_CHARS else "…" + text[-(LABEL_CHARS - 1) :]


def _legend(timeline: Timeline, now: float) -> str:
    path = timeline.critical_path
    items = [
        (CRITICAL, f"★ critical path: {len(path)} resources over "
         f"{_seconds(timeline.path_span(now))} ({timeline.path_source})"),
        (OTHER, "other resources"),
        (FAILED, "failed"),
    ]  # fmt: skip
    out, x = [], PAD
    for colour, words in items:
        out.append(
            f'<rect x="{x}" y="{PAD + 2}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="{PAD + 11}" {TEXT}>{escape(words)}</text>'
        )
        x += 14 + int(len(words) * CHAR_W) + 18
    return "".join(out)


def _axis(total: float, height: int) -> str:
    scale = CHART_W / total
    top = PAD + 2 * ROW
    out = [f'<line x1="{LABEL_W}" y1="{top}" x2="{LABEL_W + CHART_W}" y2="{top}" stroke="#888"/>']
    for tick in time_ticks(total, CHART_W // 60):
        x = LABEL_W + tick * scale
        words = "0" if tick == 0 else _seconds(tick)
        out.append(
            f'<line class="tick" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height}" '
            f'stroke="#ddd"/>'
            f'<text x="{x:.1f}" y="{top - 6}" {TEXT} text-anchor="middle">{words}</text>'
        )
    return "".join(out)


def timeline_svg(timeline: Timeline, *, now: float) -> str:
    """An <svg> element (no external references) of `timeline`."""
    span = timeline.span
    if span is None:
        return '<p class="muted">No resource was created or changed in this operation.</p>'
    t0, t1 = span
    total = max(t1 - t0, 1e-6)
    scale = CHART_W / total
    rows: list[str] = []
    y = PAD + HEAD
    for module, bars in timeline.modules():
        rows.append(
            f'<text x="{PAD}" y="{y + 13}" {TEXT} font-weight="bold">{escape(_label(module))}'
            "</text>"
        )
        y += ROW
        for bar in bars:
            end = bar.end if bar.end is not None else now
            x = LABEL_W + (bar.start - t0) * scale
            w = max(2.0, (end - bar.start) * scale)
            fill = FAILED if bar.failed else CRITICAL if bar.critical else OTHER
            mark = "★ " if bar.critical else ""
            kind = "bar critical" if bar.critical else "bar"
            state = " (failed)" if bar.failed else " (running)" if bar.end is None else ""
            title = f"{bar.addr}: {_seconds(bar.duration(now))}{state}"
            rows.append(
                f'<g class="{kind}" data-addr="{escape(bar.addr)}">'
                f"<title>{escape(title)}</title>"
                f'<text class="label" x="{PAD + 12}" y="{y + 13}" {TEXT}>'
                f"{escape(_label(mark + bar.label))}</text>"
                f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{ROW - 6}" fill="{fill}"/>'
                f'<text x="{min(x + w + 4, LABEL_W + CHART_W + 4):.1f}" y="{y + 13}" {TEXT}>'
                f"{_seconds(bar.duration(now))}</text></g>"
            )
            y += ROW
    width = LABEL_W + CHART_W + 70
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{y + PAD}" '
        f'viewBox="0 0 {width} {y + PAD}" aria-label="deploy timeline">'
        f"{_legend(timeline, now)}{_axis(total, y)}{''.join(rows)}</svg>"
    )
