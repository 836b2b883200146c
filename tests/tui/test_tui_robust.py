"""An unexpected exception in a screen opens an error modal and keeps the screen's state; an
app that dies anyway exits non-zero."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.modals import ErrorModal
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui import app as app_module
from npa_sop_tui.tui.app import NpaSopApp

from .fakes import FixedBackend
from testkit.tui import wait_for

pytestmark = pytest.mark.tui


@pytest.mark.unexpected_errors_expected
async def test_error_in_a_handler_opens_a_modal_and_keeps_the_form(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, unexpected_errors: list[Any]
) -> None:
    monkeypatch.setenv("NPA_HOME", str(tmp_path))

    def broken(self: WizardScreen) -> None:
        raise RuntimeError("boom [/] in next")

    monkeypatch.setattr(WizardScreen, "action_next", broken)
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        await pilot.press(*"keepme")
        await pilot.press("ctrl+n")
        await wait_for(pilot, lambda: isinstance(app.screen, ErrorModal))
        body = str(app.screen.query_one("#error-message").render())
        assert "RuntimeError: boom [/] in next" in body
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is wizard)
        assert wizard.query_one("#name", Input).value == "keepme"
        # the screen still answers: its message loop survived the error
        await pilot.press(*"-2")
        assert wizard.data["name"] == "keepme-2"
        assert app.is_running and app.return_code is None
    assert [where for where, _ in unexpected_errors] == ["NpaSopApp"]
    log = tmp_path / "logs" / "tui-errors.log"
    assert "RuntimeError: boom" in log.read_text()


@pytest.mark.unexpected_errors_expected
async def test_a_burst_of_errors_ends_the_app_with_a_non_zero_code(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NPA_HOME", str(tmp_path))

    def broken(self: HomeScreen) -> None:
        raise RuntimeError("always")

    monkeypatch.setattr(HomeScreen, "_tick", broken, raising=False)
    app = NpaSopApp(FixedBackend())
    with pytest.raises(RuntimeError, match="always"):
        async with app.run_test(size=(100, 30)) as pilot:
            home = app.screen
            home.set_interval(0.05, home._tick)  # type: ignore[attr-defined]
            # the first errors open modals; then an error while one is up ends the app
            await wait_for(pilot, lambda: not app.is_running or app.return_code, timeout=20)
    assert app.return_code == 1


def test_run_app_returns_the_apps_error_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """`npa-sop` exits non-zero when Textual ended the app on an error (it used to exit 0)."""

    class Dying(NpaSopApp):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            self._return_code = 1
            return None

    monkeypatch.setattr(app_module, "NpaSopApp", Dying)
    assert app_module.run_app() == 1

    class Fine(NpaSopApp):
        def run(self, *args: Any, **kwargs: Any) -> Any:
            self._return_code = 0
            return 130

    monkeypatch.setattr(app_module, "NpaSopApp", Fine)
    assert app_module.run_app() == 130
