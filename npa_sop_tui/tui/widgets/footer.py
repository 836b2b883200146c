"""The footer every screen uses: compact below 100 columns so 80x24 shows `?` and `q` too.

Below 100 columns the "^p Commands" hint gives its room to the screen's keys; `?` (help)
still names ctrl+p. When the keys still do not fit (60 columns), the screen's own keys give
way from the right, never Back, Quit or Help: `?` lists every key the footer left out.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 100
ALWAYS_SHOWN = frozenset({"escape", "q", "question_mark"})
"""Back, Quit and Help: the keys that get a person out, kept however narrow the terminal."""


class AppFooter(Footer):
    """Textual's Footer, switching to its compact style on narrow terminals."""

    def on_mount(self) -> None:
        self._fit(self.app.size.width)

    _needs = 0
    """The columns the keys of the last compose need, all of them shown."""
    _cut = False
    """Whether the last compose left keys out for want of room."""
    _room = 0
    """The width the last compose chose the keys for."""

    def compose(self) -> ComposeResult:
        widgets = list(super().compose())
        for widget in widgets:
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                # A FooterKey starts compact and is then bound to the footer's style: at 100
                # columns and more every key flips twice at mount, each flip restyling it
                # (about a third of the first frame). Built in the footer's style, the bound
                # value changes nothing. (The ^p key is never bound: it stays compact.)
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
        self._needs = sum(self._width(w) for w in widgets)
        room = self._room = self.app.size.width
        self._cut = self._needs > room
        yield from self._fitting(widgets, room) if self._cut else widgets

    def _width(self, widget: Widget) -> int:
        if not isinstance(widget, FooterKey):
            return 0 if widget.has_class("-command-palette") else 12  # a key group: rare
        text = cell_len(widget.key_display) + cell_len(widget.description)
        if widget.has_class("-command-palette"):
            return text + 3
        # compact: the description's left padding and a margin after the key; full: a
        # column each side of the key and after the description
        gaps = (1 if self.compact else 2) + (1 if widget.description else 0)
        return text + gaps

    def _fitting(self, widgets: list[Widget], room: int) -> list[Widget]:
        """The keys that fit in `room`, screen keys dropped from the right first."""
        kept = list(widgets)
        droppable = [w for w in widgets if not _always_shown(w)]
        while droppable and sum(self._width(w) for w in kept) > room:
            kept.remove(droppable.pop())
        self.styles.grid_size_columns = len(kept)
        return kept

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)
        # keys left out, or now too many for the room: choose again (a rare event)
        width = event.size.width
        if width != self._room and (self._cut or self._needs > width):
            self.call_after_refresh(self.recompose)

    def _fit(self, width: int) -> None:
        narrow = width < COMPACT_BELOW
        self.compact = narrow
        if self.show_command_palette == narrow:
            self.show_command_palette = not narrow
            # Footer builds its keys in compose(), which this reactive does not rerun: a
            # resize across the threshold would keep (or never show) the ^p key
            self.call_after_refresh(self.recompose)


def _always_shown(widget: Widget) -> bool:
    # the ^p key is docked right, outside the row of keys: it is shown or not by width alone
    return widget.has_class("-command-palette") or (
        isinstance(widget, FooterKey) and widget.key in ALWAYS_SHOWN
    )
