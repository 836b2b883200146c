"""Every key the footer shows and `?` lists does what it says, on every screen.

For each screen (and each stage of it that changes its keys) the test reads the keys from
the help modal and from the footer's bindings, requires a check for each one (a key added
without a check fails here), presses it and asserts its effect: the screen or modal it
opens, the state it changes. Escape goes back everywhere."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from textual.command import CommandPalette
from textual.screen import Screen
from textual.widgets import Input, Static

from npa_sop_tui.jobs.model import JobRequest
from npa_sop_tui.sandbox.slurm_sim import SimulatedSlurm
from npa_sop_tui.screens.deploy import DeployScreen
from npa_sop_tui.screens.deploy_stage import OperationStage
from npa_sop_tui.screens.destroy import DestroyScreen
from npa_sop_tui.screens.fleet_node_states import FleetNodeStatesScreen
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.screens.jobs import JobsScreen, JobsTable
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.modals import (
    ConfirmModal,
    FailureModal,
    HostKeyModal,
    PathModal,
    ReasonModal,
    SshModal,
    TextModal,
)
from npa_sop_tui.screens.node_detail import NodeDetailScreen
from npa_sop_tui.screens.run_dialog import RunDialog
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.screens.timeline import TimelineScreen
from npa_sop_tui.screens.upgrade import UpgradeScreen
from npa_sop_tui.screens.wizard import WizardScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.widgets.deploy.timeline_pane import DeployTimelinePane
from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable

from .test_tui_operator import OpsBackend, _base
from testkit.tui import CPU_SPEC, home_loaded, wait_for

pytestmark = pytest.mark.tui

Check = Callable[[], Awaitable[None]]


class BindingsBackend(OpsBackend):
    """OpsBackend whose clusters have a spec (edit and deploy from home work)."""

    reloads = 0

    def list_clusters(self) -> Any:
        type(self).reloads += 1
        return super().list_clusters()

    def spec_for_cluster(self, name: str) -> dict[str, Any]:
        mapping = yaml.safe_load(CPU_SPEC)
        mapping["name"] = name
        return mapping

    def pool_capacity(self, name: str) -> dict[str, str]:
        return {}


def _help_keys(text: str) -> set[str]:
    keys: set[str] = set()
    for line in text.splitlines():
        shown = line.strip().split("  ")[0]
        keys.update(k.strip() for k in shown.split(" / ") if k.strip())
    return keys


async def _open_help(pilot: Any, app: NpaSopApp) -> set[str]:
    """Press `?` (f1 while typing): the help modal opens; returns the keys it lists."""
    screen = app.screen
    await pilot.press("f1" if app.typing() else "question_mark")
    await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
    text = str(app.screen.query_one("#text-body", Static).render())
    await pilot.press("escape")
    await wait_for(pilot, lambda: app.screen is screen)
    return _help_keys(text)


def _footer_keys(app: NpaSopApp) -> set[str]:
    return {
        active.binding.key_display or app.get_key_display(active.binding)
        for active in app.screen.active_bindings.values()
        if active.binding.show and active.enabled
    }


async def _every_key_works(pilot: Any, app: NpaSopApp, checks: dict[str, Check]) -> None:
    """The footer's and the help's keys are exactly the checked ones; run every check."""
    await pilot.pause()
    if app.screen.is_modal:
        # a modal takes only its own keys (no footer, no app keys): they are its list
        listed = {
            active.binding.key_display or app.get_key_display(active.binding)
            for active in app.screen.active_bindings.values()
            if active.enabled and active.binding.id
        }
        if len(app.screen.focus_chain) > 1:
            listed.add("tab")
        checks = {k: v for k, v in checks.items() if k not in ("?", "f1", "^p", "q")}
    else:
        listed = await _open_help(pilot, app)
    footer = _footer_keys(app)
    assert footer <= listed, f"in the footer but not in `?`: {footer - listed}"
    optional = {"?", "f1"}  # `?` is a letter while typing; f1 is listed then
    assert listed - optional == set(checks) - optional, (
        f"{type(app.screen).__name__}: keys without a check {listed - set(checks)}, "
        f"checks for keys not shown {set(checks) - listed}"
    )
    for key, check in checks.items():
        if key in listed:
            await check()


def opens(
    pilot: Any,
    app: NpaSopApp,
    key: str,
    kind: type[Screen[Any]],
    *,
    close: str | None = "escape",
    then: Callable[[Screen[Any]], Any] | None = None,
) -> Check:
    """Pressing `key` opens a `kind` screen; `close` (or a pop) brings the screen back."""

    async def check() -> None:
        here = app.screen
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.screen, kind))
        opened = app.screen
        if then is not None:
            result = then(opened)
            if asyncio.iscoroutine(result):
                await result
        if close is None:
            app.pop_screen()
        else:
            await pilot.press(close)
        await wait_for(pilot, lambda: app.screen is here, timeout=20)

    return check


def leaves(pilot: Any, app: NpaSopApp, key: str, kind: type[Screen[Any]]) -> Check:
    """Pressing `key` leaves for a `kind` screen (checked last: the screen is gone)."""

    async def check() -> None:
        here = app.screen
        await pilot.press(key)
        await wait_for(pilot, lambda: isinstance(app.screen, kind) and app.screen is not here)

    return check


def retries(pilot: Any, app: NpaSopApp, attempts: Callable[[], int]) -> Check:
    """`r` runs the failed operation again (one more attempt), which fails into the failure
    modal; escape brings the screen back."""

    async def check() -> None:
        here = app.screen
        before = attempts()
        await pilot.press("r")
        await wait_for(pilot, lambda: attempts() > before)
        await wait_for(pilot, lambda: isinstance(app.screen, FailureModal))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is here)

    return check


def common(pilot: Any, app: NpaSopApp) -> dict[str, Check]:
    """The app's keys, on every screen: help and the command palette (q is checked last)."""

    async def help_opens() -> None:
        await _open_help(pilot, app)

    async def f1_opens() -> None:
        here = app.screen
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is here)

    return {
        "?": help_opens,
        "f1": f1_opens,
        "^p": opens(pilot, app, "ctrl+p", CommandPalette),
    }


