"""The footer every screen uses: compact below 100 columns so 80x24 shows `?` and `q` too.

Below 100 columns the "^p Commands" hint gives its room to the screen's keys; `?` (help)
still names ctrl+p.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

COMPACT_BELOW = 100


class AppFooter(Footer):
    """Textual's Footer, switching to its compact style on narrow terminals."""

    def on_mount(self) -> None:
        self._fit(self.app.size.width)

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey) and not widget.has_class("-command-palette"):
                # A FooterKey starts compact and is then bound to the footer's style: at 100
                # columns and more every key flips twice at mount, each flip restyling it
                # (about a third of the first frame). Built in the footer's style, the bound
                # value changes nothing. (The ^p key is never bound: it stays compact.)
                widget.set_reactive(FooterKey.compact, self.compact)
                widget.set_class(self.compact, "-compact", update=False)
            yield widget

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.width)

    def _fit(self, width: int) -> None:
        narrow = width < COMPACT_BELOW
        self.compact = narrow
        if self.show_command_palette == narrow:
            self.show_command_palette = not narrow
            # Footer builds its keys in compose(), which this reactive does not rerun: a
            # resize across the threshold would keep (or never show) the ^p key
            self.call_after_refresh(self.recompose)
