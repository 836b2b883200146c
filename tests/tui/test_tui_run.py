"""The run dialog and the job screen at 80×24, on the sandbox's simulated Slurm whose jobs
are real local processes: a command's output, state and exit code; cancel; the output in the
log viewer; a template from a node; the first-job hint after READY."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Log, Select, Static

from npa_sop_tui.screens.job_screen import JobScreen
from npa_sop_tui.screens.log_viewer import LogViewerScreen
from npa_sop_tui.screens.modals import ConfirmModal
from npa_sop_tui.screens.run_dialog import RunDialog
from npa_sop_tui.status.model import Verdict
from npa_sop_tui.tui.app import NpaSopApp

from .test_tui_operator import OpsBackend, _dashboard
from testkit.tui import wait_for

pytestmark = pytest.mark.tui
SIZE = (80, 24)


def _state(screen: JobScreen) -> str:
    return str(screen.query_one("#job-state", Static).render())


async def _run(pilot: Any, app: NpaSopApp, command: str) -> JobScreen:
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
    dialog = app.screen
    dialog.query_one("#run-template", Select).value = "command"
    dialog.query_one("#run-command", Input).value = command
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(app.screen, JobScreen))
    return app.screen  # type: ignore[return-value]


async def test_run_a_command_see_output_state_exit_code_and_the_log(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=SIZE) as pilot:
        dashboard = await _dashboard(pilot, app)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
        dialog = app.screen
        dialog.query_one("#run-template", Select).value = "command"
        await pilot.press("ctrl+s")  # no command: refused beside the fields, dialog stays
        await wait_for(
            pilot, lambda: "type a command" in str(dialog.query_one("#run-error").render())
        )
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is dashboard)

        job = await _run(pilot, app, "echo hi; printf 'bad \\377 byte\\n'; exit 3")
        await wait_for(pilot, lambda: "FAILED" in _state(job) and "exit code 3" in _state(job))
        assert "SANDBOX" in _state(job)
        lines = list(job.query_one(Log).lines)
        assert lines[:2] == ["hi", "bad \ufffd byte"]
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, LogViewerScreen))
        viewer = app.screen
        assert [text for _, text in viewer.lines] == ["hi", "bad \ufffd byte"]  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is job)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is dashboard)


async def test_cancel_a_running_job(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=SIZE) as pilot:
        await _dashboard(pilot, app)
        job = await _run(pilot, app, "echo started; sleep 60")
        await wait_for(pilot, lambda: "RUNNING" in _state(job) and job.query_one(Log).lines)
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await pilot.press("y")
        await wait_for(pilot, lambda: app.screen is job and "CANCELLED" in _state(job))
        assert job.job is not None and job.job.done


class ReadyBackend(OpsBackend):
    """A cluster whose verdict is READY."""

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        async for status in super().status_snapshots(name):
            status.verdict = Verdict(state="ready", summary="all good", hints=[])
            yield status


def _hints(app: NpaSopApp) -> list[str]:
    return [n.message for n in app._notifications if n.title == "First job"]


def _records_read_in(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The threads that read jobs.json from now on."""
    import threading

    from npa_sop_tui.jobs import records

    threads: list[str] = []
    read = records._read

    def reading(path: Path) -> Any:
        threads.append(threading.current_thread().name)
        return read(path)

    monkeypatch.setattr(records, "_read", reading)
    return threads


async def test_first_job_hint_then_gpu_hello_preselected(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    threads = _records_read_in(monkeypatch)
    app = NpaSopApp(ReadyBackend())
    async with app.run_test(size=SIZE) as pilot:
        await _dashboard(pilot, app)
        await wait_for(pilot, lambda: bool(_hints(app)))  # READY and no job yet
        assert "gpu-hello" in _hints(app)[0]
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
        dialog = app.screen
        # the Select takes the offered template as its value when it mounts
        template = dialog.query_one("#run-template", Select)
        await wait_for(pilot, lambda: template.value == "gpu-hello")
        template.value = "cpu-hello"
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(app.screen, JobScreen))
        job = app.screen
        await wait_for(pilot, lambda: "COMPLETED" in _state(job))
        assert any("cpus=" in line for line in job.query_one(Log).lines)
    # the hint's and the dialog's reads of jobs.json ran in workers, not on the event loop
    assert len(threads) >= 2
    assert threading.main_thread().name not in threads


async def test_no_first_job_hint_once_npa_ran_a_job(
    npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.jobs import records
    from npa_sop_tui.jobs.model import JobInfo

    records.save("demo", JobInfo(id="1", state="COMPLETED", exit_code=0), command="true")
    app = NpaSopApp(ReadyBackend())
    async with app.run_test(size=SIZE) as pilot:
        dashboard = await _dashboard(pilot, app)
        await wait_for(pilot, lambda: dashboard._suggested)
        await pilot.pause(0.3)
        assert _hints(app) == []
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
        dialog = app.screen
        await wait_for(pilot, lambda: dialog.query_one("#run-template", Select).value == "command")


async def test_the_run_dialog_fits_80x24_with_its_run_button_in_view(npa_home: Path) -> None:
    app = NpaSopApp(OpsBackend())
    async with app.run_test(size=SIZE) as pilot:
        await _dashboard(pilot, app)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDialog))
        await pilot.pause()
        dialog = app.screen
        screen_region = dialog.region
        for selector in ("#run-yes", "#run-no", "#run-command", "#run-time", "#run-error"):
            widget = dialog.query_one(selector)
            # inside the screen, without scrolling anything
            assert screen_region.contains_region(widget.region), (selector, widget.region)
        run = dialog.query_one("#run-yes")
        assert run.region.height > 0 and run.region.bottom <= SIZE[1]
        assert all(w.scroll_y == 0 for w in run.ancestors_with_self if hasattr(w, "scroll_y"))
        await pilot.click("#run-yes")  # clickable where it is: no command yet -> refused
        await wait_for(
            pilot, lambda: "type a command" in str(dialog.query_one("#run-error").render())
        )
        assert dialog.query_one("#run-yes").region.bottom <= SIZE[1]