async def _tab_moves_focus(pilot: Any, app: NpaSopApp) -> None:
    before = app.focused
    await pilot.press("tab")
    await pilot.pause()
    assert app.focused is not before, "tab did not move the focus"
    await pilot.press("shift+tab")
    await pilot.pause()
    assert app.focused is before


async def _quits(pilot: Any, app: NpaSopApp) -> None:
    await pilot.press("q")
    await wait_for(pilot, lambda: app.return_code == 0 or not app.is_running, timeout=10)


# -- home ---------------------------------------------------------------------------------


async def test_home_keys(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)

        async def reloads() -> None:
            before = BindingsBackend.reloads
            await pilot.press("r")
            await wait_for(pilot, lambda: BindingsBackend.reloads > before)

        async def sandbox() -> None:
            assert not app.sandbox
            await pilot.press("b")
            await wait_for(pilot, lambda: app.sandbox)
            assert "SANDBOX" in str(app.screen.query_one("#sandbox-offer", Static).render())

        checks = {
            **common(pilot, app),
            "n": opens(pilot, app, "n", WizardScreen),
            "o": opens(pilot, app, "o", PathModal),
            "e": opens(pilot, app, "e", WizardScreen),
            "d": opens(pilot, app, "d", DeployScreen),
            "s": opens(pilot, app, "s", StatusScreen),
            "x": opens(pilot, app, "x", DestroyScreen),
            "u": opens(pilot, app, "u", UpgradeScreen),
            "t": opens(pilot, app, "t", TimelineScreen),
            "f": opens(pilot, app, "f", FleetNodeStatesScreen),
            "r": reloads,
            "q": lambda: asyncio.sleep(0),  # checked last: it ends the app
            "b": sandbox,  # after the others: it swaps the backend
        }
        await _every_key_works(pilot, app, checks)
        await _quits(pilot, app)


# -- dashboard, jobs, node detail, log viewer -------------------------------------------


