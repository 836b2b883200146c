"""Robust input: user and cluster text reaches the screen as text, and a bug in one screen
does not take the app (and the user's unwritten work) down.

Three rules, each with its helper:

- Text that comes from a user or a cluster (names, filters, reasons, log lines, Terraform
  diagnostics, paths) is never parsed as markup, and what it carries is shown, never obeyed
  (`npa_sop_tui.safe_text`: an escape sequence reads `␛]52;…`, a newline in a one-line
  field `␊`). `markup()` fills `$name` placeholders of our own markup with such text
  (Textual inserts them as text: escaping cannot be made safe for Textual's parser, which
  reads an unclosed `[/x` as a tag); `plain()` and `shown()` wrap a string in a
  `rich.text.Text` or a `Content`, which are rendered as they are. `[`, `[/]` or
  `[@click=app.quit]` show as typed.
- Under every widget, `ControlNet` (a line filter of the app) takes out any control
  character that still reaches a drawn line by a path that forgot the rule above: it never
  reaches the terminal, nor a browser watching a served session.
- `Guarded` is mixed into every screen and widget of ours (and the app): an exception that
  escapes one of their message handlers, actions or timers is handed to the app's
  `report_unexpected`, which opens an error modal over the screen, whose state is untouched.
  Textual's default would end the app (and the widget's message loop) instead.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

from rich.segment import Segment
from rich.text import Text
from textual._callback import invoke
from textual.color import Color
from textual.content import Content
from textual.filter import LineFilter
from textual.message import Message

from npa_sop_tui.safe_text import safe_text, without_controls


def markup(template: str, **values: object) -> Content:
    """Our markup `template` with each `$name` replaced by `values[name]` as plain text,
    every control in it shown (`safe_text`): one value is one line of the template."""
    return Content.from_markup(template, **{k: safe_text(v) for k, v in values.items()})


def plain(value: object, style: str = "", *, keep_newlines: bool = False) -> Text:
    """`value` as a Text that is never parsed as markup, every control in it shown
    (`safe_text`; line feeds kept only when `keep_newlines`: a block of lines whose
    outside parts were made safe one by one, or a log)."""
    return Text(safe_text(value, keep_newlines=keep_newlines), style=style, end="")


def shown(value: object, *, keep_newlines: bool = False) -> Content:
    """`value` as Content that is never parsed as markup, every control in it shown."""
    return Content(safe_text(value, keep_newlines=keep_newlines))


def safe_cell(value: Any) -> Any:
    """A table cell that shows its text safely: a `str` as a `Text`; a `Text` whose
    characters need care rebuilt from its safe text, keeping its one style (a cell's
    colour); anything else (a renderable of ours) as it is."""
    if isinstance(value, str):
        return Text(safe_text(value), end="")
    if isinstance(value, Text):
        text = safe_text(value.plain)
        return value if text == value.plain else Text(text, style=value.style, end="")
    return value


class ControlNet(LineFilter):
    """The last line of defence under every widget: control characters in a drawn line are
    dropped. They take no cell, so every width stays as laid out (`without_controls`)."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        cleaned: list[Segment] | None = None
        for index, (text, style, control) in enumerate(segments):
            clean = text if control is not None else without_controls(text)
            if clean is not text and cleaned is None:
                cleaned = list(segments[:index])
            if cleaned is not None and (clean or control is not None):
                cleaned.append(Segment(clean, style, control))
        return segments if cleaned is None else cleaned


class Guarded:
    """Mixin for our Textual classes: unexpected exceptions go to the error modal.

    Put it first in the bases (`class HomeScreen(Guarded, Screen[None])`).
    """

    async def _dispatch_message(self, message: Message) -> None:
        try:
            await super()._dispatch_message(message)  # type: ignore[misc]
        except Exception as error:
            _report(self, error)

    def set_interval(  # type: ignore[no-untyped-def]
        self, interval: float, callback: Callable[..., Any] | None = None, **kwargs: Any
    ):
        return super().set_interval(interval, _guard(self, callback), **kwargs)  # type: ignore[misc]

    def set_timer(  # type: ignore[no-untyped-def]
        self, delay: float, callback: Callable[..., Any] | None = None, **kwargs: Any
    ):
        return super().set_timer(delay, _guard(self, callback), **kwargs)  # type: ignore[misc]


def regex_problem(text: str) -> str | None:
    """Why `text` is not a regular expression (None when it is one, or is empty): the
    filter boxes match such text literally and say so, rather than failing silently."""
    text = text.strip()
    if not text:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            re.compile(text)
        except re.error as exc:
            return f"not a valid regex ({exc.msg}): matched as plain text"
        except (RecursionError, OverflowError):
            return "not a usable regex: matched as plain text"
    return None


def search_pattern(text: str, *, regex: bool = True) -> re.Pattern[str] | None:
    """A case-insensitive pattern for a filter box; None for an empty box.

    Typed text is a regex when it compiles, else matched literally: half-typed patterns
    (`[a`, `(`) never raise, and odd ones (`[[`) do not warn.
    """
    text = text.strip()
    if not text:
        return None
    if regex:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return re.compile(text, re.IGNORECASE)
            except (re.error, RecursionError, OverflowError):
                pass
    return re.compile(re.escape(text), re.IGNORECASE)


def _guard(owner: Any, callback: Callable[..., Any] | None) -> Callable[..., Any] | None:
    if callback is None:
        return None

    async def guarded() -> None:
        try:
            await invoke(callback)
        except Exception as error:
            _report(owner, error)

    return guarded


def _report(owner: Any, error: Exception) -> None:
    app = owner if hasattr(owner, "report_unexpected") else getattr(owner, "app", None)
    report = getattr(app, "report_unexpected", None)
    if report is None:  # not inside our app (a widget tested on its own): Textual's handling
        raise error
    report(error, where=type(owner).__name__)
