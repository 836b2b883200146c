"""The dashboard against the fake API server and the local Slurm over real SSH.

Needs the substrate (`bash scripts/substrate.sh start`: slurmctld/slurmd/munge and sshd on
127.0.0.1:2222). The login node's host key is unknown to the test's NPA_HOME, so the
consent modal must appear; accepting it lets the real `sinfo` rows in.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.screens.modals import HostKeyModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import Backend
from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable

from testkit.substrate import Substrate
from testkit.tui import click, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.tui]


class LocalSlurmBackend(Backend):
    def __init__(self, kubeconfig: Path, lab: Path) -> None:
        super().__init__()
        self.kubeconfig = kubeconfig
        self.lab = lab

    def status_settings(self, name: str, *, interval: float) -> Any:
        settings = super().status_settings(name, interval=interval)
        return settings.model_copy(
            update={
                "kubeconfig": self.kubeconfig,
                "login_host": "127.0.0.1",
                "login_port": 2222,
                "login_user": "slurmops",
                "login_source": "config",
                "identity_file": self.lab / "client_ed25519",
                "watch_timeout": 5,
            }
        )


async def test_dashboard_with_local_slurm_asks_for_the_host_key_then_shows_sinfo_rows(
    substrate: Substrate, tmp_path: Path
) -> None:
    expected = subprocess.run(
        ["sinfo", "-h", "-N", "-o", "%N"], capture_output=True, text=True, check=True
    ).stdout.split()
    with FakeKubeServer(bookmark_interval=0.5) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig", "nebius-local-slurm")
        app = NpaSopApp(LocalSlurmBackend(kubeconfig, substrate.lab), status_interval=2.0)
        async with app.run_test(size=(120, 40)) as pilot:
            app.show_status("local")
            await wait_for(pilot, lambda: isinstance(app.screen, HostKeyModal), timeout=30)
            await click(pilot, "#yes")
            await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
            screen = app.screen
            await wait_for(
                pilot,
                lambda: screen.status is not None and screen.status.slurm is not None,
                timeout=30,
            )
            nodes = screen.query_one("#slurm-nodes", SlurmNodesTable)
            shown = sorted(str(nodes.get_row_at(i)[0]) for i in range(nodes.row_count))
            assert shown == sorted(set(expected))
            assert screen.query_one("#partitions", DataTable).row_count >= 1
            assert screen.status.freshness["slurm"].state == "fresh"
