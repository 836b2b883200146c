"""The app and the CLI tell one story about the same sandbox cluster: the dashboard's verdict
is `status --output json`'s, and the jobs screen lists the jobs `jobs --output json` lists
(same IDs, names, states). The cluster is deployed by the CLI (real Terraform on the
stand-in recipe); the app reads it through the sandbox backend the `--sandbox` app uses."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from npa_sop_tui.screens.jobs import JobsScreen, JobsTable
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import sandbox_backend

from testkit.sandbox_cli import cli_json, deploy_in_sandbox
from testkit.tui import home_loaded, wait_for

pytestmark = [pytest.mark.tui, pytest.mark.terraform, pytest.mark.slow]

SPEC = "apiVersion: npa.soperator/v0.0.1\nname: par\nworkers:\n  - name: cpu\n    size: 2\n"


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    return cli_json(capsys, "par", *args)[1]


def test_app_and_cli_agree_on_verdict_and_jobs(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)
    # a state worth comparing: a drained node (a hint) and a job in the queue
    _cli(capsys, "drain", "--node", "cpu-1", "--reason", "parity check", "--yes")
    submitted = _cli(capsys, "run", "--detach", "-J", "parity", "--", "sleep 300")
    status = _cli(capsys, "status")
    # compare a settled queue: the job leaves PENDING on its own, so both sides read it
    # once it runs (it sleeps for minutes)
    deadline = time.monotonic() + 60
    while True:
        jobs = _cli(capsys, "jobs")
        cli_jobs = {(j["id"], j["name"], j["state"]) for j in jobs["jobs"]}
        if (submitted["job_id"], "parity", "RUNNING") in cli_jobs:
            break
        assert time.monotonic() < deadline, f"the job never ran: {cli_jobs}"
        time.sleep(0.5)

    asyncio.run(_app_agrees(status, jobs["jobs"], cli_jobs))


async def _app_agrees(status: dict, jobs: list[dict], cli_jobs: set[tuple[str, str, str]]) -> None:
    app = NpaSopApp(sandbox_backend(sleep_seconds=0))
    async with app.run_test(size=(80, 24)) as pilot:
        await home_loaded(pilot)
        app.show_status("par")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen
        assert isinstance(screen, StatusScreen)
        await wait_for(pilot, lambda: screen.status is not None and screen.status.slurm)
        verdict = screen.status.verdict
        assert verdict.state == status["verdict"]["state"]
        assert verdict.summary == status["verdict"]["summary"]
        assert [h.message for h in verdict.hints] == [
            h["message"] for h in status["verdict"]["hints"]
        ]
        shown = str(screen.query_one("#verdict").render())
        assert status["verdict"]["state"].upper() in shown  # what the user reads, too

        await app.push_screen(JobsScreen("par", interval=60))
        table = app.screen.query_one(JobsTable)
        await wait_for(pilot, lambda: table.row_count == len(jobs))
        app_jobs = {
            (str(r[0]), str(r[2]), str(r[1]))
            for r in (table.get_row_at(i) for i in range(table.row_count))
        }
        assert app_jobs == cli_jobs
