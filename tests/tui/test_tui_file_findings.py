"""A spec with a misspelt key opens in the wizard with its findings shown (file line, field,
what to do), ctrl+s says why it writes nothing, ctrl+f renames the key in place, and
nothing else in the file changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.wizard.file_findings import FileFindings
from npa_sop_tui.tui.widgets.wizard.pool_list import PoolList

from .fakes import FixedBackend
from testkit.tui import cut_off, wait_for

pytestmark = pytest.mark.tui

MISSPELT = """\
# Team cluster: comments must survive the fix.
apiVersion: npa.soperator/v0.0.1
name: demo            # kube context nebius-demo-slurm
region: eu-north1
workerz:
  - name: cpu
    platform: 'cpu-d3'
    preset: "8vcpu-32gb"
    sise: 2   # two for now
slurm_operator_version: "4.1.6"
"""


async def _open(pilot: Any, app: NpaSopApp, path: Path) -> WizardScreen:
    app.open_spec(path)
    await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
    wizard = app.screen
    assert isinstance(wizard, WizardScreen)
    await wait_for(pilot, lambda: wizard._ready)  # composed and mounted
    await pilot.pause(0.2)
    return wizard


def _banner(wizard: WizardScreen) -> str:
    return str(wizard.query_one("#file-findings-text", Static).render())


def noted_app() -> NpaSopApp:
    """An app that keeps every notification's text (a toast expires after 5 s, and a
    loaded machine can take longer than that to switch screens)."""
    app = NpaSopApp(FixedBackend())
    noted: list[str] = []
    notify = app.notify

    def keep(message: str, **kwargs: Any) -> None:
        noted.append(message)
        notify(message, **kwargs)

    app.notify = keep  # type: ignore[method-assign]
    app.noted = noted  # type: ignore[attr-defined]
    return app


def _notes(app: NpaSopApp) -> list[str]:
    return app.noted  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_misspelt_key_opens_with_its_findings_and_is_renamed_in_place(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MISSPELT)
    app = noted_app()
    async with app.run_test(size=size) as pilot:
        wizard = await _open(pilot, app, path)
        # the form holds what it could read
        assert wizard.query_one("#name", Input).value == "demo"
        banner = wizard.query_one(FileFindings)
        assert banner.display and banner.region.height > 0
        text = _banner(wizard)
        assert "line 5 workerz: unknown field 'workerz'" in text
        assert "did you mean 'workers'?" in text
        assert "workerz → workers" in text
        # laid out a refresh after the banner got its text (later on a busy machine)
        await wait_for(pilot, lambda: not cut_off(app.screen), timeout=10)

        # ctrl+s writes nothing and says why
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert path.read_text() == MISSPELT
        said = " ".join(_notes(app))
        assert "Not written: line 5 workerz: unknown field 'workerz'" in said
        assert "never dropped" in said and "ctrl+f renames it" in said

        # ctrl+f renames workerz, then the pool's sise (found once workers is known)
        await pilot.press("ctrl+f")
        await wait_for(pilot, lambda: app.screen is not wizard)
        await pilot.pause(0.2)
        fixed = app.screen
        assert isinstance(fixed, WizardScreen)
        await wait_for(pilot, lambda: fixed._ready)
        assert path.read_text() == MISSPELT, "renaming is not writing"
        assert fixed.dirty(), "an unwritten rename is a change (leaving asks)"
        assert [p["name"] for p in fixed.query_one(PoolList).pools] == ["cpu"]
        assert not fixed.query_one(FileFindings).display
        assert "workerz → workers, sise → size" in " ".join(_notes(app))

        fixed.step = "review"
        await pilot.pause(0.2)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: not fixed.dirty())
        written = path.read_text()
        assert written == MISSPELT.replace("workerz:", "workers:").replace("sise:", "size:")


async def test_a_key_with_no_close_name_blocks_writing_and_stays_in_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(MISSPELT.replace("workerz", "workers").replace("sise", "size") + "zzz: 1\n")
    before = path.read_text()
    app = noted_app()
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await _open(pilot, app, path)
        text = _banner(wizard)
        assert "line 11 zzz: unknown field 'zzz'" in text
        assert "allowed fields:" in text
        assert "ctrl+f" not in text
        assert not wizard.check_action("rename_keys", ())
        # a form change does not make the unknown key writable
        name = wizard.query_one("#name", Input)
        name.value = "demo2"
        await pilot.pause(0.2)
        await pilot.press("ctrl+s")
        await pilot.pause(0.2)
        assert path.read_text() == before
        said = " ".join(_notes(app))
        assert "Not written: line 11 zzz: unknown field 'zzz'" in said
        assert "rename or remove it in the file" in said


async def test_a_file_that_is_not_a_mapping_is_still_refused_with_its_reason(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("- just\n- a list\n")
    app = noted_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_spec(path)
        await pilot.pause(0.3)
        assert not isinstance(app.screen, WizardScreen)
        message = app.screen.query_one("#error-message", Static)
        assert "must be a mapping" in str(message.render())
