"""NO_COLOR that stays readable.

With NO_COLOR set, Textual turns every colour into its grey of the same luminance. Our states
are coloured (READY green, allocated blue, a drained node yellow…), and several of those
greys land close to the grey of the background: blue text on a dark surface becomes dark
grey on dark grey. `ReadableMonochrome` does the same conversion, then gives any text whose
grey is too close to its background's the black or white that reads best on it. The states
themselves are told apart by their words and by text style (bold, reverse), never by colour.
"""

from __future__ import annotations

from functools import lru_cache

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter, Monochrome, monochrome_style

MIN_CONTRAST = 4.5
"""WCAG AA for normal text."""

_WHITE = RichColor.from_rgb(255, 255, 255)
_BLACK = RichColor.from_rgb(0, 0, 0)


def _luminance(color: RichColor) -> float:
    """WCAG relative luminance of a truecolor/standard colour."""
    r, g, b = color.get_truecolor()

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: RichColor, b: RichColor) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


@lru_cache(4096)
def readable_style(style: Style, background: RichColor) -> Style:
    """`style` in greys, its text at least MIN_CONTRAST against what it is drawn on."""
    mono = monochrome_style(style)
    fg, bg = mono.color, mono.bgcolor or background
    if fg is None or fg.is_default or bg.is_default:
        return mono
    if mono.reverse:  # the text is drawn in the background colour, on the foreground one
        fg, bg = bg, fg
    if contrast(fg, bg) >= MIN_CONTRAST:
        return mono
    best = _WHITE if contrast(_WHITE, bg) >= contrast(_BLACK, bg) else _BLACK
    if mono.reverse:
        return mono + Style(bgcolor=best)  # reversed: the bgcolor is what the text uses
    return mono + Style(color=best)


class ReadableMonochrome(LineFilter):
    """Textual's Monochrome, with every text kept readable on its background."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        behind = background.monochrome.rich_color
        return [
            Segment(text, None if style is None else readable_style(style, behind), None)
            for text, style, _ in segments
        ]


def make_readable(filters: list[LineFilter]) -> None:
    """Swap Textual's Monochrome (NO_COLOR) for ReadableMonochrome, in place."""
    for index, line_filter in enumerate(filters):
        if isinstance(line_filter, Monochrome):
            filters[index] = ReadableMonochrome(enabled=line_filter.enabled)
