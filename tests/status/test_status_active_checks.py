"""ActiveChecks in live status: read through the official client from the fake API server,
what a running apply waits on, failures as hints, per-node results from drain reasons."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.home import inventory
from npa_sop_tui.sandbox.active_checks import k8s_job_status
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.status.active_checks import results_by_node
from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.status.render import render_status
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher
from npa_sop_tui.tui.widgets.status.panels import checks_lines

from testkit.kube import CONTEXT
from testkit.wait import within


def check(name: str, kind: str, status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "slurm.nebius.ai/v1alpha1",
        "kind": "ActiveCheck",
        "metadata": {"name": name, "namespace": "soperator"},
        "spec": {
            "name": name,
            "slurmClusterRefName": "soperator",
            "checkType": kind,
            "runAfterCreation": True,
            **spec,
        },
        "status": status,
    }


async def test_active_checks_waiting_and_failed(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    srv = fake_kube
    srv.add(
        "activechecks",
        check("ssh-check", "k8sJob", k8s_job_status("ssh-check")),
    )
    srv.add(
        "activechecks",
        check("all-reduce-perf-nccl-with-ib", "slurmJob",
              {"slurmJobsStatus": {"lastRunStatus": "InProgress", "lastRunId": "12"}}),
    )  # fmt: skip
    srv.add(
        "activechecks",
        check("ib-gpu-perf", "slurmJob", {"slurmJobsStatus": {"lastRunStatus": "InProgress"}},
              failureReactions={"commentSlurmNode": {"commentPrefix": "x"}}),
    )  # fmt: skip
    entry = inventory.InventoryEntry(name="demo", kube_context=CONTEXT, validation={
        "status": "ready", "gpu_creation_checks": [{"pool": "gpu", "status": "PASS",
                                                    "nodes": ["gpu-0"]}]})  # fmt: skip
    inventory.save(entry)
    settings = StatusSettings(
        name="demo", kubeconfig=kubeconfig, slurm_enabled=False, kube_coalesce=0.05, watch_timeout=2
    )
    seen_waiting: list[list[str]] = []
    snap = None
    # One stream of snapshots: patch once all three checks are seen, stop at the failure.
    async with StatusWatcher(settings) as watcher, asyncio.timeout(60):
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            kube = snap.kube
            if kube is None or len(kube.active_checks) < 3:
                continue
            if not seen_waiting:
                assert kube.active_checks_crd
                assert snap.gpu_validation is not None
                assert snap.gpu_validation["status"] == "ready"
                seen_waiting.append(list(kube.waiting_on))
                srv.patch(
                    "activechecks",
                    "all-reduce-perf-nccl-with-ib",
                    lambda o: o["status"]["slurmJobsStatus"].update(
                        lastRunStatus="Failed",
                        lastRunFailJobsAndReasons=[
                            {"jobID": "12", "reason": "NCCL bus bandwidth low"}
                        ],
                    ),
                    namespace="soperator",
                )
            elif kube.active_checks[0].status == "Failed":
                break
    # the comment-only check does not hold the apply; the finished one neither
    assert seen_waiting == [["all-reduce-perf-nccl-with-ib"]]
    assert snap is not None
    assert snap.kube is not None and snap.kube.waiting_on == []
    (hint,) = [h for h in snap.verdict.hints if h.code == "active-check-failed"]
    assert "job 12: NCCL bus bandwidth low" in hint.message and hint.severity == "error"
    assert hint.action == (
        f"kubectl --context {CONTEXT} -n soperator describe activecheck "
        "all-reduce-perf-nccl-with-ib; a GPU check: the nodes it drained have a GPU problem; "
        "drained nodes name it in their reason"
    )
    assert snap.kube.wait_job == "wait-for-active-checks"  # 4.1.x's name (no operator read)
    from rich.console import Console

    console = Console(width=160, record=True)
    console.print(render_status(snap))
    text = console.export_text()
    assert "Active checks" in text and "GPU creation check (last deploy): ready" in text


def test_per_node_results_from_drain_reasons() -> None:
    nodes = [
        SlurmNode(name="w-0", state="idle", display="drained", flags=["DRAIN"],
                  reason="[node_problem] cuda-samples: vectorAdd failed [hc_program]"),
        SlurmNode(name="w-1", state="idle", display="idle"),
        SlurmNode(name="w-2", state="idle", display="drained", flags=["DRAIN"],
                  reason="[node_problem] gpu-fryer: too hot"),
    ]  # fmt: skip
    assert results_by_node("cuda-samples", nodes) == {
        "w-0": "[node_problem] cuda-samples: vectorAdd failed [hc_program]"
    }


def test_dashboard_lines_are_empty_without_checks() -> None:
    from npa_sop_tui.status.model import ClusterStatus

    assert checks_lines(ClusterStatus(name="x", context="c", taken_at=0)) == []


def info(kind: str, status: str | None, **spec: Any) -> Any:
    from npa_sop_tui.status.active_checks import parse_active_checks

    key = "k8sJobsStatus" if kind == "k8sJob" else "slurmJobsStatus"
    field = "lastJobStatus" if kind == "k8sJob" else "lastRunStatus"
    body = {key: {field: status, "lastJobName": "c-1"}} if status is not None else {}
    (parsed,) = parse_active_checks([check("c", kind, body, **spec)])
    return parsed


@pytest.mark.parametrize(
    ("kind", "status", "expected"),
    [
        ("k8sJob", "Complete", "done"),
        ("k8sJob", "Failed", "failed"),
        ("k8sJob", None, "waiting"),  # empty counts as Pending
        ("k8sJob", "Active", "waiting"),
        ("slurmJob", "Complete", "done"),
        ("slurmJob", "Cancelled", "done"),
        ("slurmJob", "Failed", "failed"),
        ("slurmJob", "Degraded", "failed"),
        ("slurmJob", "Error", "waiting"),  # the wait Job keeps waiting on an error
        ("slurmJob", "Skipped", "waiting"),  # unknown to the 4.1.x wait Job
        ("slurmJob", "InProgress", "waiting"),
    ],
)
def test_wait_state_as_the_wait_job_decides(kind: str, status: str | None, expected: str) -> None:
    from npa_sop_tui.status.active_checks import wait_state

    assert wait_state(info(kind, status)) == expected


def test_ignored_checks_as_the_wait_job_selects() -> None:
    from npa_sop_tui.status.active_checks import hints, wait_state

    comment = {"commentSlurmNode": {"commentPrefix": "x"}}
    both = {**comment, "drainSlurmNode": {"drainReasonPrefix": "[node_problem]"}}
    assert wait_state(info("slurmJob", None, failureReactions=comment)) == "ignored"
    assert wait_state(info("slurmJob", None, failureReactions=both)) == "ignored"
    assert wait_state(info("k8sJob", None, runAfterCreation=False)) == "ignored"
    drain = {"drainSlurmNode": {"drainReasonPrefix": "[node_problem]"}}
    assert wait_state(info("slurmJob", None, failureReactions=drain)) == "waiting"
    (errored,) = hints([info("slurmJob", "Error")], "ctx")
    assert errored.code == "active-check-error" and "keeps waiting" in errored.message
    (failed,) = hints([info("slurmJob", "Degraded")], "ctx")
    assert failed.code == "active-check-failed" and failed.severity == "error"


def test_an_old_failed_check_pod_does_not_degrade_the_cluster() -> None:
    from npa_sop_tui.sandbox.fake_kube_objects import (
        make_login_service,
        make_nodeset,
        make_pod,
        make_slurmcluster,
    )  # fmt: skip
    from npa_sop_tui.status.kube import build_kube_state
    from npa_sop_tui.status.model import Freshness
    from npa_sop_tui.status.verdict import compute_verdict

    old = make_pod("ssh-check-27-abcde", "soperatorchecks", phase="Failed", ready=False)
    old["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "ssh-check-27"
    stray = make_pod("stray", "other", phase="Failed", ready=False)

    def verdict(pods: list[dict[str, Any]]) -> str:
        kube = build_kube_state(
            CONTEXT, nodes=[], pods=pods, services=[make_login_service("203.0.113.7")],
            slurmclusters=[make_slurmcluster()], slurmclusters_missing=False,
            nodesets=[make_nodeset("w", replicas=1, ready=1)], nodesets_missing=False,
        )  # fmt: skip
        fresh = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="disabled")}
        return compute_verdict(kube=kube, slurm=None, freshness=fresh).state

    assert verdict([old]) == "ready"  # the check's latest run is what counts
    assert verdict([stray]) == "degraded"


MAIN = "5.0.0-main-c238d993"


def check_5_0(name: str, kind: str, status: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """An ActiveCheck as Soperator 5.0's activechecks chart renders it (values.yaml at
    c238d993): every check names its cluster in slurmClusterRefName."""
    return check(name, kind, status, **spec)


async def test_a_soperator_5_0_cluster_is_read_with_its_own_wait_rules(tmp_path: Path) -> None:
    """A 5.0 SlurmCluster, NodeSet and ActiveCheck set, stored by a fake API server that
    checks them against the 5.0 CRDs and read through the official client: the operator's
    version picks 5.0's wait Job (named after the cluster, `Skipped` done, other clusters'
    checks not waited on) and `gpu-checks` is read as the GPU check."""
    from npa_sop_tui.sandbox.fake_kube_objects import (
        make_login_service,
        make_node,
        make_nodeset,
        make_operator_pod,
        make_slurmcluster,
    )  # fmt: skip

    drain = {"drainSlurmNode": {"drainReasonPrefix": "[node_problem]"}}
    with FakeKubeServer(bookmark_interval=0.2, crd_release=MAIN) as srv:
        kubeconfig = srv.write_kubeconfig(tmp_path / "kubeconfig", CONTEXT)
        srv.add("pods", make_operator_pod(version="5.0.0"))
        srv.add("nodes", make_node("gpu-0", pool="gpu", gpu=True))
        srv.add("slurmclusters", make_slurmcluster())
        nodeset = make_nodeset("gpu", replicas=1, ready=1)
        nodeset["spec"]["updateStrategy"] = "slurmAwareRollingUpdate"
        srv.add("nodesets", nodeset)
        srv.add("services", make_login_service("203.0.113.7"))
        slurm_status = {"slurmJobsStatus": {"lastRunStatus": "Skipped", "lastRunId": "3"}}
        in_progress = {"slurmJobsStatus": {"lastRunStatus": "InProgress", "lastRunId": "4"}}
        checks_5_0 = [
            check_5_0("gpu-checks", "slurmJob", slurm_status, failureReactions=drain,
                      schedule="0 0,12 * * *"),
            check_5_0("ensure-healthy-nodes", "slurmJob", in_progress),
            check_5_0("manage-jail-state", "k8sJob", k8s_job_status("manage-jail-state")),
        ]  # fmt: skip
        for obj in checks_5_0:
            srv.add("activechecks", obj)
        other = check_5_0("wait-for-topology", "k8sJob", {})
        other["spec"]["slurmClusterRefName"] = "another-cluster"
        srv.add("activechecks", other)
        settings = StatusSettings(
            name="demo", kubeconfig=kubeconfig, slurm_enabled=False, kube_coalesce=0.05,
            watch_timeout=2,
        )  # fmt: skip
        async with StatusWatcher(settings) as watcher:
            async for snap in within(watcher.snapshots(), what="status snapshots"):
                kube = snap.kube
                if kube is not None and len(kube.active_checks) == 4 and kube.operator:
                    break
    assert kube.operator is not None and kube.operator.version == "5.0.0"
    assert kube.wait_job == "soperator-wait-for-active-checks"
    assert kube.waiting_on == ["ensure-healthy-nodes"]  # Skipped is done; another cluster's
    checks = {c.name: c for c in kube.active_checks}
    assert checks["gpu-checks"].gpu and checks["gpu-checks"].status == "Skipped"
    assert checks["wait-for-topology"].cluster_ref == "another-cluster"
    assert not checks["ensure-healthy-nodes"].gpu
    (nodeset_info,) = kube.nodesets
    assert (nodeset_info.name, nodeset_info.phase, nodeset_info.ready) == ("gpu", "Ready", 1)
    assert kube.slurm_cluster is not None and kube.slurm_cluster.phase == "Available"
    assert snap.verdict.state == "ready", snap.verdict.hints
