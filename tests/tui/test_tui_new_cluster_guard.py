"""A new cluster never silently targets an existing one: the wizard refuses the name of a
cluster in the inventory (it would deploy over it), the review says when the file it writes
exists already, and a destructive plan's question keeps its buttons on screen at 80×24."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp

from .fakes import FixedBackend
from testkit.tui import home_loaded, wait_for

pytestmark = pytest.mark.tui


async def _new_wizard(pilot: Any, app: NpaSopApp) -> WizardScreen:
    await home_loaded(pilot)
    await pilot.press("n")
    await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
    return app.screen  # type: ignore[return-value]


async def test_the_name_of_a_deployed_cluster_is_refused_for_a_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await _new_wizard(pilot, app)
        name = wizard.query_one("#name", Input)
        name.value = ""
        name.focus()
        await pilot.press(*"demo")
        await wait_for(pilot, lambda: any(i.path == "name" and i.is_error for i in wizard.issues))
        issue = next(i for i in wizard.issues if i.path == "name")
        assert "a cluster named 'demo' exists already (deployed, eu-north1)" in issue.message
        wizard.action_write()  # writing is blocked (it says why), and so is deploying
        await pilot.pause()
        assert not (tmp_path / "cluster.yaml").exists()
        assert wizard.step == "review" and wizard.check_action("deploy", ()) is None
        wizard.step = "cluster"
        await pilot.pause()
        shown = [str(s.render()) for s in wizard.query(Static) if s.display]
        assert any("exists already" in text for text in shown)
        name.focus()
        await pilot.press("end", "2")  # demo2: free
        await wait_for(pilot, lambda: not any(i.path == "name" for i in wizard.issues))


async def test_review_says_the_file_exists_instead_of_new_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cluster.yaml").write_text("# someone's cluster\n")
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        wizard = await _new_wizard(pilot, app)
        wizard.step = "review"
        await pilot.pause()
        preview = wizard._preview()
        head = preview.renderables[0].plain
        assert head == "Replaces cluster.yaml (it exists; writing asks first):"
        os.remove(tmp_path / "cluster.yaml")
        assert wizard._preview().renderables[0].plain == "New file:"


async def test_a_destructive_question_keeps_its_buttons_on_screen_at_80x24() -> None:
    lost = "\n".join(
        f'  module.k8s.nebius_mk8s_v1_node_group.worker["pool-{i}"]' for i in range(15)
    )
    question = f"This plan deletes or replaces 15 resources:\n{lost}\nApply it anyway?"
    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        await app.push_screen(ConfirmModal(question, yes="Apply", danger=True))
        await pilot.pause()
        modal = app.screen
        for button in ("#yes", "#no"):
            region = modal.query_one(button).region
            assert region.height > 0 and modal.region.contains_region(region), button
        assert modal.focused is modal.query_one("#no")  # the safe answer


async def test_title_names_only_a_valid_name_and_a_destroyed_cluster_offers_no_retry() -> None:
    from npa_sop_tui.screens.destroy import DestroyScreen
    from npa_sop_tui.tui.backend import OperationOutcome

    app = NpaSopApp(FixedBackend())
    async with app.run_test(size=(80, 24)) as pilot:
        wizard = await _new_wizard(pilot, app)
        name = wizard.query_one("#name", Input)
        name.value = ""
        name.focus()
        await pilot.press(*"lab2")
        await wait_for(pilot, lambda: app.cluster == "lab2")
        await pilot.press(*"[/]X")  # not a cluster name: the title keeps the last valid one
        await wait_for(pilot, lambda: any(i.path == "name" for i in wizard.issues))
        assert app.cluster == "lab2" and "[/]" not in app.sub_title
        app.pop_screen()
        await pilot.pause()
        destroy = DestroyScreen("demo")
        await app.push_screen(destroy)
        await wait_for(pilot, lambda: app.screen is destroy)
        destroy.outcome = OperationOutcome("ok", "destroyed")
        assert destroy.check_action("retry", ()) is False  # hidden, not greyed
        destroy.outcome = OperationOutcome("failed", "boom")
        assert destroy.check_action("retry", ()) is True


def test_accounting_off_on_purpose_is_not_a_failure_mark() -> None:
    from npa_sop_tui.status.model import Condition
    from npa_sop_tui.tui.widgets.status.panels import switched_off

    off = Condition(
        type="AccountingAvailable",
        status="False",
        reason="NotAvailable",
        message="Slurm accounting is disabled",
    )
    broken = Condition(type="AccountingAvailable", status="False", message="slurmdbd down")
    assert switched_off(off) and not switched_off(broken)
