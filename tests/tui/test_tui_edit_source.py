"""`e` on home edits the user's own cluster.yaml (the file the wizard wrote and deployed),
says when it differs from the deployed copy, and an opened file is never called written."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Static

from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.home.paths import cluster_dir
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp

from testkit.tui import CPU_SPEC, home_loaded, wait_for

pytestmark = pytest.mark.tui


def _deployed(name: str, spec_text: str) -> Path:
    entry = InventoryEntry(name=name, region="eu-north1", kube_context=f"nebius-{name}-slurm")
    entry.state = "deployed"
    now = time.time()
    entry.record(OperationRecord(id="op", kind="deploy", started=now, ended=now, result="ok"))
    inventory.save(entry)
    copy = cluster_dir(name) / inventory.SPEC_FILE
    copy.write_text(spec_text)
    return copy


async def test_edit_opens_the_users_cluster_yaml(
    npa_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _deployed("demo", CPU_SPEC)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    own = work / "cluster.yaml"
    own.write_text(CPU_SPEC.replace("size: 2", "size: 3"))  # edited since the deploy
    notes: list[str] = []
    app = NpaSopApp()
    monkeypatch.setattr(app, "notify", lambda message, **_: notes.append(message))
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        await wait_for(pilot, lambda: app.cluster == "demo")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        await wait_for(pilot, lambda: wizard.is_mounted and bool(wizard.query("#pages")))
        await pilot.pause()
        assert wizard.path == own
        assert any("differs from what demo was last deployed with" in n for n in notes), notes
        wizard.step = "review"
        await wait_for(pilot, lambda: "Opened, unchanged" in _note(wizard))
        assert "Written to" not in _note(wizard)


async def test_edit_without_own_file_says_it_edits_the_deployed_copy(
    npa_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _deployed("demo", CPU_SPEC)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.yaml").write_text(CPU_SPEC.replace("name: demo", "name: other"))
    notes: list[str] = []
    app = NpaSopApp()
    monkeypatch.setattr(app, "notify", lambda message, **_: notes.append(message))
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        await wait_for(pilot, lambda: app.cluster == "demo")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        assert app.screen.path == copy
        assert any("copy recorded at the last deploy" in n for n in notes), notes


def _note(wizard: WizardScreen) -> str:
    return str(wizard.query_one("#out-note", Static).render())
