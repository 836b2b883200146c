"""Verdict and hints from hand-built Kubernetes/Slurm states (built with the same helpers the
fake API server serves, passed through the collector's own model builder)."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.sandbox.fake_kube_objects import (
    make_login_service,
    make_node,
    make_nodeset,
    make_pod,
    make_slurmcluster,
)
from npa_sop_tui.status.kube import build_kube_state
from npa_sop_tui.status.model import Freshness, KubeState, SlurmState, WorkerCapacity
from npa_sop_tui.status.slurm import parse_nodes_delimited
from npa_sop_tui.status.verdict import compute_verdict

FRESH = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="fresh")}


def kube(
    *,
    nodes: list[dict[str, Any]] | None = None,
    pods: list[dict[str, Any]] | None = None,
    cluster: dict[str, Any] | None = None,
    nodesets: list[dict[str, Any]] | None = None,
    login_ip: str | None = "203.0.113.7",
    crds: bool = True,
) -> KubeState:
    return build_kube_state(
        "nebius-demo-slurm",
        nodes=nodes if nodes is not None else [make_node("w0", pool="worker", gpu=True)],
        pods=pods or [],
        services=[make_login_service(login_ip)],
        slurmclusters=[cluster or make_slurmcluster()] if crds else [],
        slurmclusters_missing=not crds,
        nodesets=nodesets
        if nodesets is not None
        else [make_nodeset("worker", replicas=1, ready=1)],
        nodesets_missing=not crds,
    )


def slurm(lines: str) -> SlurmState:
    return SlurmState(host="h", source_format="delimited", nodes=parse_nodes_delimited(lines))


HEALTHY = "worker-0|main*|idle|0/128/0/128|1638400|gpu:h100:8|gpu|none\n"


def codes(v: Any) -> list[str]:
    return [h.code for h in v.hints]


def test_ready_when_everything_matches_soperators_rule() -> None:
    v = compute_verdict(kube=kube(), slurm=slurm(HEALTHY), freshness=FRESH)
    assert v.state == "ready", v
    assert v.hints == []
    assert "workers 1/1" in v.summary and "usable 1/1" in v.summary


def test_accounting_disabled_is_not_a_failure() -> None:
    cluster = make_slurmcluster(accounting=False)  # False, "Slurm accounting is disabled"
    (acct,) = [c for c in cluster["status"]["conditions"] if c["type"] == "AccountingAvailable"]
    assert (acct["status"], acct["message"]) == ("False", "Slurm accounting is disabled")
    assert (
        compute_verdict(kube=kube(cluster=cluster), slurm=slurm(HEALTHY), freshness=FRESH).state
        == "ready"
    )
    acct["message"] = "MariaDB is not ready"
    assert (
        compute_verdict(kube=kube(cluster=cluster), slurm=slurm(HEALTHY), freshness=FRESH).state
        == "progressing"
    )


def test_bring_up_stages_are_progressing() -> None:
    v = compute_verdict(kube=kube(crds=False, nodesets=[]), slurm=None, freshness=FRESH)
    assert v.state == "progressing" and "soperator-not-installed" in codes(v)
    pending = make_slurmcluster(
        "Pending",
        conditions={
            t: "Unknown"
            for t in (
                "CommonAvailable",
                "ControllersAvailable",
                "LoginAvailable",
                "AccountingAvailable",
                "SConfigControllerAvailable",
            )
        },
    )
    v = compute_verdict(kube=kube(cluster=pending), slurm=None, freshness=FRESH)
    assert v.state == "progressing" and "jail-populating" in codes(v)
    na = make_slurmcluster("Not available", conditions={"LoginAvailable": False})
    v = compute_verdict(kube=kube(cluster=na), slurm=None, freshness=FRESH)
    assert v.state == "progressing"
    assert any("LoginAvailable" in h.message for h in v.hints)


def test_workers_stuck_at_zero_nodes_names_the_capacity_mode() -> None:
    k = kube(
        nodes=[make_node("sys-0", nodeset="system")],
        nodesets=[make_nodeset("worker", replicas=2, ready=0, phase="Provisioning")],
        pods=[
            make_pod(
                "worker-0",
                "nodeset",
                phase="Pending",
                ready=False,
                unschedulable_message="0/1 nodes are available: 1 node(s) didn't "
                "match Pod's node affinity/selector",
            )
        ],
    )
    v = compute_verdict(
        kube=k,
        slurm=None,
        freshness=FRESH,
        workers=[WorkerCapacity(name="worker", capacity_mode="on-demand", node_groups=1, nodes=2)],
    )
    assert v.state == "progressing"
    hint = next(h for h in v.hints if h.code == "workers-no-nodes")
    assert hint.subject == "worker"
    assert "on-demand GPU quota is often 0" in hint.message
    assert "preemptible" in hint.action and "quota" in hint.action
    unsched = next(h for h in v.hints if h.code == "pods-unschedulable")
    assert "node affinity" in unsched.message and "describe pod worker-0" in unsched.action

    v = compute_verdict(
        kube=k,
        slurm=None,
        freshness=FRESH,
        workers=[
            WorkerCapacity(name="worker", capacity_mode="preemptible", node_groups=1, nodes=2)
        ],
    )
    assert (
        "preemptible GPU capacity"
        in next(h for h in v.hints if h.code == "workers-no-nodes").message
    )


def test_drained_by_health_check_is_degraded_with_resume_hint() -> None:
    lines = HEALTHY.replace("worker-0", "worker-1") + (
        "worker-0|main*|drained|0/0/128/128|1638400|gpu:h100:8|gpu|"
        "[node_problem] gpu_health_check: XID 79 [hc_program]\n"
    )
    k = kube(nodesets=[make_nodeset("worker", replicas=2, ready=2)])
    v = compute_verdict(kube=k, slurm=slurm(lines), freshness=FRESH)
    assert v.state == "degraded"
    hint = next(h for h in v.hints if h.code == "node-drained-health-check")
    assert "worker-0" in hint.message and "XID 79" in hint.message
    assert "activechecks" in hint.action
    assert "scontrol update nodename=worker-0 state=resume" in hint.action


def test_user_problem_drain_is_transient() -> None:
    lines = "worker-0|main*|drained|0/0/128/128|1|(null)|(null)|[user_problem] boot_disk_full\n"
    v = compute_verdict(kube=kube(), slurm=slurm(lines), freshness=FRESH)
    assert v.state == "progressing" and codes(v) == ["node-drained-maintenance"]


def test_not_responding_is_progressing_during_bring_up_and_degraded_after() -> None:
    lines = "worker-0|main*|down*|0/0/128/128|1|(null)|(null)|Not responding\n"
    provisioning = kube(
        nodesets=[make_nodeset("worker", replicas=1, ready=0, phase="Provisioning")]
    )
    assert (
        compute_verdict(kube=provisioning, slurm=slurm(lines), freshness=FRESH).state
        == "progressing"
    )
    v = compute_verdict(kube=kube(), slurm=slurm(lines), freshness=FRESH)
    assert v.state == "degraded" and "node-not-responding" in codes(v)


def test_image_pull_and_crashloop_fail() -> None:
    pods = [
        make_pod(
            "controller-0",
            "controller",
            phase="Pending",
            ready=False,
            waiting_reason="ImagePullBackOff",
            waiting_message="tag 9.9.9 not found",
        )
    ]
    v = compute_verdict(kube=kube(pods=pods), slurm=None, freshness=FRESH)
    assert v.state == "failed"
    hint = next(h for h in v.hints if h.code == "image-pull")
    assert "tag 9.9.9" in hint.message and "slurm_operator_version" in hint.action
    pods = [
        make_pod(
            "worker-0",
            "nodeset",
            phase="Pending",
            ready=False,
            init_waiting_reason="CrashLoopBackOff",
        )
    ]
    v = compute_verdict(kube=kube(pods=pods), slurm=None, freshness=FRESH)
    assert v.state == "failed" and "init-failing" in codes(v)
    assert "virtiofs" in v.hints[0].message


def test_login_without_address() -> None:
    v = compute_verdict(kube=kube(login_ip=None), slurm=None, freshness=FRESH)
    assert v.state == "progressing"
    hint = next(h for h in v.hints if h.code == "login-no-address")
    assert "public IP" in hint.action and "describe svc soperator-login-svc" in hint.action


def test_k8s_node_conditions_and_not_ready() -> None:
    nodes = [
        make_node("w0", pool="worker", ready=False, preemptible=True),
        make_node(
            "w1",
            pool="worker",
            extra_conditions=[
                {
                    "type": "HardwareIssuesSuspected",
                    "status": "True",
                    "reason": "x",
                    "message": "dcgm",
                }
            ],
        ),
    ]
    v = compute_verdict(kube=kube(nodes=nodes), slurm=None, freshness=FRESH)
    assert v.state == "degraded"
    ready_hint = next(h for h in v.hints if h.code == "k8s-nodes-not-ready")
    assert "1/2" in ready_hint.message and "preemptible" in ready_hint.message
    assert any(
        h.code == "k8s-node-condition" and "HardwareIssuesSuspected" in h.message for h in v.hints
    )


def test_worker_ready_in_kube_but_missing_in_slurm() -> None:
    k = kube(nodesets=[make_nodeset("worker", replicas=2, ready=2)])
    v = compute_verdict(kube=k, slurm=slurm(HEALTHY), freshness=FRESH)
    assert v.state == "degraded"
    hint = next(h for h in v.hints if h.code == "worker-missing-in-slurm")
    assert hint.subject == "worker-1" and "state=resume" in hint.action


def test_one_source_down_does_not_hide_the_other() -> None:
    fresh = {
        "kube": Freshness(state="error", error="connection refused"),
        "slurm": Freshness(state="fresh"),
    }
    v = compute_verdict(kube=None, slurm=slurm(HEALTHY), freshness=fresh)
    assert v.state == "ready" and codes(v) == ["kube-unreachable"]
    v = compute_verdict(
        kube=None,
        slurm=None,
        freshness={
            "kube": Freshness(state="error", error="a"),
            "slurm": Freshness(state="error", error="b"),
        },
    )
    assert v.state == "unknown" and codes(v) == ["kube-unreachable", "slurm-unreachable"]


def test_not_ready_while_slurm_is_still_pending() -> None:
    pending = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="pending")}
    assert compute_verdict(kube=kube(), slurm=None, freshness=pending).state == "progressing"
    off = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="disabled")}
    assert compute_verdict(kube=kube(), slurm=None, freshness=off).state == "ready"


def test_a_worker_pod_not_ready_is_sick_only_once_it_has_restarted() -> None:
    def degraded(restarts: int) -> list[str]:
        pod = make_pod("worker-0", "nodeset", ready=False, restarts=restarts, nodeset="worker")
        v = compute_verdict(kube=kube(pods=[pod]), slurm=slurm(HEALTHY), freshness=FRESH)
        return [h.message for h in v.hints if h.code == "nodeset-degraded"]

    assert degraded(0) == []  # still starting: progress, not damage
    assert degraded(1) == [
        "NodeSet worker is degraded: 1 worker pod(s) unhealthy (worker-0: not ready; 1 restarts)"
    ]


# The module's tables (mutmut never edits them): each entry pinned to what it does.


@pytest.mark.parametrize(
    ("reason", "code"),
    [
        ("ImagePullBackOff", "image-pull"),
        ("ErrImagePull", "image-pull"),
        ("InvalidImageName", "image-pull"),
        ("CreateContainerConfigError", "container-config"),
        ("CreateContainerError", "container-config"),
    ],
)
def test_each_waiting_reason_that_waiting_will_not_fix_fails_the_cluster(
    reason: str, code: str
) -> None:
    pod = make_pod("login-0", "login", phase="Pending", ready=False, waiting_reason=reason)
    v = compute_verdict(kube=kube(pods=[pod]), slurm=None, freshness=FRESH)
    assert v.state == "failed" and code in codes(v)


@pytest.mark.parametrize("reason", ["CrashLoopBackOff", "Error", "RunContainerError"])
@pytest.mark.parametrize(
    ("component", "restarts", "state"),
    [
        ("controller", 0, "failed"),
        ("login", 0, "failed"),
        ("accounting", 0, "failed"),
        ("sconfigcontroller", 0, "failed"),
        ("nodeset", 4, "degraded"),  # a worker crashing a few times: one sick NodeSet
        ("nodeset", 5, "failed"),  # five restarts: a crash loop waiting will not end
    ],
)
def test_a_crashing_pod_fails_the_control_plane_and_degrades_a_worker(
    reason: str, component: str, restarts: int, state: str
) -> None:
    name = "worker-0" if component == "nodeset" else f"{component}-0"
    pod = make_pod(
        name, component, ready=False, restarts=restarts, waiting_reason=reason,
        nodeset="worker" if component == "nodeset" else None,
    )  # fmt: skip
    v = compute_verdict(kube=kube(pods=[pod]), slurm=slurm(HEALTHY), freshness=FRESH)
    assert v.state == state, v
    assert ("crashloop" in codes(v)) == (state == "failed")


@pytest.mark.parametrize(
    "condition", ["ControllersAvailable", "LoginAvailable", "SConfigControllerAvailable"]
)
def test_each_required_cluster_condition_holds_the_cluster_back(condition: str) -> None:
    cluster = make_slurmcluster(conditions={condition: False})
    v = compute_verdict(kube=kube(cluster=cluster), slurm=slurm(HEALTHY), freshness=FRESH)
    assert v.state != "ready", v
    assert any(condition in h.message for h in v.hints), v.hints


def test_a_disabled_accounting_does_not_hide_a_jail_still_being_populated() -> None:
    # Pending with every availability condition still Unknown except accounting, which says
    # it is disabled from the start: the first reconcile is populating the jail.
    unknown: dict[str, bool | str] = {
        t: "Unknown"
        for t in ("ControllersAvailable", "LoginAvailable", "SConfigControllerAvailable",
                  "CommonAvailable")
    }  # fmt: skip
    cluster = make_slurmcluster("Pending", conditions=unknown, accounting=False)
    v = compute_verdict(kube=kube(cluster=cluster), slurm=None, freshness=FRESH)
    assert v.state == "progressing" and "jail-populating" in codes(v), v.hints


def test_a_nodeset_in_maintenance_does_not_stop_the_checks_of_the_ones_after_it() -> None:
    # "a-old" sorts first and is in maintenance; "worker" after it has a broken pod, and
    # "zeta" wants nodes it has none of: both still get their hints
    sick = make_pod("worker-0", "nodeset", ready=False, restarts=2, nodeset="worker")
    state = kube(
        pods=[sick],
        nodesets=[
            make_nodeset("a-old", replicas=1, ready=0, phase="Terminating"),
            make_nodeset("worker", replicas=1, ready=1),
            make_nodeset("zeta", replicas=2, ready=0, phase="Provisioning"),
        ],
    )
    v = compute_verdict(kube=state, slurm=slurm(HEALTHY), freshness=FRESH)
    by_code = {(h.code, h.subject) for h in v.hints}
    assert ("nodeset-maintenance", "a-old") in by_code
    assert ("nodeset-degraded", "worker") in by_code
    assert ("workers-no-nodes", "zeta") in by_code
    assert ("workers-no-nodes", "a-old") not in by_code  # stopped on purpose: no quota problem
    (said,) = [h for h in v.hints if h.code == "nodeset-maintenance"]
    assert "(Workers are disabled)" in said.message  # the controller's own condition, read


def test_a_gb300_rack_nodeset_without_nodes_names_its_pools_capacity_mode() -> None:
    # GB300 pools have one NodeSet per rack, `<pool>-rack<N>`; capacity is per pool
    k = kube(
        nodes=[make_node("sys-0", nodeset="system")],
        nodesets=[make_nodeset("gb-rack1", replicas=18, ready=0, phase="Provisioning")],
    )
    pools = [WorkerCapacity(name="gb", capacity_mode="preemptible", node_groups=1, nodes=18)]
    v = compute_verdict(kube=k, slurm=None, freshness=FRESH, workers=pools)
    hint = next(h for h in v.hints if h.code == "workers-no-nodes")
    assert hint.subject == "gb-rack1"
    assert hint.message == (
        "worker pool gb-rack1 has 0 Kubernetes nodes while its NodeSet wants 18; "
        "preemptible GPU capacity may be unavailable right now (capacity: preemptible)"
    )


def test_a_crashing_pod_outside_the_control_plane_and_the_workers_degrades_the_cluster() -> None:
    # e.g. the Slurm exporter: not a NodeSet pod, so only the pod rule itself can say so
    pod = make_pod("exporter-0", "exporter", ready=False, restarts=1, waiting_reason="Error")
    v = compute_verdict(kube=kube(pods=[pod]), slurm=slurm(HEALTHY), freshness=FRESH)
    assert v.state == "degraded", v