async def _dashboard(pilot: Any, app: NpaSopApp) -> StatusScreen:
    app.show_status("demo")
    await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
    screen = app.screen
    assert isinstance(screen, StatusScreen)
    await wait_for(pilot, lambda: screen.status is not None)
    return screen


async def test_dashboard_keys(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        screen = await _dashboard(pilot, app)
        table = screen.query_one(SlurmNodesTable)
        streams = 0
        original = screen._stream

        def counting_stream() -> Any:
            nonlocal streams
            streams += 1
            return original()

        screen._stream = counting_stream  # type: ignore[method-assign]

        async def filters() -> None:
            await pilot.press("slash")
            assert isinstance(app.focused, Input) and app.focused.id == "node-filter"
            await pilot.press(*"cpu-1")
            assert [n.name for n in table.visible()] == ["cpu-1"]
            await pilot.press("escape")  # clears the filter, stays
            assert app.screen is screen and table.filter_text == "" and table.row_count == 2

        async def sorts() -> None:
            before = table.sort_column
            await pilot.press("o")
            assert table.sort_column != before

        def interval_key(key: str, direction: int) -> Check:
            async def check() -> None:
                before = screen.interval
                await pilot.press(key)
                await wait_for(pilot, lambda: (screen.interval - before) * direction > 0)
                screen.interval = before

            return check

        async def refreshes() -> None:
            before = streams
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: streams > before)

        def ssh_shows(modal: Screen[Any]) -> None:
            assert "ssh root@203.0.113.7" in str(modal.query_one("#text-body", Static).render())

        async def destroys() -> None:
            await pilot.press("x")
            await wait_for(pilot, lambda: isinstance(app.screen, DestroyScreen))
            await pilot.press("escape")  # back to a fresh home list
            await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))

        screen.interval = 5.0
        await pilot.pause()
        checks = {
            **common(pilot, app),
            "tab": lambda: _tab_moves_focus(pilot, app),
            "/": filters,
            "o": sorts,
            "+": interval_key("plus", 1),
            "=": interval_key("equals_sign", 1),
            "-": interval_key("minus", -1),
            "^r": refreshes,
            "r": opens(pilot, app, "r", RunDialog),
            "l": opens(pilot, app, "l", SshModal, then=ssh_shows),
            "j": opens(pilot, app, "j", JobsScreen),
            "g": opens(pilot, app, "g", LogViewerScreen),
            "t": opens(pilot, app, "t", TimelineScreen),
            "q": lambda: asyncio.sleep(0),
            "esc": lambda: asyncio.sleep(0),  # below: it leaves the screen
            "x": destroys,  # last: it leaves the screen
        }
        await _every_key_works(pilot, app, checks)
        screen = await _dashboard(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        await _quits(pilot, app)


async def test_jobs_keys(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        status = await _dashboard(pilot, app)
        local = SimulatedSlurm("demo", _base, accounting=True).local_jobs()
        for _ in range(2):  # two real (local) jobs to act on
            await local.submit(JobRequest(command="sleep 60"))
        await pilot.press("j")
        await wait_for(pilot, lambda: isinstance(app.screen, JobsScreen))
        jobs = app.screen
        assert isinstance(jobs, JobsScreen)
        table = jobs.query_one(JobsTable)
        await wait_for(pilot, lambda: table.row_count == 2)

        def cancels(key: str) -> Check:
            async def check() -> None:
                count = table.row_count
                await pilot.press(key)
                await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
                await pilot.press("y")
                await wait_for(pilot, lambda: app.screen is jobs and table.row_count < count)

            return check

        async def history() -> None:
            await pilot.press("h")
            await wait_for(pilot, lambda: jobs.history and "sacct" in _title(jobs))
            await pilot.press("h")
            await wait_for(pilot, lambda: not jobs.history and "squeue" in _title(jobs))
            await wait_for(pilot, lambda: table.row_count >= 1)

        async def filters() -> None:
            await pilot.press("slash")
            assert isinstance(app.focused, Input) and app.focused.id == "jobs-filter"
            await pilot.press(*"no-such-job")
            await wait_for(pilot, lambda: table.row_count == 0)
            await pilot.press("escape")
            await wait_for(pilot, lambda: app.screen is jobs and table.row_count >= 1)

        async def reloads() -> None:
            table.clear()
            await pilot.press("r")
            await wait_for(pilot, lambda: table.row_count >= 1)

        async def opens() -> None:
            from npa_sop_tui.screens.job_screen import JobScreen

            for key in ("o", "enter"):  # enter on the table does the same
                table.focus()
                await pilot.press(key)
                await wait_for(pilot, lambda: isinstance(app.screen, JobScreen))
                await pilot.press("escape")
                await wait_for(pilot, lambda: app.screen is jobs)

        checks = {
            **common(pilot, app),
            "o": opens,
            "h": history,
            "/": filters,
            "r": reloads,
            "q": lambda: asyncio.sleep(0),
            "c": cancels("c"),
            "del": cancels("delete"),
            "esc": leaves(pilot, app, "escape", StatusScreen),
        }
        await _every_key_works(pilot, app, checks)
        assert app.screen is status or isinstance(app.screen, StatusScreen)
        await _quits(pilot, app)
    for job in local.all():  # leave no process behind
        if not job.done:
            await local.cancel(job.id)


def _title(jobs: JobsScreen) -> str:
    return str(jobs.query_one("#jobs-title", Static).render())


async def test_node_detail_keys(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        status = await _dashboard(pilot, app)
        table = status.query_one(SlurmNodesTable)
        table.focus()
        table.move_cursor(row=1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, NodeDetailScreen))
        node = app.screen
        assert isinstance(node, NodeDetailScreen) and node.node == "cpu-1"
        await wait_for(pilot, lambda: node.detail is not None)

        def text() -> str:
            return str(node.query_one("#node-text", Static).render())

        async def drains() -> None:
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, ReasonModal))
            await pilot.press(*"disk check", "enter")
            await wait_for(pilot, lambda: app.screen is node and "disk check" in text())
            assert "DRAIN" in node.detail.state

        async def resumes() -> None:
            await pilot.press("u")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("y")
            await wait_for(pilot, lambda: app.screen is node and "disk check" not in text())

        async def reloads() -> None:
            node.query_one("#node-text", Static).update("")
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: "state" in text())

        checks = {
            **common(pilot, app),
            "d": drains,
            "u": resumes,
            "^r": reloads,
            "r": opens(pilot, app, "r", RunDialog),
            "q": lambda: asyncio.sleep(0),
            "esc": leaves(pilot, app, "escape", StatusScreen),
        }
        await _every_key_works(pilot, app, checks)
        await wait_for(pilot, lambda: app.screen is status)
        await _quits(pilot, app)


