"""The dashboard against the in-repo Kubernetes API server: right rows, staleness marked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.screens.modals import TextModal
from npa_sop_tui.screens.status import StatusScreen
from npa_sop_tui.tui.app import NpaSopApp
from npa_sop_tui.tui.backend import Backend
from npa_sop_tui.tui.widgets.status.panels import SlurmNodesTable

from testkit.tui import click, cut_off, wait_for

pytestmark = pytest.mark.tui


class FakeKubeBackend(Backend):
    """The real backend, pointed at a kubeconfig for the fake API server; Slurm off."""

    def __init__(self, kubeconfig: Path) -> None:
        super().__init__()
        self.kubeconfig = kubeconfig

    def status_settings(self, name: str, *, interval: float) -> Any:
        settings = super().status_settings(name, interval=interval)
        return settings.model_copy(
            update={"kubeconfig": self.kubeconfig, "slurm_enabled": False, "watch_timeout": 5}
        )


def _node(name: str, nodeset: str, ready: bool, pool: str | None = None) -> dict[str, Any]:
    labels = {"slurm.nebius.ai/nodeset": nodeset}
    if pool:
        labels["slurm.nebius.ai/nodeset-name"] = pool
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _pod(name: str, component: str, reason: str | None = None) -> dict[str, Any]:
    ready = reason is None
    status: dict[str, Any] = {
        "phase": "Running" if ready else "Pending",
        "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        "containerStatuses": [
            {
                "name": "c",
                "ready": ready,
                "restartCount": 0,
                "state": {"running": {}} if ready else {"waiting": {"reason": reason}},
            }
        ],
    }
    return {
        "metadata": {
            "name": name,
            "namespace": "soperator",
            "labels": {"app.kubernetes.io/component": component},
        },
        "status": status,
    }


async def test_dashboard_shows_rows_from_the_api_server_and_marks_staleness(
    tmp_path: Path,
) -> None:
    with FakeKubeServer(bookmark_interval=0.5) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig", "nebius-live-slurm")
        srv.add("nodes", _node("w-0", "worker", True, "gpu"))
        srv.add("nodes", _node("w-1", "worker", False, "gpu"))
        srv.add("nodes", _node("sys-0", "system", True))
        srv.add("pods", _pod("controller-0", "controller"))
        srv.add("pods", _pod("worker-gpu-0", "worker", reason="ImagePullBackOff"))
        srv.add(
            "services",
            {
                "metadata": {"name": "soperator-login-svc", "namespace": "soperator"},
                "spec": {"type": "LoadBalancer"},
                "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}},
            },
        )
        srv.add(
            "slurmclusters",
            {
                "metadata": {"name": "soperator", "namespace": "soperator"},
                "status": {
                    "phase": "Reconciling",
                    # a metav1.Condition has these fields required (the CRD's schema)
                    "conditions": [
                        {
                            "type": "ControllersAvailable",
                            "status": "True",
                            "reason": "Available",
                            "message": "",
                            "lastTransitionTime": "2026-12-01T10:00:00Z",
                        }
                    ],
                },
            },
        )
        app = NpaSopApp(FakeKubeBackend(kubeconfig), status_interval=1.0)
        async with app.run_test(size=(120, 40)) as pilot:
            app.show_status("live")
            await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
            screen = app.screen
            await wait_for(pilot, lambda: screen.status is not None, timeout=20)
            groups = screen.query_one("#node-groups", DataTable)
            rows = {
                str(groups.get_row_at(i)[0]): str(groups.get_row_at(i)[1])
                for i in range(groups.row_count)
            }
            assert rows == {"gpu": "1/2", "system": "1/1"}
            comps = screen.query_one("#components", DataTable)
            problems = {
                str(comps.get_row_at(i)[0]): str(comps.get_row_at(i)[2])
                for i in range(comps.row_count)
            }
            assert problems["worker"] == "ImagePullBackOff"
            assert "Reconciling" in str(screen.query_one("#slurm-cluster", Static).render())
            assert screen.status.verdict.state == "failed"  # an image pull error is fatal
            assert "fresh" in str(screen.query_one("#freshness", Static).render())
            assert app.kube_context == "nebius-live-slurm"

            # a change on the server shows up without a key press
            srv.upsert("nodes", _node("w-1", "worker", True, "gpu"))
            await wait_for(pilot, lambda: str(groups.get_row_at(0)[1]) == "2/2", timeout=20)

            # the login address gives the SSH command
            await pilot.press("l")
            await wait_for(pilot, lambda: isinstance(app.screen, TextModal))
            assert "root@203.0.113.7" in str(app.screen.query_one("#text-body", Static).render())
            await pilot.press("escape")

            # the API server starts failing: the data stays, marked STALE
            srv.fail_next("nodes", 1000, 500)
            srv.drop_watches()
            await wait_for(
                pilot,
                lambda: screen.status.freshness["kube"].state == "stale",
                timeout=30,
            )
            # the freshness line is redrawn by a 1 s ticker
            freshness = screen.query_one("#freshness", Static)
            await wait_for(pilot, lambda: "STALE" in str(freshness.render()), timeout=30)
            assert groups.row_count == 2  # last known rows are still shown


async def test_node_filter_and_sort_keys(tmp_path: Path) -> None:
    from npa_sop_tui.status.model import ClusterStatus, SlurmNode, SlurmState

    status = ClusterStatus(
        name="f",
        context="nebius-f-slurm",
        taken_at=0,
        slurm=SlurmState(
            host="h",
            source_format="delimited",
            nodes=[
                SlurmNode(name="gpu-10", state="idle", display="idle", cpus=8),
                SlurmNode(
                    name="gpu-2",
                    state="drained",
                    flags=["DRAIN"],
                    display="drained",
                    reason="[HC] gpu xid 79",
                    cpus=16,
                ),
                SlurmNode(name="cpu-1", state="down", display="down*", cpus=4),
            ],
        ),
    )

    class OneShot(Backend):
        async def status_snapshots(self, name: str, **_: Any):  # type: ignore[no-untyped-def]
            yield status

    app = NpaSopApp(OneShot())
    async with app.run_test(size=(120, 40)) as pilot:
        app.show_status("f")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.status is not None)
        nodes = screen.query_one("#slurm-nodes", SlurmNodesTable)
        names = lambda: [str(nodes.get_row_at(i)[0]) for i in range(nodes.row_count)]  # noqa: E731
        assert names() == ["cpu-1", "gpu-2", "gpu-10"]  # natural order
        assert "[HC] gpu xid 79" in [str(c) for c in nodes.get_row_at(1)]
        await pilot.press("o", "o", "o")  # name → state → partitions → cpus
        assert nodes.sort_column == "cpus"
        assert names() == ["cpu-1", "gpu-10", "gpu-2"]
        await pilot.press("slash")
        await pilot.press(*"drain")
        await pilot.pause()
        assert names() == ["gpu-2"]
        assert "1/3" in str(screen.query_one("#nodes-label").render())


async def test_host_key_consent_is_a_modal_and_only_an_explicit_yes_trusts() -> None:
    from npa_sop_tui.screens.modals import HostKeyModal

    class Idle(Backend):
        async def status_snapshots(self, name: str, **_: Any):  # type: ignore[no-untyped-def]
            if False:  # pragma: no cover - an empty stream
                yield None

    app = NpaSopApp(Idle())
    async with app.run_test(size=(100, 30)) as pilot:
        app.show_status("k")
        await wait_for(pilot, lambda: isinstance(app.screen, StatusScreen))
        screen = app.screen
        answers: list[bool] = []

        async def ask() -> None:
            answers.append(await screen.confirm_host_key("203.0.113.7", 22, "SHA256:abc"))

        task = asyncio.ensure_future(ask())
        await wait_for(pilot, lambda: isinstance(app.screen, HostKeyModal))
        assert "SHA256:abc" in str(app.screen.query_one("#host-key-text", Static).render())
        await pilot.press("escape")  # dismissing is a no
        await wait_for(pilot, lambda: bool(answers))
        task = asyncio.ensure_future(ask())
        await wait_for(pilot, lambda: isinstance(app.screen, HostKeyModal))
        await click(pilot, "#yes")
        await wait_for(pilot, lambda: len(answers) == 2)
        await task
    assert answers == [False, True]


async def test_dashboard_shows_the_clusters_cost(npa_home: Path) -> None:
    """Cost so far and per hour, from the same record the home screen's cost chart reads."""
    import time
    from decimal import Decimal

    from npa_sop_tui.history.cost import CostSoFar

    from .test_tui_operator import OpsBackend, _dashboard

    class Priced(OpsBackend):
        def cluster_costs(self, names: list[str]) -> dict[str, Any]:
            since = time.time() - 2 * 3600
            return {n: CostSoFar(Decimal("4.10"), "USD", since) for n in names}

    app = NpaSopApp(Priced())
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _dashboard(pilot, app)
        verdict = screen.query_one("#verdict")
        await wait_for(pilot, lambda: "so far" in str(verdict.render()))
        text = str(verdict.render())
        assert "$8.20 so far · $4.10/h" in text and "DEGRADED" in text
        assert not cut_off(screen)
