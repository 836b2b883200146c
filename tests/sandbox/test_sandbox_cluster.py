"""The simulated cluster's scenarios, read back the way `status` reads a real cluster: through
the official kubernetes client, the collector's informers (the operator's own namespace
included) and the verdict."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from npa_sop_tui.events import ResourceFinished
from npa_sop_tui.sandbox.cluster import SimulatedCluster
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping
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


# A pool resized in place scales its NodeSet and worker pods at once, as the operator would
# (the dashboard showed the old `nodeset 1/1` until the app restarted).


def _sized(size: int) -> SoperatorSpec:
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "rs",
         "workers": [{"name": "cpu", "size": size}]}
    )  # fmt: skip


def _finished(addr: str, action: str = "create") -> ResourceFinished:
    module = ".".join(addr.split(".")[:2])
    return ResourceFinished(operation_id="op", addr=addr, module=module, action=action, elapsed=1)


# The derived stand-in's names for the real recipe's resources (`<type>__<name>`, its
# in-place part `__update`): a resize updates the Flux config map the nodesets come from.
GROUP = "module.k8s.null_resource.nebius_mk8s_v1_node_group__worker_v2[0]"
BOOTSTRAP = "module.slurm.null_resource.helm_release__soperator_fluxcd_bootstrap"
NODESETS_CM = "module.slurm.null_resource.helm_release__soperator_fluxcd_cm__update"


def test_an_in_place_resize_scales_the_nodeset_and_its_pods() -> None:
    with FakeKubeServer() as kube:
        cluster = SimulatedCluster("rs", _sized(1), kube)
        for addr in (GROUP, BOOTSTRAP):
            cluster.on_event(_finished(addr))
        nodeset = kube.get("nodesets", "cpu")
        assert nodeset is not None and nodeset["spec"]["replicas"] == 1
        assert kube.get("pods", "cpu-0") and kube.get("pods", "cpu-1") is None

        cluster.spec = _sized(2)  # deploy of the resized spec: updates in place
        cluster.on_event(_finished(GROUP.replace("[0]", "__update[0]"), "update"))
        cluster.on_event(_finished(NODESETS_CM, "update"))
        nodeset = kube.get("nodesets", "cpu")
        assert nodeset is not None and nodeset["spec"]["replicas"] == 2
        assert nodeset["status"]["replicas"] == 2
        assert kube.get("pods", "cpu-1") is not None
        assert kube.get("nodes", "rs-cpu-1", namespace="") is not None
        # a worker pod runs on its own worker node (node detail named system-0 and the
        # system node group for it)
        assert kube.get("pods", "cpu-1")["spec"]["nodeName"] == "rs-cpu-1"  # type: ignore[index]

        cluster.spec = _sized(1)  # and back: the extra worker pod goes
        cluster.on_event(_finished(NODESETS_CM, "update"))
        assert kube.get("pods", "cpu-1") is None
        assert kube.get("nodesets", "cpu")["spec"]["replicas"] == 1  # type: ignore[index]
