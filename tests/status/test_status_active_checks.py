"""ActiveChecks in live status: read through the official client from the fake API server,
what a running apply waits on, failures as hints, per-node results from drain reasons."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from npa_sop_tui import inventory
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
        "spec": {"name": name, "checkType": kind, "runAfterCreation": True, **spec},
        "status": status,
    }


async def test_active_checks_waiting_and_failed(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    srv = fake_kube
    srv.add(
        "activechecks",
        check("ssh-check", "k8sJob", {"k8sJobsStatus": {"lastJobStatus": "Complete"}}),
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
        "all-reduce-perf-nccl-with-ib; drained nodes name it in their reason"
    )
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
