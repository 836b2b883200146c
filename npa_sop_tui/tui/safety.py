"""Robust input: user and cluster text reaches the screen as text, and a bug in one screen
does not take the app (and the user's unwritten work) down.

Two rules, each with its helper:

- Text that comes from a user or a cluster (names, filters, reasons, log lines, Terraform
  diagnostics, paths) is never parsed as markup. `markup()` fills `$name` placeholders of our
  own markup with such text (Textual inserts them as text: escaping cannot be made safe
  for Textual's parser, which reads an unclosed `[/x` as a tag); `plain()` wraps a string in a
  `rich.text.Text`, which is rendered as is. `[`, `[/]` or `[@click=app.quit]` show as typed.
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

from rich.text import Text
from textual._callback import invoke
from textual.content import Content
from textual.message import Message


def markup(template: str, **values: object) -> Content:
    """Our markup `template` with each `$name` replaced by `values[name]` as plain text."""
    return Content.from_markup(template, **{k: str(v) for k, v in values.items()})


def plain(value: object, style: str = "") -> Text:
    """`value` as a Text that is never parsed as markup."""
    return Text(str(value), style=style, end="")


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
