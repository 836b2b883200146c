"""The simulated cluster's scenarios, read back the way `status` reads a real cluster: through
the official kubernetes client, the collector's informers (the operator's own namespace
included) and the verdict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from npa_sop_tui.sandbox.cluster import SimulatedCluster
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.spec.model import spec_from_mapping
from npa_sop_tui.status.model import ClusterStatus, Freshness, KubeState
from npa_sop_tui.status.verdict import compute_verdict
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher

from testkit.wait import within

SPEC = spec_from_mapping(
    {"apiVersion": "npa.soperator/v0.0.1", "name": "demo",
     "workers": [{"name": "cpu", "size": 2}], "slurm_operator_version": "4.1.6"}
)  # fmt: skip
DEPLOYED = [
    "module.slurm.null_resource.release_operator",
    "module.slurm.null_resource.release_slurm_cluster",
    'module.slurm.null_resource.release_nodeset["cpu"]',
    "module.slurm.null_resource.wait_for_slurm_cluster",
    "module.slurm.null_resource.release_activechecks",
    "module.login_script.null_resource.lb_service_ip",
]


async def kube_snapshot(kubeconfig: Path, until: Callable[[ClusterStatus], bool]) -> KubeState:
    """The Kubernetes part of the collector's first snapshot for which `until` holds."""
    settings = StatusSettings(
        name="demo", kubeconfig=kubeconfig, slurm_enabled=False, kube_coalesce=0.05,
        watch_timeout=2,
    )  # fmt: skip
    async with StatusWatcher(settings) as watcher:
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            if snap.kube is not None and until(snap):
                return snap.kube
    raise AssertionError("no snapshot")


def hinted(code: str) -> Callable[[ClusterStatus], bool]:
    return lambda snap: code in {h.code for h in snap.verdict.hints}


async def test_an_operator_in_crashloop_makes_the_sandbox_cluster_degraded(
    fake_kube: FakeKubeServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "operator-crashloop")
    SimulatedCluster("demo", SPEC, fake_kube).restore(DEPLOYED)
    kube = await kube_snapshot(kubeconfig, hinted("operator-unhealthy"))
    assert kube.operator is not None
    assert (kube.operator.namespace, kube.operator.version) == ("soperator-system", "4.1.6")
    assert [p.waiting_reason for p in kube.operator.pods] == ["CrashLoopBackOff"]
    verdict = compute_verdict(kube=kube, slurm=None, freshness={"kube": Freshness(state="fresh")})
    assert verdict.state == "degraded"
    (hint,) = [h for h in verdict.hints if h.code == "operator-unhealthy"]
    assert hint.message.startswith("the Soperator operator 4.1.6 is not running: pod ")
    assert "-n soperator-system logs soperator-controller-manager-0 -c manager" in hint.action


async def test_a_healthy_sandbox_operator_is_read_with_its_version(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    SimulatedCluster("demo", SPEC.model_copy(update={"slurm_operator_version": "4.1.13"}),
                     fake_kube).restore(DEPLOYED)  # fmt: skip
    kube = await kube_snapshot(kubeconfig, lambda snap: snap.kube.operator is not None)
    assert kube.operator is not None and kube.operator.version == "4.1.13"
    assert [p.ready for p in kube.operator.pods] == [True]
    verdict = compute_verdict(kube=kube, slurm=None, freshness={"kube": Freshness(state="fresh")})
    assert "operator-unhealthy" not in {h.code for h in verdict.hints}


async def test_a_nodeset_in_maintenance_says_so(
    fake_kube: FakeKubeServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_SANDBOX_SCENARIO", "nodeset-maintenance")
    SimulatedCluster("demo", SPEC, fake_kube).restore(DEPLOYED)
    kube = await kube_snapshot(kubeconfig, hinted("nodeset-maintenance"))
    (nodeset,) = kube.nodesets
    assert (nodeset.name, nodeset.phase) == ("cpu", "Terminating")
    verdict = compute_verdict(kube=kube, slurm=None, freshness={"kube": Freshness(state="fresh")})
    (hint,) = [h for h in verdict.hints if h.code == "nodeset-maintenance"]
    assert hint.message == (
        "NodeSet cpu is in maintenance: its workers are stopped (Workers are disabled), 0/2 running"
    )
    assert "spec.maintenance back to `none`" in hint.action
