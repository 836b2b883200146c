"""The app's home screen lists the team's clusters from the bucket, with who ran what."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import DataTable

from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.screens.home import HomeScreen
from npa_sop_tui.state.stores import default_store
from npa_sop_tui.tui.app import NpaSopApp

from testkit.tui import wait_for

pytestmark = pytest.mark.tui


async def test_home_shows_the_buckets_clusters_and_who_ran_the_last_operation(
    bucket_env: dict[str, str], npa_home: Path
) -> None:
    # Recorded by a teammate's machine: nothing of it is in this npa home.
    entry = InventoryEntry(name="shared", region="eu-north1", kube_context="nebius-shared-slurm")
    entry.state = "deployed"
    entry.record(
        OperationRecord(
            id="deploy-x",
            kind="deploy",
            started=time.time(),
            ended=time.time(),
            result="ok",
            user="ann",
            host="ann-laptop",
        )
    )
    default_store().save(entry)
    assert not (npa_home / "soperator").exists()

    app = NpaSopApp()
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, HomeScreen))
        table = app.screen.query_one("#clusters", DataTable)
        await wait_for(pilot, lambda: table.row_count == 1)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == "shared" and "deployed" in row[1]  # name and state come first
        assert row[3].startswith("deploy ok") and row[3].endswith("by ann@ann-laptop")