async def test_log_viewer_keys(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    lines = [("info", f"line {i}") for i in range(200)] + [("error", "Error: boom")] * 2
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        home = app.screen
        viewer = LogViewerScreen("log", lines, None)
        app.push_screen(viewer)
        await wait_for(pilot, lambda: app.screen is viewer)

        def status() -> str:
            return str(viewer.query_one("#log-status", Static).render())

        async def searches() -> None:
            await pilot.press("slash")
            assert isinstance(app.focused, Input)
            await pilot.press(*"boom", "enter")
            await wait_for(pilot, lambda: len(viewer.matches) == 2)
            await pilot.press("escape")  # closes the search box, keeps the matches
            assert app.screen is viewer and not isinstance(app.focused, Input)

        await _every_key_works(
            pilot,
            app,
            {**common(pilot, app), "/": searches, "q": lambda: asyncio.sleep(0), "esc": _noop},
        )
        # with matches, n and N appear and move between them
        assert {"n", "N"} <= _footer_keys(app)
        at = viewer.current
        await pilot.press("n")
        assert viewer.current == (at + 1) % 2 and "match" in status()
        await pilot.press("N")
        assert viewer.current == at
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is home)
        await _quits(pilot, app)


async def _noop() -> None:
    return None


# -- deploy and destroy -------------------------------------------------------------------


