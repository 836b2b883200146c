"""Text from a cluster, a job, the cloud or a file in the home is shown, never obeyed, in
every view of the app: the dashboard's panes, a node's detail, the jobs, a job's output, the
log viewer, the deploy screen's diagnostics, dialogs and notifications. What is drawn holds
the control pictures (`␛]52;…`), never the controls; markup in it is text.

A served browser session is this app (tests/web/test_serve_browser.py reads what it sends).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Static

from npa_sop_tui.errors import OperationError
from npa_sop_tui.events import Diagnostic, LogLine
from npa_sop_tui.jobs.model import JobInfo
from npa_sop_tui.screens.job_screen import JobScreen
from npa_sop_tui.screens.jobs import JobsScreen
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.screens.node_detail import NodeDetailScreen
from npa_sop_tui.screens.run_dialog import RunDialog
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.status.jobs import JobHistory, NodeDetail, SlurmJob
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import ClusterRow
from npa_sop_tui.tui.safety import ControlNet

from .fakes import T0, FixedBackend
from testkit.hostile import ATTACK, OSC52, TITLE, assert_inert, hostile_status, hostile_text
from testkit.tui import screen_text, wait_for

pytestmark = pytest.mark.tui

SEEN = ("␛]52;c;ZWNobyBvd25lZA==␇", "␛]0;owned␇", "<U+009B>31m", "<U+202E>")
"""ATTACK's controls as the views show them (those that fit the narrowest place they are)."""


def _job(text: str) -> SlurmJob:
    return SlurmJob(id="7", name=text, user=text, state="RUNNING", nodelist=text, elapsed="0:01")


