"""Verdict during bring-up: a Kubernetes node that is still joining while the cluster comes
up is progress, not damage; the same NotReady node on an Available cluster is degraded."""

from __future__ import annotations

from npa_sop_tui.sandbox.fake_kube_objects import (
    make_login_service,
    make_node,
    make_nodeset,
    make_slurmcluster,
)
from npa_sop_tui.status.kube import build_kube_state
from npa_sop_tui.status.model import Freshness
from npa_sop_tui.status.verdict import compute_verdict

FRESH = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="fresh")}


def _verdict(phase: str | None, *, condition: bool = False) -> tuple[str, list[str]]:
    nodes = [
        make_node("w0", pool="worker", gpu=True),
        make_node("w1", pool="worker", gpu=True, ready=False),
    ]
    if condition:
        nodes[0]["status"]["conditions"].append(
            {"type": "NebiusGPUError", "status": "True", "message": "xid 79"}
        )
    kube = build_kube_state(
        "nebius-demo-slurm",
        nodes=nodes,
        pods=[],
        services=[make_login_service("203.0.113.7")],
        slurmclusters=[make_slurmcluster(phase)],
        nodesets=[make_nodeset("worker", replicas=2, ready=1, phase="Provisioning")],
        slurmclusters_missing=False,
        nodesets_missing=False,
    )
    v = compute_verdict(kube=kube, slurm=None, freshness=FRESH)
    return v.state, [h.code for h in v.hints]


def test_joining_node_during_bring_up_is_progressing() -> None:
    state, codes = _verdict("Not available")
    assert state == "progressing"
    assert "k8s-nodes-not-ready" in codes  # still said, as a hint


def test_not_ready_node_on_available_cluster_is_degraded() -> None:
    state, codes = _verdict("Available")
    assert state == "degraded"
    assert "k8s-nodes-not-ready" in codes


def test_flagged_node_is_degraded_even_during_bring_up() -> None:
    state, codes = _verdict("Not available", condition=True)
    assert state == "degraded"
    assert "k8s-node-condition" in codes
