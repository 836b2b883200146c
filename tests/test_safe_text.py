"""safe_text: outside text shows every character and obeys none (terminals, markup, browsers)."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st
from textual.content import Content

from npa_sop_tui.safe_text import escape_markup, safe_markup, safe_text, without_controls

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
TITLE = "\x1b]0;owned\x07"
LINK = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"


def _acts(text: str) -> list[str]:
    """Characters a terminal or a bidi-aware renderer would act on."""
    return [
        c
        for c in text
        if (ord(c) < 0x20 and c != "\n")
        or 0x7F <= ord(c) <= 0x9F
        or unicodedata.bidirectional(c)
        in {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
        or c in "\u2028\u2029"
    ]


def test_escape_sequences_are_shown_not_obeyed() -> None:
    for attack in (OSC52, TITLE, LINK, CLEAR, "\x9b2J", "a\rb"):
        shown = safe_text(f"Kill task failed {attack}")
        assert _acts(shown) == [], repr(shown)
    assert safe_text(OSC52) == "␛]52;c;ZWNobyBwd25lZA==␇"
    assert safe_text("\x9b31m") == "<U+009B>31m"
    assert safe_text("a\rb") == "a␍b"


def test_newlines_are_kept_only_when_asked_and_tabs_become_spaces() -> None:
    assert safe_text("one\ntwo") == "one␊two"
    assert safe_text("one\ntwo", keep_newlines=True) == "one\ntwo"
    assert safe_text("a\tb") == "a b"


def test_bidi_overrides_and_line_separators_are_made_visible() -> None:
    assert safe_text("admin\u202egnp.exe") == "admin<U+202E>gnp.exe"
    assert safe_text("x\u2028y") == "x<U+2028>y"
    assert safe_text("\u2066a\u2069") == "<U+2066>a<U+2069>"


def test_printable_text_passes_unchanged() -> None:
    for text in ("gpu-0 idle", "Nodes 1-3 drained: [maintenance]", "日本語 ✓ café", "😀"):
        assert safe_text(text) == text


def test_limit_bounds_the_result_without_cutting_a_shown_control() -> None:
    assert safe_text("abcdef", limit=4) == "abc…"
    assert safe_text("abc", limit=3) == "abc"
    assert safe_text("ab\x9bcd", limit=9) == "ab…"  # <U+009B> does not fit: cut before it
    assert safe_text("anything", limit=0) == ""
    assert len(safe_text("x" * 10_000, limit=80)) == 80


def test_markup_in_outside_text_is_text() -> None:
    for text in ("[/] x", "[bold]hi", "[link=https://evil.example]click[/link]", "\\[x]", "a\\"):
        assert Content.from_markup(safe_markup(text)).plain == text
    assert escape_markup("[/]") == "\\[/]"


def test_non_strings_are_shown_as_their_text() -> None:
    assert safe_text(42) == "42"
    assert safe_text(None) == "None"


@given(st.text(max_size=60))
def test_nothing_that_acts_survives(text: str) -> None:
    shown = safe_text(text)
    assert _acts(shown) == []
    assert "\n" not in shown


@given(st.text(max_size=60), st.integers(min_value=1, max_value=40))
def test_markup_renders_the_safe_text_exactly_and_limits_hold(text: str, limit: int) -> None:
    assert Content.from_markup(safe_markup(text)).plain == safe_text(text)
    assert len(safe_text(text, limit=limit)) <= limit


def test_del_is_shown_as_its_picture_and_c1_ends_before_no_break_space() -> None:
    assert safe_text("a\x7fb") == "a␡b"
    assert safe_text("\x9f") == "<U+009F>"  # the last C1 control
    assert safe_text("1\u00a0GiB") == "1\u00a0GiB"  # a no-break space is printable text


def test_a_limit_of_one_keeps_one_character_or_the_cut_mark() -> None:
    assert safe_text("a", limit=1) == "a"
    assert safe_text("abc", limit=1) == "…"


def test_text_exactly_at_the_limit_is_kept_whole() -> None:
    plain = "gpu-0"
    assert safe_text(plain, limit=5) is plain  # the fast path: no copy at the limit either
    assert safe_text("a\x7f", limit=2) == "a␡"  # a shown control that just fits
    assert safe_text("a\x7fb", limit=2) == "a…"


def test_markup_keeps_newlines_and_the_limit_when_asked() -> None:
    assert safe_markup("a\n[b]", keep_newlines=True) == "a\n\\[b]"
    assert safe_markup("a\n[b]") == "a␊\\[b]"
    assert safe_markup("[abcdef", limit=4) == "\\[ab…"


@given(st.text(max_size=60))
def test_text_without_trouble_is_returned_as_it_is_and_trouble_is_always_seen(text: str) -> None:
    """The fast path (one search, no copy) and the character-by-character one agree."""
    shown = safe_text(text)
    if not _acts(text) and "\n" not in text and "\t" not in text:
        assert shown is text
    else:
        assert shown != text


def test_without_controls_drops_what_safe_text_would_show_and_keeps_the_rest() -> None:
    assert without_controls(f"a{OSC52}b\u202ec") == "a]52;c;ZWNobyBwd25lZA==bc"
    plain = "gpu-0 [drained] ✓"
    assert without_controls(plain) is plain


@given(st.text(max_size=60))
def test_without_controls_leaves_nothing_that_acts_and_no_width_changes(text: str) -> None:
    from rich.cells import cell_len

    kept = without_controls(text)
    assert _acts(kept) == [] and "\n" not in kept
    assert cell_len(kept) == cell_len(text)  # a control takes no cell: a line keeps its width
