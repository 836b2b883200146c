"""A spec the wizard writes outside the npa home shows on home as a draft (written, not
deployed) instead of "No clusters yet"; a draft opens in the wizard, and status/destroy,
which need a cluster, are not offered for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from npa_sop_tui.screens.home import ClusterTable, HomeScreen
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import ClusterRow

from .fakes import FixedBackend
from testkit.tui import CPU_SPEC, wait_for

pytestmark = pytest.mark.tui


class NoClusters(FixedBackend):
    def list_clusters(self) -> list[ClusterRow]:
        return []


def _cells(home: HomeScreen) -> list[list[str]]:
    table = home.query_one(ClusterTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_a_spec_the_wizard_wrote_shows_on_home_as_a_draft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./cluster.yaml here
    source = tmp_path / "src.yaml"
    source.write_text(CPU_SPEC)
    elsewhere = tmp_path / "specs" / "team.yaml"
    elsewhere.parent.mkdir()
    app = NpaSopApp(NoClusters())
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        hint = home.query_one("#empty-hint", Static)
        await wait_for(pilot, lambda: "No clusters yet" in str(hint.render()))

        app.open_spec(source)
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        await wait_for(pilot, lambda: wizard._ready)  # composed and mounted
        wizard.step = "review"
        await pilot.pause(0.2)
        wizard.query_one("#out-path", Input).value = str(elsewhere)
        await pilot.pause()
        await pilot.press("ctrl+s")
        await wait_for(pilot, elsewhere.exists)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is home)
        await wait_for(pilot, lambda: bool(home.rows))

        name = wizard.data["name"]
        assert [(r.name, r.state) for r in home.rows] == [(name, "draft")]
        cells = _cells(home)
        assert cells[0][:2] == [name, "draft"]
        assert not hint.display
        home.selected = name
        assert home.check_action("status", ()) is None  # shown greyed: no cluster yet
        assert home.check_action("destroy", ()) is None
        assert home.check_action("edit", ()) and home.check_action("deploy", ())
        # e opens the file the wizard wrote
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        assert app.screen.path == elsewhere.absolute()  # type: ignore[attr-defined]


async def test_cluster_yaml_in_the_folder_is_a_draft_until_deployed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.yaml").write_text(CPU_SPEC)
    app = NpaSopApp(NoClusters())
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_for(pilot, lambda: bool(home.rows))
        assert [r.state for r in home.rows] == ["draft"]

    # a deployed cluster of the same name is listed once, as itself
    deployed = FixedBackend()
    name = deployed.list_clusters()[0].name
    (tmp_path / "cluster.yaml").write_text(CPU_SPEC.replace(_name_line(), f"name: {name}"))
    app = NpaSopApp(deployed)
    async with app.run_test(size=(80, 24)) as pilot:
        home = app.screen
        assert isinstance(home, HomeScreen)
        await wait_for(pilot, lambda: bool(home.rows))
        assert [r.state for r in home.rows if r.name == name] == ["deployed"]
        assert all(r.state != "draft" for r in home.rows)


def _name_line() -> str:
    return next(line for line in CPU_SPEC.splitlines() if line.startswith("name:"))
