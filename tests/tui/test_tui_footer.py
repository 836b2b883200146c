"""The footer follows the terminal's width: compact without the ^p key below 100 columns,
full with it from 100, however often the terminal is resized."""

from __future__ import annotations

import pytest

from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.footer import AppFooter

from .fakes import FixedBackend
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui


def _palette_key_shown(footer: AppFooter) -> bool:
    return bool(footer.query(".-command-palette"))


async def test_compact_footer_follows_resize() -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 30)) as pilot:
        await home_loaded(pilot)
        footer = app.screen.query_one(AppFooter)
        await wait_for(pilot, lambda: _palette_key_shown(footer))
        for width, narrow in ((80, True), (120, False), (99, True), (100, False)):
            await pilot.resize_terminal(width, 24)
            await wait_for(
                pilot,
                lambda narrow=narrow: (
                    footer.compact == narrow and _palette_key_shown(footer) != narrow
                ),
            )


def _shown_keys(app: NpaSopApp) -> list[str]:
    """The footer keys as drawn: inside the terminal, with room for their text."""
    from textual.widgets._footer import FooterKey

    screen = app.screen
    return [
        k.key
        for k in screen.query_one(AppFooter).query(FooterKey)
        if k.region.area and screen.region.contains_region(k.region)
    ]


async def test_back_quit_and_help_stay_in_the_footer_at_60_columns(npa_home: object) -> None:
    """At 60x20 the dashboard's footer lost Quit and Help off its right edge; the screen's
    keys give way instead (help lists them), and come back when the terminal widens."""
    from .test_tui_operator import OpsBackend, _dashboard

    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=(60, 20)) as pilot:
        await home_loaded(pilot)
        await wait_for(pilot, lambda: {"q", "question_mark"} <= set(_shown_keys(app)))
        await _dashboard(pilot, app)

        def fits() -> bool:
            footer = app.screen.query_one(AppFooter)
            keys = _shown_keys(app)
            used = max((k.region.right for k in footer.children if k.region.area), default=0)
            return {"escape", "q", "question_mark"} <= set(keys) and used <= 60

        await wait_for(pilot, fits)
        narrow = _shown_keys(app)
        assert "r" in narrow, narrow  # the screen's first keys still shown
        await pilot.resize_terminal(120, 30)
        await wait_for(pilot, lambda: len(_shown_keys(app)) > len(narrow))
        assert {"x", "g", "q", "question_mark"} <= set(_shown_keys(app))