def enlarges_timeline(pilot: Any, deploy: DeployScreen) -> Check:
    """`t` on the deploy screen enlarges its timeline pane over the body; `t` puts it back."""

    async def check() -> None:
        pane = deploy.query_one(DeployTimelinePane)
        await pilot.press("t")
        await wait_for(pilot, lambda: pane.expanded and deploy.has_class("-timeline-max"))
        await pilot.press("t")
        await wait_for(pilot, lambda: not pane.expanded)

    return check


async def test_deploy_keys_per_stage(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        spec, _ = app.backend.check(yaml.safe_load(CPU_SPEC))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, DeployScreen))
        deploy = app.screen
        assert isinstance(deploy, DeployScreen)
        await wait_for(pilot, lambda: deploy.stage == OperationStage.PLANNED)
        deploy.query_one("#resources").focus()  # off the Apply button: keys reach the screen

        async def applies() -> None:
            await pilot.press("a")
            await wait_for(pilot, lambda: deploy.stage == OperationStage.APPLYING)

        planned = {
            **common(pilot, app),
            "tab": lambda: _tab_moves_focus(pilot, app),
            "l": opens(pilot, app, "l", LogViewerScreen),
            "t": enlarges_timeline(pilot, deploy),
            "q": lambda: asyncio.sleep(0),
            "esc": _noop,  # leaves: checked after a failed plan and after the wizard's d
            "a": applies,  # last: it starts the apply
        }
        await _every_key_works(pilot, app, planned)

        async def cancels() -> None:
            await pilot.press("c")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("y")
            await wait_for(pilot, lambda: deploy.stage == OperationStage.DONE, timeout=20)
            assert deploy.outcome is not None and deploy.outcome.result == "interrupted"

        # FixedBackend's deploy reaches "apply:full": live status has started
        await wait_for(pilot, lambda: deploy._status_started)
        applying = {
            **common(pilot, app),
            "tab": lambda: _tab_moves_focus(pilot, app),
            "l": opens(pilot, app, "l", LogViewerScreen),
            "t": enlarges_timeline(pilot, deploy),
            "s": opens(pilot, app, "s", StatusScreen),
            "q": lambda: asyncio.sleep(0),
            "c": cancels,  # last: it ends the apply
        }
        await _every_key_works(pilot, app, applying)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        await _quits(pilot, app)


async def test_failure_modal_keys_retry_and_log(npa_home: Path) -> None:
    class FailingPlan(BindingsBackend):
        plans = 0

        async def plan(self, spec: Any, sink: Any, *, allow_unknown: bool = False) -> Any:
            type(self).plans += 1
            raise RuntimeError("Error: boom in main.tf")

    app = NpaSopApp(FailingPlan())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        spec, _ = app.backend.check(yaml.safe_load(CPU_SPEC))
        app.deploy(spec)
        await wait_for(pilot, lambda: isinstance(app.screen, FailureModal))
        deploy = app.screen_stack[-2]
        assert isinstance(deploy, DeployScreen)
        await _every_key_works(
            pilot,
            app,
            {
                **common(pilot, app),
                "tab": lambda: _tab_moves_focus(pilot, app),
                "q": lambda: asyncio.sleep(0),
                "r": lambda: asyncio.sleep(0),
                "l": lambda: asyncio.sleep(0),
                "esc": lambda: asyncio.sleep(0),
            },
        )
        await pilot.press("l")  # the log opens over the deploy screen
        await wait_for(pilot, lambda: isinstance(app.screen, LogViewerScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is deploy)

        await _every_key_works(
            pilot,
            app,
            {
                **common(pilot, app),
                "tab": lambda: _tab_moves_focus(pilot, app),
                "l": opens(pilot, app, "l", LogViewerScreen),
                "t": enlarges_timeline(pilot, deploy),
                "s": opens(pilot, app, "s", StatusScreen),
                "q": lambda: asyncio.sleep(0),
                "r": retries(pilot, app, lambda: FailingPlan.plans),
                "esc": leaves(pilot, app, "escape", HomeScreen),
            },
        )
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))


