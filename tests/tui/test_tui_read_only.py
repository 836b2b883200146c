"""Read-only sessions (what `npa-sop serve` gives a teammate by default): every action that
changes a cluster or a file is absent (no key, no footer entry, no help line, no palette
command) and the app's own entry points refuse; an operator session keeps them all. The one
list of operator actions is checked against every action a screen, widget or the app binds:
each is either on it or named below as one that changes nothing."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingsMap, BindingType
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widgets import Footer

import npa_sop_tui.screens as screens_pkg
import npa_sop_tui.tui as tui_pkg
from npa_sop_tui.screens.destroy import DestroyScreen
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.modals import TextModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.read_only import (
    OPERATOR_ACTIONS,
    OperatorGated,
    is_read_only,
    offers,
    strip_operator_bindings,
)

from .fakes import FixedBackend
from testkit.tui import wait_for

# Every bound action that is not an operator action, with why a read-only session may keep
# it. A new key's action must be added here or to OPERATOR_ACTIONS: an action in neither
# fails the test below, so a mutating action left off the list cannot pass unnoticed.
CHANGES_NOTHING: dict[str, str] = {
    "quit_key": "leaves the app",
    "help": "shows the keys",
    "help_anywhere": "shows the keys",
    "command_palette": "lists commands, each gated by `offers`",
    "status": "opens a cluster's live status",
    "timeline": "opens an operation's timeline",
    "fleet": "opens the node states of live clusters",
    "sandbox": "switches this session's view to the sandbox's clusters",
    "reload": "reads the inventory or the view's source again",
    "refresh": "collects status again",
    "faster": "changes the status refresh interval",
    "slower": "changes the status refresh interval",
    "filter": "filters a table",
    "sort": "sorts a table",
    "jobs": "opens the Slurm job list",
    "toggle_history": "shows finished jobs too",
    "log": "opens an operation's log",
    "open_log": "opens a job's output",
    "open_job": "opens a job's output (its output file, read)",
    "ssh": "shows the ssh command to the login node",
    "copy": "copies the ssh command to the clipboard",
    "search": "searches the log viewer",
    "next_match": "searches the log viewer",
    "previous_match": "searches the log viewer",
    "leave": "goes back (a running operation goes on)",
    "close": "closes the node detail",
    "dismiss": "closes a modal with its own answer",
    "restore": "restores the timeline pane's size",
    "select": "moves the cursor in a table",
    "cursor": "moves the cursor in a table",
    "edge": "moves the cursor in a table",
    "page": "moves the cursor in a table",
    "cursor_down": "moves the cursor in a table",
    "cursor_up": "moves the cursor in a table",
    "cursor_left": "moves the cursor in a table",
    "cursor_right": "moves the cursor in a table",
    "page_down": "moves the cursor in a table",
    "page_up": "moves the cursor in a table",
    "scroll_top": "moves the cursor in a table",
    "scroll_bottom": "moves the cursor in a table",
    "scroll_home": "moves the cursor in a table",
    "scroll_end": "moves the cursor in a table",
    # the wizard's and the run dialog's own keys: those screens open only through an
    # operator action (new, edit, run), and what they make is written or submitted by one
    # (write, deploy, run)
    "back": "the wizard's previous step",
    "next": "the wizard's next step",
    "rename_keys": "the wizard's key-name display",
    "pool": "the wizard's pool editor",
    "add": "a pool in the wizard's draft",
    "duplicate": "a pool in the wizard's draft",
    "remove": "a pool in the wizard's draft",
    "save": "a pool into the wizard's draft",
    "submit": "the run dialog's answer, which the operator action `run` submits",
}


def _action_name(binding: BindingType) -> str:
    action = binding.action if isinstance(binding, Binding) else binding[1]
    return action.split("(", 1)[0].rsplit(".", 1)[-1]


def _bound_actions() -> dict[str, set[type]]:
    """Every action any class of the screens or the app binds → the classes binding it."""
    bound: dict[str, set[type]] = {}
    for package in (screens_pkg, tui_pkg):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if cls.__module__ != module.__name__ or not issubclass(cls, DOMNode):
                    continue
                for binding in cls.__dict__.get("BINDINGS", []):
                    bound.setdefault(_action_name(binding), set()).add(cls)
    return bound


def _actions(screen: Screen) -> set[str]:
    return {b.binding.action for b in screen.active_bindings.values()}


def _palette(app: NpaSopApp) -> set[str]:
    return {c.title for c in app.get_system_commands(app.screen)}


@pytest.mark.tui
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


@pytest.mark.tui
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


def test_the_operator_list_names_every_bound_action_that_changes_a_cluster_or_a_file() -> None:
    bound = _bound_actions()
    assert {"destroy", "deploy", "drain", "run", "write", "quit_key"} <= set(bound)  # found
    unclassified = sorted(set(bound) - OPERATOR_ACTIONS - set(CHANGES_NOTHING))
    assert not unclassified, (
        f"bound actions on neither list: {unclassified}; add each to OPERATOR_ACTIONS "
        "(tui/read_only.py) when it changes a cluster or a file, else to CHANGES_NOTHING"
    )
    assert not OPERATOR_ACTIONS & set(CHANGES_NOTHING)
    assert not set(CHANGES_NOTHING) - set(bound), "CHANGES_NOTHING names an unbound action"


def test_only_gated_screens_bind_operator_actions() -> None:
    """The keys are removed from a screen's own bindings: a widget or the app binding an
    operator action would keep its key in a read-only session."""
    loose = sorted(
        f"{cls.__module__}.{cls.__name__}: {action}"
        for action, classes in _bound_actions().items()
        if action in OPERATOR_ACTIONS
        for cls in classes
        if not (issubclass(cls, Screen) and issubclass(cls, OperatorGated))
    )
    assert not loose


def _node(read_only: bool | None, bindings: list[BindingType] | None = None) -> Any:
    app = SimpleNamespace() if read_only is None else SimpleNamespace(read_only=read_only)
    return SimpleNamespace(app=app, _bindings=BindingsMap(bindings or []))


def test_a_session_is_read_only_only_when_its_app_says_so() -> None:
    assert is_read_only(_node(True)) is True
    assert is_read_only(_node(False)) is False
    assert is_read_only(_node(None)) is False  # an app without the flag operates
    assert is_read_only(SimpleNamespace(app=SimpleNamespace(read_only=1))) is True


@pytest.mark.parametrize(
    "action", ["destroy", "app.destroy", "screen.run('x')", "run('a(b).c')", "a.b.drain", "new"]
)
def test_operator_actions_are_offered_only_to_an_operator_session(action: str) -> None:
    assert offers(_node(True), action) is False
    assert offers(_node(False), action) is True


@pytest.mark.parametrize("action", ["status", "app.help", "screen.reload", "destroy_view"])
def test_other_actions_are_offered_to_every_session(action: str) -> None:
    assert offers(_node(True), action) is True


def test_stripping_removes_only_the_operator_keys_of_a_read_only_screen() -> None:
    bindings: list[BindingType] = [
        Binding("x", "destroy", "Destroy"),
        Binding("s", "status", "Status"),
        Binding("r", "refresh", "Refresh"),
        Binding("r", "run", "Run"),  # one key, two actions: the viewing one stays
    ]
    node = _node(True, bindings)
    strip_operator_bindings(node)
    kept = node._bindings.key_to_bindings
    assert sorted(kept) == ["r", "s"]
    assert [b.action for b in kept["r"]] == ["refresh"]
    operator = _node(False, bindings)
    strip_operator_bindings(operator)
    assert sorted(operator._bindings.key_to_bindings) == ["r", "s", "x"]
    assert len(operator._bindings.key_to_bindings["r"]) == 2


class _GatedScreen(OperatorGated, Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "destroy", "Destroy"),
        Binding("s", "status", "Status"),
    ]

    def compose(self) -> ComposeResult:
        yield Footer()


class _Session(App[None]):
    def __init__(self, read_only: bool) -> None:
        super().__init__()
        self.read_only = read_only

    def on_mount(self) -> None:
        self.push_screen(_GatedScreen())


@pytest.mark.parametrize("read_only", [True, False])
async def test_a_gated_screen_loses_its_operator_keys_as_it_mounts(read_only: bool) -> None:
    app = _Session(read_only)
    async with app.run_test(size=(60, 10)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, _GatedScreen))
        actions = {b.binding.action for b in app.screen.active_bindings.values()}
        assert "status" in actions
        assert ("destroy" in actions) is not read_only
