"""`LogView`: log lines painted only when on screen.

Textual's RichLog renders every line written to it into segments at once (and keeps them),
so a burst of Terraform output costs a render of every line, and the viewer of a long
operation log renders the whole file before showing a page. Here the view holds the
(level, text) pairs themselves and paints the lines on screen, coloured by level; appending
is list work, and a view scrolled to its end follows new lines. Text is shown as typed
(never markup), every control character shown, never obeyed (`safe_text`).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, MutableSequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from npa_sop_tui.safe_text import safe_text
from npa_sop_tui.tui.safety import Guarded

LEVEL_STYLES: dict[str, Style] = {
    "error": Style(color="red"),
    "warning": Style(color="yellow"),
    "heading": Style(bold=True),
}
MATCH = Style(reverse=True)


class LogView(Guarded, ScrollView, can_focus=True):
    """(level, text) lines; `window` bounds how many are kept (oldest dropped)."""

    DEFAULT_CSS: ClassVar[str] = "LogView { background: $surface; color: $foreground; }"

    def __init__(self, *, window: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lines: MutableSequence[tuple[str, str]] = deque(maxlen=window) if window else []
        self.highlight: re.Pattern[str] | None = None
        """Matches of this pattern are shown reversed (the log viewer's search)."""
        self._widest = 0
        self._following = True
        """Whether new lines scroll the view: true until the reader scrolls up, and again
        once they scroll back to the end."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._following = new_value >= self.max_scroll_y

    def on_resize(self) -> None:
        # lines written before the first layout (or while the pane was hidden) had no end to
        # scroll to yet
        if self._following:
            self.scroll_end(animate=False)

    def clear(self) -> None:
        self.lines.clear()
        self._widest = 0
        self._resize(follow=False)

    def write(self, lines: Iterable[tuple[str, str]]) -> None:
        """Append lines; a view at its end stays at its end."""
        new = list(lines)
        if not new:
            return
        # Not "is it at its end now": two batches in one frame come before the first one's
        # scroll to the end has happened, and the view would stop following for good.
        follow = self._following or self.scroll_y >= self.max_scroll_y
        self._widest = max(self._widest, max(len(safe_text(text)) for _, text in new))
        self.lines.extend(new)
        self._resize(follow=follow)

    def _resize(self, *, follow: bool) -> None:
        self.virtual_size = Size(self._widest, len(self.lines))
        if follow:  # after the refresh: the new height is what max_scroll_y counts
            self.scroll_end(animate=False)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        index = round(self.scroll_y) + y
        if index >= len(self.lines):
            return Strip.blank(width, base)
        level, text = self.lines[index]
        text = safe_text(text)  # the search highlights what is shown
        style = base + LEVEL_STYLES[level] if level in LEVEL_STYLES else base
        segments = [Segment(text, style)]
        if self.highlight is not None:
            segments = _highlighted(text, style, self.highlight)
        x = round(self.scroll_x)
        return Strip(segments).crop(x, x + width).extend_cell_length(width, base)


def _highlighted(text: str, style: Style, pattern: re.Pattern[str]) -> list[Segment]:
    segments: list[Segment] = []
    at = 0
    for match in pattern.finditer(text):
        if match.end() == match.start():
            continue
        segments.append(Segment(text[at : match.start()], style))
        segments.append(Segment(match.group(), style + MATCH))
        at = match.end()
    segments.append(Segment(text[at:], style))
    return [s for s in segments if s.text]