async def test_destroy_keys(npa_home: Path) -> None:
    class FailingDestroy(BindingsBackend):
        destroys = 0

        async def destroy(self, name: str, sink: Any) -> Any:
            type(self).destroys += 1
            raise RuntimeError("Error: the bucket is not empty")

    app = NpaSopApp(FailingDestroy())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        app.destroy("demo")
        await wait_for(pilot, lambda: isinstance(app.screen, DestroyScreen))
        destroy = app.screen
        # typing the name: q and ? are letters here, so only f1 and ctrl+p are offered
        await wait_for(pilot, lambda: isinstance(app.focused, Input))
        await _every_key_works(
            pilot,
            app,
            {**common(pilot, app), "tab": lambda: _tab_moves_focus(pilot, app), "esc": _noop},
        )
        await pilot.press(*"demo", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, FailureModal))
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is destroy)

        await _every_key_works(
            pilot,
            app,
            {
                **common(pilot, app),
                "tab": lambda: _tab_moves_focus(pilot, app),
                "l": opens(pilot, app, "l", LogViewerScreen),
                "r": retries(pilot, app, lambda: FailingDestroy.destroys),
                "q": lambda: asyncio.sleep(0),
                "esc": leaves(pilot, app, "escape", HomeScreen),
            },
        )
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        await _quits(pilot, app)


# -- modals -------------------------------------------------------------------------------


async def test_modal_keys(npa_home: Path) -> None:
    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        home = app.screen
        answers: list[Any] = []

        async def shown(modal: Screen[Any]) -> None:
            app.push_screen(modal, answers.append)
            await wait_for(pilot, lambda: app.screen is modal)
            await pilot.pause()

        for make, keys in (
            (lambda: ConfirmModal("sure?"), {"y": True, "n": False, "esc": False}),
            (lambda: FailureModal("t", "m", "Error: x"), {"r": "retry", "l": "log", "esc": None}),
            (lambda: TextModal("t", "body"), {"esc": None, "⏎": None}),
            (lambda: HostKeyModal("h", "SHA256:x"), {"esc": False}),
            (lambda: PathModal("path", "x.yaml"), {"esc": None}),
            (lambda: ReasonModal("cpu-1"), {"esc": None}),
        ):
            modal = make()
            await shown(modal)
            expected = {k: _answer(pilot, app, make, k, v, answers, home) for k, v in keys.items()}
            await _every_key_works(
                pilot,
                app,
                {
                    **common(pilot, app),
                    "tab": lambda: _tab_moves_focus(pilot, app),
                    "q": _noop,
                    **expected,
                },
            )
            if app.screen is not home:
                app.pop_screen()
                await wait_for(pilot, lambda: app.screen is home)

        # the SSH modal's copy keys put the command or the address on the clipboard
        ssh = SshModal("ssh -p 2222 root@203.0.113.7", "203.0.113.7")
        await shown(ssh)
        await pilot.press("c")
        assert app.clipboard == "ssh -p 2222 root@203.0.113.7"
        await pilot.press("i")
        assert app.clipboard == "203.0.113.7"
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is home)


def _answer(
    pilot: Any,
    app: NpaSopApp,
    make: Callable[[], Screen[Any]],
    key: str,
    expected: Any,
    answers: list[Any],
    home: Screen[Any],
) -> Check:
    """Pressing `key` on the open modal dismisses it with `expected`; it is then reopened
    (fresh) for the next key."""

    async def check() -> None:
        await pilot.press({"esc": "escape", "⏎": "enter"}.get(key, key))
        await wait_for(pilot, lambda: app.screen is home)
        assert answers[-1] == expected, (key, answers[-1])
        modal = make()
        app.push_screen(modal, answers.append)
        await wait_for(pilot, lambda: app.screen is modal)
        await pilot.pause()

    return check


# -- wizard -------------------------------------------------------------------------------


