"""Read-only sessions (what `npa-sop serve` gives a teammate by default): every action that
changes a cluster or a file is absent (no key, no footer entry, no help line, no palette
command) and the app's own entry points refuse; an operator session keeps them all."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from textual.screen import Screen

import npa_sop_tui.screens as screens_pkg
from npa_sop_tui.screens.destroy import DestroyScreen
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.modals import TextModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.read_only import OPERATOR_ACTIONS, OperatorGated

from .fakes import FixedBackend
from testkit.tui import wait_for

pytestmark = pytest.mark.tui


def _actions(screen: Screen) -> set[str]:
    return {b.binding.action for b in screen.active_bindings.values()}


def _palette(app: NpaSopApp) -> set[str]:
    return {c.title for c in app.get_system_commands(app.screen)}


async def test_read_only_home_and_dashboard_offer_no_operator_action() -> None:
    app = NpaSopApp(FixedBackend(), read_only=True, status_interval=60)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen) and app.screen.selected)
        assert "READ-ONLY" in app.title
        assert not _actions(app.screen) & OPERATOR_ACTIONS
        assert {"status", "timeline"} <= _actions(app.screen)
        palette = _palette(app)
        assert "Status of demo" in palette
        assert not {"Destroy demo", "Deploy demo", "Edit demo", "New cluster"} & palette

        await pilot.press("x", "d", "n", "e")  # the keys do nothing at all
        assert isinstance(app.screen, HomeScreen)

        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        await wait_for(pilot, lambda: app.screen.status is not None)
        assert "destroy" not in _actions(app.screen)
        await pilot.press("x")
        await pilot.pause()
        assert not any(isinstance(s, DestroyScreen) for s in app.screen_stack)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        help_text = str(app.screen.text)
        assert "Destroy" not in help_text and "Slurm jobs" in help_text

        app.destroy("demo")  # the app's own entry point refuses too
        app.deploy(object())
        await pilot.pause()
        assert not any(isinstance(s, DestroyScreen) for s in app.screen_stack)


async def test_operator_session_keeps_destroy() -> None:
    app = NpaSopApp(FixedBackend(), read_only=False, status_interval=60, open_cluster="demo")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        assert "READ-ONLY" not in app.title
        assert "destroy" in _actions(app.screen)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, DestroyScreen))


def test_every_screen_with_an_operator_key_is_gated() -> None:
    """A new screen with, say, a `run` key must mix in OperatorGated, or a read-only
    session would offer it."""
    ungated = []
    for info in pkgutil.iter_modules(screens_pkg.__path__):
        module = importlib.import_module(f"npa_sop_tui.screens.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not issubclass(cls, Screen) or cls.__module__ != module.__name__:
                continue
            actions = {
                b.action.rsplit(".", 1)[-1].split("(")[0]
                for b in cls.BINDINGS
                if hasattr(b, "action")
            }
            if actions & OPERATOR_ACTIONS and not issubclass(cls, OperatorGated):
                ungated.append(f"{cls.__module__}.{cls.__name__}")
    assert not ungated, f"screens with operator keys but no OperatorGated: {ungated}"


@pytest.mark.parametrize("read_only", [True, False], ids=["read-only", "operator"])
async def test_read_only_texts_never_name_an_absent_action(
    npa_home: object, read_only: bool
) -> None:
    """The dashboard's hints, node detail's key line and an empty home say nothing of
    drain, resume, run or create in a read-only session; an operator session names the
    app's own key for a resume (`u`), not scontrol on the login node."""
    from textual.widgets import Static

    from npa_sop_tui.screens.node_detail import NodeDetailScreen
    from npa_sop_tui.tui.backend import ClusterRow
    from npa_sop_tui.tui.widgets.status.panels import VerdictPanel

    from .test_tui_operator import OpsBackend

    class Empty(OpsBackend):
        def list_clusters(self) -> list[ClusterRow]:
            return []

    app = NpaSopApp(OpsBackend(), read_only=read_only, status_interval=60)
    async with app.run_test(size=(120, 40)) as pilot:
        app.show_status("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        dashboard = app.screen
        await wait_for(pilot, lambda: dashboard.status is not None)
        hints = str(dashboard.query_one(VerdictPanel).render())
        assert "scontrol" not in hints
        if read_only:
            assert "an operator resumes it (`npa soperator resume --node cpu-1`)" in hints
        else:
            assert "resume it here: enter on cpu-1 in Slurm nodes, then u" in hints
        await app.push_screen(NodeDetailScreen("demo", "cpu-1", dashboard.status.kube))
        note = str(app.screen.query_one(".note", Static).render())
        if read_only:
            assert note == "ctrl+r reload · esc back"
        else:
            assert note.startswith("d drain (asks a reason) · u resume · r run a job")
    empty = NpaSopApp(Empty(), read_only=read_only)
    async with empty.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(empty.screen, HomeScreen))
        hint = empty.screen.query_one("#empty-hint", Static)
        await wait_for(pilot, lambda: "No clusters yet" in str(hint.render()))
        assert ("Press n" in str(hint.render())) is not read_only
