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
