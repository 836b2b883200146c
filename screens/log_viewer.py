"""The operation log viewer: a whole operation's events (Terraform's too), with search.

`/` opens the search box (text, or /regex/) and jumps to the first match as you type; Enter
hands the keys back to the log, where `n` jumps to the next match and `N` to the previous
one; every match is highlighted; `esc` closes the box, a second `esc` leaves. Lines are
plain text whatever they contain, painted only when on screen (LogView): a log of a million
lines opens as fast as a short one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Header, Input, Static

from npa_sop_tui.tui.safety import Guarded, plain, regex_problem, search_pattern
from npa_sop_tui.tui.widgets.footer import AppFooter
from npa_sop_tui.tui.widgets.log_view import LogView


class LogViewerScreen(Guarded, Screen[None]):
    """Read one operation log; search it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search", id="log.search"),
        Binding("n", "next_match", "Next", id="log.next"),
        Binding("N", "previous_match", "Prev", key_display="N", id="log.previous"),
        Binding("escape", "leave", "Back", id="log.leave"),
    ]

    def __init__(self, title: str, lines: list[tuple[str, str]], path: Path | None) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.path = path
        self.pattern: re.Pattern[str] | None = None
        self.matches: list[int] = []
        self.current = -1
        self.problem: str | None = None
        """Why the search text is not a regex (it is then matched as plain text)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False)
        where = f" · {self.path}" if self.path else " · (not written to disk)"
        yield Static(plain(f"{self.title_text}{where}"), id="log-title")
        yield Input(
            placeholder="search (text or /regex/) · enter: done, then n/N · esc: close",
            id="log-search",
        )
        yield LogView(id="log-lines")
        yield Static("", id="log-status")
        yield AppFooter()

    def on_mount(self) -> None:
        self._show_lines()
        view = self.query_one("#log-lines", LogView)
        view.focus()
        # the view opens at the end: that is where an operation failed or stopped

    def _show_lines(self) -> None:
        view = self.query_one("#log-lines", LogView)
        view.highlight = self.pattern
        if not view.lines:
            view.write(self.lines or [("info", "The log is empty.")])
        view.refresh()
        self._describe()

    def _describe(self) -> None:
        status = self.query_one("#log-status", Static)
        if self.pattern is None:
            status.update(plain(f"{len(self.lines)} line(s) · / to search"))
        elif not self.matches:
            status.update(plain(f"no match · {self.problem}" if self.problem else "no match"))
        else:
            where = f"match {self.current + 1} of {len(self.matches)} · n next · N previous"
            status.update(plain(f"{where} · {self.problem}" if self.problem else where))

    # -- search --------------------------------------------------------------------------

    def action_search(self) -> None:
        box = self.query_one("#log-search", Input)
        box.add_class("-open")
        box.focus()

    @on(Input.Changed, "#log-search")
    def _search(self, event: Input.Changed) -> None:
        text = event.value.strip()
        self.problem = None
        if len(text) > 2 and text.startswith("/") and text.endswith("/"):
            self.pattern = search_pattern(text[1:-1])
            self.problem = regex_problem(text[1:-1])
        else:
            self.pattern = search_pattern(text, regex=False)
        pattern = self.pattern
        self.matches = (
            [i for i, (_, line) in enumerate(self.lines) if pattern.search(line)] if pattern else []
        )
        self.current = -1
        self._show_lines()
        self.action_next_match()

    @on(Input.Submitted, "#log-search")
    def _submitted(self) -> None:
        # the search is done: keys go back to the log, so n and N move between matches
        # (typed into the box they would change the search instead)
        # typing already jumped to the first match: Enter keeps it
        self.query_one("#log-lines", LogView).focus()
        if self.current < 0:
            self.action_next_match()

    def action_next_match(self) -> None:
        self._jump(+1)

    def action_previous_match(self) -> None:
        self._jump(-1)

    def _jump(self, step: int) -> None:
        if self.matches:
            self.current = (self.current + step) % len(self.matches)
            line = self.matches[self.current]
            self.query_one("#log-lines", LogView).scroll_to(y=max(0, line - 3), animate=False)
        self._describe()

    def action_leave(self) -> None:
        box = self.query_one("#log-search", Input)
        if box.has_focus or box.has_class("-open"):  # open (even after enter): close it first
            box.remove_class("-open")
            self.query_one("#log-lines", LogView).focus()
            return
        self.app.pop_screen()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next_match", "previous_match"):
            return True if self.matches else None
        return True