class HostileOps:
    """The operator actions of a cluster that reports `text` in every field."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def nodes(self) -> Any:
        return hostile_status(self.text).slurm

    async def node(self, name: str) -> NodeDetail:
        t = self.text
        return NodeDetail(name=name, state=f"IDLE+DRAIN{t}", reason=t, reason_by=t,
                          reason_time=t, gres=t, partitions=[t], jobs=[_job(t)], k8s_pod=t,
                          k8s_node=t, node_group=t)  # fmt: skip

    async def jobs(self) -> list[SlurmJob]:
        return [_job(self.text)]

    async def history(self) -> JobHistory:
        return JobHistory(available=True, note=self.text, jobs=[_job(self.text)])

    async def aclose(self) -> None:
        return None


class HostileBackend(FixedBackend):
    """Every cluster-reported field holds `text`."""

    def __init__(self, text: str = ATTACK) -> None:
        super().__init__()
        self.text = text

    def list_clusters(self) -> list[ClusterRow]:
        return [ClusterRow("demo", self.text, "failed", self.text)]

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        yield hostile_status(self.text)
        await asyncio.Event().wait()

    async def slurm_ops(self, name: str, **_: Any) -> HostileOps:
        return HostileOps(self.text)


async def _shown(pilot: Any, *pictures: str) -> str:
    """The screen, once drawn: nothing in it acts, and each of `pictures` is on it."""
    await pilot.pause()
    text = screen_text(pilot.app)
    assert_inert(text)
    for picture in pictures:
        assert picture in text, (picture, text[-3000:])
    return text


async def test_a_drain_reason_with_escapes_is_shown_not_obeyed_on_the_dashboard() -> None:
    app = NpaSopApp(HostileBackend(), status_interval=60)
    async with app.run_test(size=(220, 60)) as pilot:
        app.show_status("demo")
        await wait_for(pilot, lambda: getattr(app.screen, "status", None) is not None)
        await pilot.pause()
        assert isinstance(app.screen, StatusScreen)
        text = await _shown(pilot, *SEEN)
        assert "[/] x" in text  # markup-like text as the cluster wrote it
        # a login address that is not one offers no SSH command to copy
        assert app.screen.check_action("ssh", ()) is None


async def test_a_nodes_detail_and_the_jobs_show_slurm_text_safely() -> None:
    app = NpaSopApp(HostileBackend(), status_interval=60)
    async with app.run_test(size=(200, 50)) as pilot:
        app.push_screen(NodeDetailScreen("demo", "gpu-0"))
        await wait_for(pilot, lambda: app.screen.detail is not None)  # type: ignore[attr-defined]
        await pilot.pause()
        text = await _shown(pilot, *SEEN)
        # every field keeps its own line: a value cannot start a fake `state` line
        assert text.count("state ") == 1 and "reason      [/] x" in text
        await pilot.press("escape")

        app.push_screen(JobsScreen("demo", interval=60))
        await wait_for(pilot, lambda: bool(app.screen.jobs))  # type: ignore[attr-defined]
        await pilot.pause()
        await _shown(pilot, "␛]52;c;")
        await pilot.press("c")  # the confirmation quotes the job's name and user
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await _shown(pilot, "Cancel job 7 ([/] x", "␛]52;c;")


class OutputBackend(HostileBackend):
    """A job whose output carries ATTACK (the job screen follows it)."""

    async def slurm_ops(self, name: str, **_: Any) -> Any:
        return "ops"


async def test_a_jobs_output_and_the_log_viewer_show_their_text_safely(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Follower:
        sandbox = True

        async def follow(self, job: Any, *, on_output: Any, on_state: Any) -> Any:
            on_output(f"line one\n{ATTACK}\nline three\n".encode())
            return JobInfo(id=job.id, state="COMPLETED", exit_code=0, sandbox=True)

    monkeypatch.setattr("npa_sop_tui.jobs.backend.job_backend", lambda ops: Follower())
    app = NpaSopApp(OutputBackend(), status_interval=60)
    async with app.run_test(size=(200, 40)) as pilot:
        app.push_screen(JobScreen("demo", None, job_id="7"))
        await wait_for(pilot, lambda: bool(app.screen.output))  # type: ignore[attr-defined]
        await pilot.pause()
        await _shown(pilot, "line one", *SEEN, "line three")
        app.push_screen(LogViewerScreen(f"log of {TITLE}", [("error", ATTACK)], None))
        await pilot.pause()
        await _shown(pilot, "log of ␛]0;owned␇", *SEEN)


async def test_deploy_diagnostics_errors_and_notices_show_outside_text_safely() -> None:
    from npa_sop_tui.tui.widgets.deploy.progress import DiagnosticsPanel, EventLog, log_lines

    class Panes(App[None]):
        def compose(self) -> ComposeResult:
            yield DiagnosticsPanel(id="d")
            yield EventLog(id="l")

    app = Panes()
    async with app.run_test(size=(200, 40)) as pilot:
        events = [
            Diagnostic(
                ts=T0,
                operation_id="o",
                severity="error",
                summary=f"Error: {OSC52}",
                detail=f"  on main.tf line 1:\n{ATTACK}",
            ),
            LogLine(ts=T0, operation_id="o", stream="terraform", text=ATTACK),
        ]
        app.query_one(DiagnosticsPanel).add(events)
        app.query_one(EventLog).add_lines(log_lines(events))
        await pilot.pause()
        await _shown(pilot, *SEEN)

    npa = NpaSopApp(HostileBackend(), status_interval=60)
    async with npa.run_test(size=(160, 40)) as pilot:
        npa.show_error(OperationError(f"the cloud said: {ATTACK}", hint=TITLE))
        await pilot.pause()
        await _shown(pilot, *SEEN, "hint: ␛]0;owned␇")
        await pilot.press("escape")
        npa.notify(f"toast {OSC52}", title=TITLE)
        await pilot.pause()
        # what the toast shows (as text: markup off)
        (notice,) = [(n.message, n.title, n.markup) for n in npa._notifications]
        assert notice == ("toast ␛]52;c;ZWNobyBvd25lZA==␇", "␛]0;owned␇", False)


async def test_a_draft_named_with_markup_and_escapes_is_text_in_the_command_palette() -> None:
    """A draft's name is whatever its cluster.yaml says; the palette parses titles as
    markup: `[/]` must neither crash it nor style it, and no control reaches the screen."""
    from textual.fuzzy import Matcher

    class Drafted(HostileBackend):
        def list_clusters(self) -> list[ClusterRow]:
            return [ClusterRow(f"[/] x{TITLE}", "eu-north1", "draft", "not deployed")]

    app = NpaSopApp(Drafted(), status_interval=60)
    async with app.run_test(size=(120, 30)) as pilot:
        home = app.screen
        await wait_for(pilot, lambda: bool(home.selected))  # type: ignore[attr-defined]
        titles = [c.title for c in home.palette_commands()]  # type: ignore[attr-defined]
        assert titles and all(Matcher("deploy").highlight(t) is not None for t in titles)
        shown = [Content.from_markup(t).plain for t in titles]
        assert "Deploy [/] x␛]0;owned␇" in shown
        await pilot.press("ctrl+p")
        await pilot.press(*"deploy")
        await wait_for(pilot, lambda: "Deploy [/] x␛]0;owned␇" in screen_text(app), timeout=20)
        await _shown(pilot)


async def test_a_template_summary_with_markup_opens_the_run_dialog(npa_home: Any) -> None:
    folder = npa_home / "job-templates"
    folder.mkdir()
    (folder / "evil.sh").write_text(f"#!/bin/sh\n# npa-summary: [/] x {OSC52}\nhostname\n")
    app = NpaSopApp(HostileBackend(), status_interval=60)
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(RunDialog(template="evil"))
        await pilot.pause()
        await _shown(pilot, "evil: [/] x ␛]52;c;")


async def test_the_control_net_drops_what_a_view_forgot() -> None:
    """A control that reaches a drawn line by a path without `safe_text` never reaches the
    terminal: the app's line filter takes it out, and every width stays as laid out."""

    class Forgetful(Screen[None]):
        def compose(self) -> ComposeResult:
            yield Static(Content(f"raw {OSC52}{TITLE} end"), id="raw")

    app = NpaSopApp(FixedBackend(), status_interval=60)
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(Forgetful())
        await pilot.pause()
        text = screen_text(app)
        assert_inert(text)
        assert "raw ]52;c;ZWNobyBvd25lZA==]0;owned end" in text
    net = ControlNet()
    kept = [Segment("ok"), Segment("\x1b[2J", None, [])]  # a Segment that IS a control: kept
    assert net.apply(kept, None) is kept  # type: ignore[arg-type]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(hostile_text())
def test_any_text_in_any_cluster_reported_field_is_inert_on_the_dashboard(text: str) -> None:
    async def run() -> None:
        app = NpaSopApp(HostileBackend(text), status_interval=60)
        async with app.run_test(size=(200, 60)) as pilot:
            app.show_status("demo")
            await wait_for(pilot, lambda: getattr(app.screen, "status", None) is not None)
            await pilot.pause()
            assert_inert(screen_text(app))
            assert not app.unexpected_errors

    asyncio.run(run())
