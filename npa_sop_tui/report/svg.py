"""The deploy timeline as inline SVG: one row per resource grouped by module, the critical
path in a darker colour and marked ★ in its label (so a grey print reads the same)."""

from __future__ import annotations

from html import escape

from npa_sop_tui.history.timeline import Timeline
from npa_sop_tui.history.timeline import duration_text as _seconds

ROW, LABEL_W, CHART_W, PAD = 18, 360, 560, 8
TEXT = 'font-family="monospace" font-size="11"'


def timeline_svg(timeline: Timeline, *, now: float) -> str:
    """An <svg> element (no external references) of `timeline`."""
    span = timeline.span
    if span is None:
        return '<p class="muted">No resource was created or changed in this operation.</p>'
    t0, t1 = span
    total = max(t1 - t0, 1e-6)
    scale = CHART_W / total
    rows: list[str] = []
    y = PAD + ROW  # below the axis
    for module, bars in timeline.modules():
        rows.append(
            f'<text x="{PAD}" y="{y + 13}" {TEXT} font-weight="bold">{escape(module)}</text>'
        )
        y += ROW
        for bar in bars:
            end = bar.end if bar.end is not None else now
            x = LABEL_W + (bar.start - t0) * scale
            w = max(2.0, (end - bar.start) * scale)
            fill = "#c0392b" if bar.failed else "#b9770e" if bar.critical else "#5dade2"
            mark = "★ " if bar.critical else ""
            kind = "bar critical" if bar.critical else "bar"
            state = " (failed)" if bar.failed else " (running)" if bar.end is None else ""
            title = f"{bar.addr}: {_seconds(bar.duration(now))}{state}"
            rows.append(
                f'<g class="{kind}" data-addr="{escape(bar.addr)}">'
                f"<title>{escape(title)}</title>"
                f'<text x="{PAD + 12}" y="{y + 13}" {TEXT}>{escape((mark + bar.label)[:60])}</text>'
                f'<rect x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{ROW - 6}" fill="{fill}"/>'
                f'<text x="{min(x + w + 4, LABEL_W + CHART_W + 4):.1f}" y="{y + 13}" {TEXT}>'
                f"{_seconds(bar.duration(now))}</text></g>"
            )
            y += ROW
    width = LABEL_W + CHART_W + 70
    axis = (
        f'<line x1="{LABEL_W}" y1="{PAD + ROW - 2}" x2="{LABEL_W + CHART_W}" y2="{PAD + ROW - 2}" '
        f'stroke="#888"/>'
        f'<text x="{LABEL_W}" y="{PAD + 10}" {TEXT}>0</text>'
        f'<text x="{LABEL_W + CHART_W}" y="{PAD + 10}" {TEXT} text-anchor="end">'
        f"{_seconds(total)}</text>"
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{y + PAD}" '
        f'viewBox="0 0 {width} {y + PAD}" aria-label="deploy timeline">{axis}{"".join(rows)}</svg>'
    )
