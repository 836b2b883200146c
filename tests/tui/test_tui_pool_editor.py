"""The pool editor: once a save is refused, the error follows the form, so a fixed field's
error goes as soon as the field is valid (the issue's "keeps a name error after it is
fixed")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor
from npa_sop_tui.tui.widgets.wizard.pool_list import PoolTable

from .fakes import FixedBackend
from testkit.tui import home_loaded, open_cpu_wizard, wait_for

pytestmark = pytest.mark.tui


def _error(editor: PoolEditor) -> str:
    return str(editor.query_one("#pool-error", Static).render())


async def _new_pool(pilot: Any, app: NpaSopApp, tmp_path: Path) -> tuple[WizardScreen, PoolEditor]:
    """The wizard on a CPU spec at its pools step, then `a`: the editor of a new pool."""
    await home_loaded(pilot)
    wizard = await open_cpu_wizard(pilot, tmp_path)
    wizard.step = "pools"
    await pilot.pause()
    wizard.query_one("#pool-list").query_one(PoolTable).focus()
    await pilot.press("a")
    await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
    editor = app.screen
    assert isinstance(editor, PoolEditor)
    return wizard, editor


async def test_a_fixed_error_goes_as_soon_as_the_field_is_valid(tmp_path: Path) -> None:
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        wizard, editor = await _new_pool(pilot, app, tmp_path)
        assert isinstance(editor, PoolEditor)
        name = editor.query_one("#pool-name", Input)
        name.value = "Bad_Name"
        assert _error(editor) == ""  # nothing said before a save was tried
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is editor and _error(editor).startswith("Name:")
        name.value = "still_bad"
        await pilot.pause()
        assert _error(editor).startswith("Name:")  # not fixed yet: still said
        name.value = "gpu-a"
        await pilot.pause()
        assert _error(editor) == ""  # fixed: gone at once, before any save
        size = editor.query_one("#pool-size", Input)
        size.value = "0"
        await pilot.pause()
        assert _error(editor).startswith("Size:")  # the next problem takes its place
        size.value = "2"
        await pilot.pause()
        assert _error(editor) == ""
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert [p["name"] for p in wizard.data["workers"]] == ["cpu", "gpu-a"]


async def test_the_size_field_is_in_view_at_80x24_without_tabbing(tmp_path: Path) -> None:
    """Name, platform, preset and size are all on screen when the editor opens (the Size
    field was below the fold until tabbed to), and tab still goes preset → size."""
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        _, editor = await _new_pool(pilot, app, tmp_path)
        form = editor.query_one("#pool-form")
        await wait_for(pilot, lambda: editor.query_one("#pool-size").region.area > 0)
        seen = form.scrollable_content_region
        for field in ("#pool-name", "#pool-platform", "#pool-preset", "#pool-size"):
            assert seen.contains_region(editor.query_one(field).region), field
        assert form.scroll_y == 0
        editor.query_one("#pool-preset").focus()
        await pilot.press("tab")
        assert editor.focused is editor.query_one("#pool-size", Input)
