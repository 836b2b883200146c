"""Fixed data for the pixels and the fuzz test: a backend that answers the same every time.

No clocks, no running durations: snapshots stay repeatable. The flows themselves are tested
against the real library in the other test modules.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from npa_sop_tui.events import (
    EventSink,
    LogLine,
    PhaseChanged,
    PlanSummary,
    ResourceFinished,
    ResourceStarted,
)
from npa_sop_tui.status.model import (
    ClusterStatus,
    ComponentPods,
    Condition,
    Freshness,
    Hint,
    KubeState,
    NodeGroup,
    SlurmClusterInfo,
    SlurmNode,
    SlurmPartition,
    SlurmState,
    Verdict,
)
from npa_sop_tui.tui.backend import Backend, ClusterRow

T0 = 1_800_000_000.0
OP = "deploy-snapshot"
ADDRS = [
    "module.k8s.null_resource.cluster",
    "module.k8s.null_resource.node_group_system",
    'module.k8s.null_resource.worker_v2["cpu-0"]',
    "module.slurm.null_resource.flux",
    "module.slurm.null_resource.release_operator",
]


def _status() -> ClusterStatus:
    nodes = [
        SlurmNode(
            name="cpu-0",
            state="idle",
            display="idle",
            partitions=["main"],
            cpus=8,
            cpus_allocated=0,
            memory_mb=32768,
        ),
        SlurmNode(
            name="cpu-1",
            state="drained",
            flags=["DRAIN"],
            display="drained",
            partitions=["main"],
            cpus=8,
            cpus_allocated=0,
            memory_mb=32768,
            reason="[HC] disk check failed",
        ),
    ]
    return ClusterStatus(
        name="demo",
        context="nebius-demo-slurm",
        taken_at=T0,
        kube=KubeState(
            context="nebius-demo-slurm",
            node_groups=[
                NodeGroup(name="cpu", role="worker", ready=2, total=2),
                NodeGroup(name="system", role="system", ready=3, total=3),
            ],
            components=[
                ComponentPods(component="controller", ready=1, total=1),
                ComponentPods(component="worker", ready=2, total=2),
            ],
            slurm_cluster=SlurmClusterInfo(
                name="soperator",
                phase="Available",
                conditions=[Condition(type="ControllersAvailable", status="True")],
            ),
            slurm_cluster_crd=True,
            login_service=True,
            login_ip="203.0.113.7",
        ),
        slurm=SlurmState(
            host="203.0.113.7",
            source_format="delimited",
            nodes=nodes,
            partitions=[
                SlurmPartition(
                    name="main",
                    default=True,
                    available="up",
                    nodes_total=2,
                    nodes_idle=1,
                    nodes_other=1,
                )
            ],
        ),
        freshness={
            "kube": Freshness(state="fresh"),
            "slurm": Freshness(state="stale", error="timeout"),
        },
        verdict=Verdict(
            state="degraded",
            summary="1 Slurm node drained",
            hints=[
                Hint(
                    code="node-drained",
                    severity="warning",
                    message="cpu-1 is drained",
                    action="after fixing, `scontrol update nodename=cpu-1 state=resume`",
                )
            ],
        ),
    )


class FixedBackend(Backend):
    """Fixed answers for the pixels; the real catalog and spec checks for the wizard."""

    def has_cloud_identity(self) -> bool:
        return False

    def list_clusters(self) -> list[ClusterRow]:
        return [
            ClusterRow("demo", "eu-north1", "deployed", "deploy ok 2026-11-30 10:00"),
            ClusterRow("train", "us-central1", "failed", "deploy failed 2026-11-29 18:12"),
        ]

    async def plan(self, spec: Any, sink: EventSink, *, allow_unknown: bool = False) -> PlanSummary:
        return PlanSummary(ts=T0, operation_id=OP, phase="plan", add=len(ADDRS), change=0, remove=0)

    async def deploy(
        self, spec: Any, sink: EventSink, *, allow_destructive: bool, allow_unknown: bool = False
    ) -> Any:
        label = "Deploying Slurm and the rest"
        sink(PhaseChanged(ts=T0, operation_id=OP, phase="apply:full", label=label))
        for i, addr in enumerate(ADDRS):
            module = addr.split(".")[1]
            sink(
                ResourceStarted(
                    ts=T0 + i, operation_id=OP, addr=addr, module=module, action="create"
                )
            )
            sink(
                ResourceFinished(
                    ts=T0 + i + 3,
                    operation_id=OP,
                    addr=addr,
                    module=module,
                    action="create",
                    elapsed=3.0,
                )
            )
        text = "module.slurm.null_resource.flux: Creating..."
        sink(LogLine(ts=T0, operation_id=OP, stream="terraform", text=text))
        await asyncio.Event().wait()  # stays "applying" for the picture

    async def status_snapshots(self, name: str, **_: Any) -> AsyncIterator[Any]:
        yield _status()
        await asyncio.Event().wait()
