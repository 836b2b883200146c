"""The dashboard against the fake API server and the local Slurm over real SSH.

Runs on every Slurm lab of the substrate (`bash scripts/substrate.sh start`; the `gpu_lab`
fixture: Slurm 22.05 and 26.05, each with its login sshd). The login node's host key is
unknown to the test's NPA_HOME, so the consent modal must appear; accepting it lets the real
`sinfo` rows in.
"""

from __future__ import annotations

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

from testkit.gpu_lab import GpuLab
from testkit.tui import click, wait_for

pytestmark = [pytest.mark.slurm, pytest.mark.tui]


class LocalSlurmBackend(Backend):
    def __init__(self, kubeconfig: Path, lab: GpuLab) -> None:
        super().__init__()
        self.kubeconfig = kubeconfig
        self.lab = lab

    def status_settings(self, name: str, *, interval: float) -> Any:
        settings = super().status_settings(name, interval=interval)
        return settings.model_copy(
            update={
                "kubeconfig": self.kubeconfig,
                "login_host": self.lab.host,
                "login_port": self.lab.port,
                "login_user": self.lab.user,
                "login_source": "config",
                "identity_file": self.lab.key,
                "watch_timeout": 5,
            }
        )


async def test_dashboard_with_local_slurm_asks_for_the_host_key_then_shows_sinfo_rows(
    gpu_lab: GpuLab, tmp_path: Path
) -> None:
    expected = list(gpu_lab.nodes)
    with FakeKubeServer(bookmark_interval=0.5) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig", "nebius-local-slurm")
        app = NpaSopApp(LocalSlurmBackend(kubeconfig, gpu_lab), status_interval=2.0)
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
            # every partition `sinfo -a` lists: main, and hidden on 26.05 (as the recipe)
            assert screen.query_one("#partitions", DataTable).row_count == len(gpu_lab.partitions)
            assert screen.status.slurm.version.startswith(gpu_lab.slurm_version)
            assert screen.status.freshness["slurm"].state == "fresh"
