"""The theme: read from config.yaml, reported when unknown, saved when picked on screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.home.config import load_config
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import Backend

from testkit.tui import wait_for

pytestmark = pytest.mark.tui

CONFIG = """\
# my npa settings
region: eu-north1   # where I work
tui: { theme: nord, keys: { home.new: w } }
"""


async def test_a_theme_picked_on_screen_is_saved_and_comments_stay(npa_home: Path) -> None:
    path = npa_home / "config.yaml"
    path.write_text(CONFIG)
    path.chmod(0o640)
    config = load_config(path)
    app = NpaSopApp(Backend(), theme=config.tui.theme, config_path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert app.theme == "nord"
        assert path.read_text() == CONFIG  # applying the configured theme writes nothing
        app.theme = "gruvbox"  # what the palette's "Change theme" does
        await wait_for(pilot, lambda: "gruvbox" in path.read_text(), timeout=20)
    text = path.read_text()
    assert load_config(path).tui.theme == "gruvbox"
    assert load_config(path).tui.keys == {"home.new": "w"}
    assert "# my npa settings" in text and "# where I work" in text
    # a file in the npa home is the user's alone: saving tightens a group-readable one
    assert path.stat().st_mode & 0o777 == 0o600


async def test_the_theme_is_saved_into_a_new_config_file(npa_home: Path) -> None:
    path = npa_home / "config.yaml"
    app = NpaSopApp(Backend(), config_path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        app.theme = "dracula"
        await wait_for(pilot, lambda: path.is_file(), timeout=20)
    assert load_config(path).tui.theme == "dracula"


async def test_an_unknown_theme_in_config_is_reported(npa_home: Path) -> None:
    path = npa_home / "config.yaml"
    app = NpaSopApp(Backend(), theme="solarised-nope", config_path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("tui.theme 'solarised-nope' is not a theme" in m for m in messages), messages
        assert any("nord" in m for m in messages)  # the names that exist
        assert app.theme != "solarised-nope"
    assert not path.exists()  # nothing was picked: nothing saved