async def test_wizard_keys_on_every_step(npa_home: Path, spec_file: Path) -> None:
    from npa_sop_tui.tui.widgets.wizard.pool_editor import PoolEditor
    from npa_sop_tui.tui.widgets.wizard.pool_list import PoolTable

    app = NpaSopApp(BindingsBackend())
    async with app.run_test(size=(120, 40)) as pilot:
        await home_loaded(pilot)
        home = app.screen
        app.open_spec(spec_file)
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        assert isinstance(wizard, WizardScreen)
        await wait_for(pilot, lambda: wizard.is_mounted and bool(wizard.query("#pages")))

        async def next_step() -> None:
            step = wizard.step
            await pilot.press("ctrl+n")
            await wait_for(pilot, lambda: wizard.step != step)
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: wizard.step == step)

        async def previous_step() -> None:
            step = wizard.step
            await pilot.press("ctrl+r")
            await wait_for(pilot, lambda: wizard.step != step)
            await pilot.press("ctrl+n")
            await wait_for(pilot, lambda: wizard.step == step)

        async def writes() -> None:
            size = wizard.data["workers"][0]["size"] + 1
            wizard.data["workers"][0]["size"] = size  # what editing a pool's size does
            wizard.revalidate()
            assert wizard.dirty()
            await pilot.press("ctrl+s")
            await wait_for(pilot, lambda: f"size: {size}" in spec_file.read_text())
            await wait_for(pilot, lambda: not wizard.dirty())

        async def quit_asks() -> None:
            wizard.data["workers"][0]["size"] += 1
            wizard.revalidate()
            await pilot.press("q")  # unwritten changes: asks first
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
            await pilot.press("n")  # stay
            await wait_for(pilot, lambda: app.screen is wizard and app.is_running)
            wizard.data["workers"][0]["size"] -= 1
            wizard.revalidate()

        def pool_count() -> int:
            return len(wizard.data["workers"])

        def pool_change(key: str, delta: int) -> Check:
            async def check() -> None:
                count = pool_count()
                await pilot.press(key)
                if delta > 0:  # duplicate opens the editor on the copy: save it
                    await wait_for(pilot, lambda: isinstance(app.screen, PoolEditor))
                    await pilot.press("ctrl+s")
                else:  # remove asks first
                    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
                    await pilot.press("y")
                await wait_for(
                    pilot, lambda: app.screen is wizard and pool_count() == count + delta
                )
                wizard.query_one(PoolTable).focus()

            return check

        def duplicate_then(key: str) -> Check:
            add, remove = pool_change("c", +1), pool_change(key, -1)

            async def check() -> None:
                await add()
                await remove()

            return check

        base = {**common(pilot, app), "tab": lambda: _tab_moves_focus(pilot, app)}
        for step in ("cluster", "control", "pools", "options", "review"):
            wizard.step = step
            await pilot.pause()
            checks: dict[str, Check] = {**base, "^s": writes}
            if step != "cluster":
                checks["^r"] = previous_step
            if step != "review":
                checks["^n"] = next_step
            if step == "pools":
                wizard.query_one(PoolTable).focus()
                checks |= {
                    "a": opens(pilot, app, "a", PoolEditor),
                    "⏎": opens(pilot, app, "enter", PoolEditor),
                    "c": pool_change("c", +1),
                    "x": pool_change("x", -1),
                    "del": duplicate_then("delete"),
                }
            if not app.typing():  # in a text field q is a letter
                checks["q"] = quit_asks
            checks["esc"] = _noop  # below, once the file is written
            if step == "review":
                checks["d"] = leaves(pilot, app, "d", DeployScreen)  # last: it leaves
            await _every_key_works(pilot, app, checks)
        deploy = app.screen  # d replaced the wizard with the deploy of the written file
        await wait_for(pilot, lambda: deploy.stage == OperationStage.PLANNED)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is home)
        # esc on the wizard: home at once when nothing is unwritten, else it asks
        app.open_spec(spec_file)
        await wait_for(pilot, lambda: isinstance(app.screen, WizardScreen))
        wizard = app.screen
        await wait_for(pilot, lambda: wizard.is_mounted and bool(wizard.query("#pages")))
        wizard.data["workers"][0]["size"] += 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is wizard)
        wizard.data["workers"][0]["size"] -= 1
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is home)
