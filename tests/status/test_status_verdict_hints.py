"""The readiness verdict word for word (verdict.py): for each situation a cluster can be in,
the state, the one-line summary and every hint with its code, severity, subject, message and
action. States are built from the status models directly, so each case differs from a ready
cluster in one thing; test_status_verdict.py drives the same rules through the fake API
server's objects.
"""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.status.model import (
    ComponentPods,
    Condition,
    Freshness,
    KubeState,
    NodeGroup,
    NodeSetInfo,
    OperatorInfo,
    PodInfo,
    SlurmClusterInfo,
    SlurmState,
    WorkerCapacity,
)
from npa_sop_tui.status.slurm import parse_nodes_delimited
from npa_sop_tui.status.verdict import compute_verdict

CTX = "nebius-lab-slurm"
FRESH = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="fresh")}
CONDS = (
    "CommonAvailable",
    "ControllersAvailable",
    "LoginAvailable",
    "AccountingAvailable",
    "SConfigControllerAvailable",
)
UNKNOWN = dict.fromkeys(CONDS, "Unknown")


def cluster(phase: str | None = "Available", **status: str | None) -> SlurmClusterInfo:
    """Every condition True unless given; None leaves a condition out."""
    conds = [
        Condition(
            type=t,
            status=status.get(t) or "True",
            reason=status.get(f"{t}_reason"),
            message=status.get(f"{t}_message"),
        )
        for t in CONDS
        if t not in status or status[t] is not None
    ]
    return SlurmClusterInfo(name="soperator", phase=phase, conditions=conds)


def group(name: str, ready: int = 2, total: int = 2, **kw: Any) -> NodeGroup:
    return NodeGroup(name=name, ready=ready, total=total, **kw)


def nodeset(desired: int = 2, ready: int = 2, phase: str = "Ready", **kw: Any) -> NodeSetInfo:
    return NodeSetInfo(
        name=kw.pop("name", "worker"), desired=desired, ready=ready, phase=phase, **kw
    )


def kube(**kw: Any) -> KubeState:
    base: dict[str, Any] = {
        "context": CTX,
        "slurm_cluster": cluster(),
        "slurm_cluster_crd": True,
        "nodesets": [nodeset()],
        "nodesets_crd": True,
        "node_groups": [group("worker")],
        "login_service": True,
        "login_ip": "203.0.113.7",
    }
    return KubeState(**{**base, **kw})


def pods(component: str, *items: dict[str, Any]) -> list[ComponentPods]:
    return [
        ComponentPods(
            component=component, pods=[PodInfo(component=component, **item) for item in items]
        )
    ]


def line(name: str, state: str = "idle", reason: str = "none") -> str:
    return f"{name}|main*|{state}|0/8/0/8|100|(null)|(null)|{reason}\n"


def slurm(*lines: str) -> SlurmState:
    return SlurmState(
        host="h", source_format="delimited", nodes=parse_nodes_delimited("".join(lines))
    )


def capacity(mode: str, nodes: int = 2) -> list[WorkerCapacity]:
    return [WorkerCapacity(name="worker", capacity_mode=mode, node_groups=1, nodes=nodes)]


def kubectl(rest: str) -> str:
    return f"`kubectl --context {CTX} -n soperator {rest}`"


HEALTHY = slurm(line("worker-0"), line("worker-1"))
SUMMARY = "SlurmCluster Available, workers 2/2, slurm nodes usable 2/2"
WAIT_FOR = "wait; if it stays, look at the controller/login pods below"
QUOTA = (
    "check the quota for the platform in the Nebius console and the node group's events; "
    "switch the pool to `preemptible: {}` or a reservation if on-demand quota is 0, or lower "
    "its size"
)
NO_NODES = "worker pool worker has 0 Kubernetes nodes while its NodeSet wants"
UNSCHEDULABLE = (
    "the node group for them is missing, still scaling up, or too small (resources/ephemeral "
    "storage); check node group sizes and quota, and "
)
IMAGE = "check slurm_operator_version / image tags in the spec and registry access; "
NOT_READY = (
    f"`kubectl --context {CTX} describe node` for the NotReady nodes; mk8s auto-repair "
    "replaces broken nodes"
)
FLAGGED = (
    "Soperator/Nebius flagged the node; it is drained or being replaced — check `kubectl "
    "describe node` and the Slurm reason below"
)
CHECKS = "see which check failed (`kubectl -n soperator get activechecks`); "
SELF_UNDRAIN = "Soperator undrains these by itself once the condition clears; wait"
DEAD = (
    "check the worker pods (`kubectl -n soperator get pods -l slurm.nebius.ai/worker=true`) "
    "and `scontrol show node worker-0`; resume with `scontrol update nodename=worker-0 "
    "state=resume` once slurmd runs"
)


def resume(node: str) -> str:
    return f"`scontrol update nodename={node} state=resume`"


# What the NodeSet controller sets with phase Terminating (nodesetcontroller/reconcile.go).
MAINTENANCE = Condition(
    type="StatefulSetTerminated", status="True", reason="Maintenance",
    message="Workers are disabled",
)  # fmt: skip


def H(code: str, severity: str, subject: str | None, message: str, action: str) -> tuple:
    return (code, severity, subject, message, action)


Case = tuple[dict[str, Any], str, str, list[tuple]]
CASES: dict[str, Case] = {
    # --- sources --------------------------------------------------------------------------
    "ready": ({"kube": kube(), "slurm": HEALTHY}, "ready", SUMMARY, []),
    "ready-slurm-off": (
        {
            "kube": kube(),
            "slurm": None,
            "freshness": {"kube": Freshness(state="fresh"), "slurm": Freshness(state="disabled")},
        },
        "ready",
        "SlurmCluster Available, workers 2/2",
        [],
    ),
    "ready-slurm-only": ({"kube": None, "slurm": HEALTHY}, "ready", "slurm nodes usable 2/2", []),
    "nothing-answered": (
        {"kube": None, "slurm": None, "freshness": {}},
        "unknown",
        "no status source answered",
        [],
    ),
    "both-unreachable": (
        {
            "kube": None,
            "slurm": None,
            "freshness": {
                "kube": Freshness(state="stale", error="timed out"),
                "slurm": Freshness(state="error", error="refused"),
            },
        },
        "unknown",
        "no status source answered",
        [
            H(
                "kube-unreachable",
                "warning",
                "kubernetes",
                "Kubernetes data is stale: timed out",
                "check the kube context (`nebius mk8s cluster get-credentials --context-name "
                "nebius-<name>-slurm --external`) and network",
            ),
            H(
                "slurm-unreachable",
                "warning",
                "slurm",
                "Slurm data is error: refused",
                "check the login IP and SSH key (--login-host, --identity-file); `npa soperator "
                "ssh --name <name>` to try by hand",
            ),
        ],
    ),
    "failures-without-text-are-quiet": (
        {
            "kube": None,
            "slurm": HEALTHY,
            "freshness": {
                "kube": Freshness(state="error"),
                "slurm": Freshness(state="fresh", error="old"),
            },
        },
        "ready",
        "slurm nodes usable 2/2",
        [],
    ),
    "slurm-stale": (
        {
            "kube": kube(),
            "slurm": HEALTHY,
            "freshness": {
                "kube": Freshness(state="fresh"),
                "slurm": Freshness(state="stale", error="timed out"),
            },
        },
        "ready",
        SUMMARY,
        [
            H(
                "slurm-unreachable",
                "warning",
                "slurm",
                "Slurm data is stale: timed out",
                "check the login IP and SSH key (--login-host, --identity-file); `npa soperator "
                "ssh --name <name>` to try by hand",
            )
        ],
    ),
    "slurm-about-to-answer": (
        {
            "kube": kube(),
            "slurm": None,
            "freshness": {"kube": Freshness(state="fresh"), "slurm": Freshness(state="pending")},
        },
        "progressing",
        "SlurmCluster Available, workers 2/2",
        [],
    ),
    # --- the SlurmCluster -------------------------------------------------------------------
    "no-crd": (
        {
            "kube": kube(
                slurm_cluster=None, slurm_cluster_crd=False, nodesets=[], nodesets_crd=False
            ),
            "slurm": None,
        },
        "progressing",
        "no SlurmCluster",
        [
            H(
                "soperator-not-installed",
                "info",
                "SlurmCluster",
                "the SlurmCluster CRD is not installed yet",
                "wait: Flux installs the operator after the Kubernetes stage",
            )
        ],
    ),
    "no-crd-with-nodesets-ready": (
        {"kube": kube(slurm_cluster=None, slurm_cluster_crd=False), "slurm": HEALTHY},
        "progressing",
        "no SlurmCluster, workers 2/2, slurm nodes usable 2/2",
        [
            H(
                "soperator-not-installed",
                "info",
                "SlurmCluster",
                "the SlurmCluster CRD is not installed yet",
                "wait: Flux installs the operator after the Kubernetes stage",
            )
        ],
    ),
    "no-slurmcluster": (
        {"kube": kube(slurm_cluster=None), "slurm": None},
        "progressing",
        "no SlurmCluster, workers 2/2",
        [
            H(
                "slurmcluster-missing",
                "info",
                "SlurmCluster",
                "no SlurmCluster `soperator` yet",
                "wait for the slurm-cluster HelmRelease (`kubectl -n flux-system get "
                "helmreleases`)",
            )
        ],
    ),
    "jail-populating": (
        {"kube": kube(slurm_cluster=cluster("Pending", **UNKNOWN)), "slurm": None},
        "progressing",
        "SlurmCluster Pending, workers 2/2",
        [
            H(
                "jail-populating",
                "info",
                "SlurmCluster",
                "SlurmCluster is Pending: the jail is being populated",
                "wait; the populate-jail Job can take several minutes (`kubectl -n soperator "
                "get jobs`)",
            )
        ],
    ),
    "jail-populating-no-phase": (
        {"kube": kube(slurm_cluster=cluster(None, **UNKNOWN)), "slurm": None},
        "progressing",
        "SlurmCluster pending, workers 2/2",
        [
            H(
                "jail-populating",
                "info",
                "SlurmCluster",
                "SlurmCluster is Pending: the jail is being populated",
                "wait; the populate-jail Job can take several minutes (`kubectl -n soperator "
                "get jobs`)",
            )
        ],
    ),
    "pending-with-a-false": (
        {
            "kube": kube(
                slurm_cluster=cluster("Pending", **{**UNKNOWN, "LoginAvailable": "False"})
            ),
            "slurm": None,
        },
        "progressing",
        "SlurmCluster Pending, workers 2/2",
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Pending; waiting for ControllersAvailable, LoginAvailable, "
                "SConfigControllerAvailable, CommonAvailable, AccountingAvailable",
                WAIT_FOR,
            )
        ],
    ),
    "required-condition-false-or-absent": (
        {
            "kube": kube(
                slurm_cluster=cluster(
                    "Not available", ControllersAvailable="False", SConfigControllerAvailable=None
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        "SlurmCluster Not available, workers 2/2, slurm nodes usable 2/2",
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Not available; waiting for ControllersAvailable, "
                "SConfigControllerAvailable",
                WAIT_FOR,
            )
        ],
    ),
    "maintenance": (
        {
            "kube": kube(
                slurm_cluster=cluster(
                    "Maintenance", LoginAvailable="False", LoginAvailable_reason="Maintenance"
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        "SlurmCluster Maintenance, workers 2/2, slurm nodes usable 2/2",
        [
            H(
                "cluster-maintenance",
                "warning",
                "LoginAvailable",
                "LoginAvailable is False: the cluster is in maintenance mode",
                "set spec.maintenance back to `none` when maintenance is over",
            ),
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Maintenance; waiting for LoginAvailable",
                WAIT_FOR,
            ),
        ],
    ),
    "optional-condition-false": (
        {"kube": kube(slurm_cluster=cluster(CommonAvailable="False")), "slurm": HEALTHY},
        "progressing",
        SUMMARY,
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Available; waiting for CommonAvailable",
                WAIT_FOR,
            )
        ],
    ),
    "accounting-disabled-is-fine": (
        {
            "kube": kube(
                slurm_cluster=cluster(
                    AccountingAvailable="False",
                    AccountingAvailable_message="Slurm Accounting Is Disabled",
                )
            ),
            "slurm": HEALTHY,
        },
        "ready",
        SUMMARY,
        [],
    ),
    "accounting-down": (
        {
            "kube": kube(
                slurm_cluster=cluster(
                    AccountingAvailable="False", AccountingAvailable_message="db down"
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Available; waiting for AccountingAvailable",
                WAIT_FOR,
            )
        ],
    ),
    "accounting-false-without-message": (
        {"kube": kube(slurm_cluster=cluster(AccountingAvailable="False")), "slurm": HEALTHY},
        "progressing",
        SUMMARY,
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Available; waiting for AccountingAvailable",
                WAIT_FOR,
            )
        ],
    ),
    "phase-unset": (
        {"kube": kube(slurm_cluster=cluster(None)), "slurm": HEALTHY},
        "progressing",
        "SlurmCluster pending, workers 2/2, slurm nodes usable 2/2",
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is unset; waiting for phase Available",
                WAIT_FOR,
            )
        ],
    ),
    # --- NodeSets -----------------------------------------------------------------------------
    "nodesets-crd-missing": (
        {"kube": kube(nodesets=[], nodesets_crd=False), "slurm": HEALTHY},
        "progressing",
        "SlurmCluster Available, slurm nodes usable 2/2",
        [],
    ),
    "no-nodesets-yet": (
        {"kube": kube(nodesets=[]), "slurm": HEALTHY},
        "progressing",
        "SlurmCluster Available, slurm nodes usable 2/2",
        [],
    ),
    # No Degraded phase exists: a Ready NodeSet whose worker pod broke is degraded.
    "nodeset-degraded": (
        {
            "kube": kube(
                components=pods(
                    "nodeset",
                    {"name": "worker-0", "phase": "Running", "ready": True},
                    {"name": "worker-1", "phase": "Running", "ready": False, "restarts": 2},
                )
            ),
            "slurm": HEALTHY,
        },
        "degraded",
        SUMMARY,
        [
            H(
                "nodeset-degraded",
                "warning",
                "worker",
                "NodeSet worker is degraded: 1 worker pod(s) unhealthy (worker-1: not ready; "
                "2 restarts)",
                "look at the worker pods: " + kubectl("get pods -l slurm.nebius.ai/nodeset=worker"),
            )
        ],
    ),
    "second-nodeset-degraded": (
        {
            "kube": kube(
                nodesets=[nodeset(), nodeset(1, 1, name="gpu")],
                node_groups=[group("worker"), group("gpu", 1, 1)],
                components=pods(
                    "nodeset",
                    {"name": "gpu-0", "phase": "Failed", "ready": False},
                    {"name": "gpu-x", "phase": "Failed", "ready": False},  # not `<nodeset>-<i>`
                ),
            ),
            "slurm": HEALTHY,
        },
        "degraded",
        "SlurmCluster Available, workers 3/3, slurm nodes usable 2/2",
        [
            H(
                "nodeset-degraded",
                "warning",
                "gpu",
                "NodeSet gpu is degraded: 1 worker pod(s) unhealthy (gpu-0: Failed; 0 restarts)",
                "look at the worker pods: " + kubectl("get pods -l slurm.nebius.ai/nodeset=gpu"),
            ),
            H(  # Slurm says the same from its side: the node of pod gpu-0 is not there
                "worker-missing-in-slurm",
                "warning",
                "gpu-0",
                "gpu-0 Ready in Kubernetes but missing in Slurm",
                "`scontrol update nodename=gpu-0 state=resume` on the login node; if it "
                "persists, restart the worker pod",
            ),
        ],
    ),
    "nodeset-maintenance": (
        {
            "kube": kube(
                nodesets=[
                    nodeset(),
                    nodeset(1, 0, "Terminating", name="old", conditions=[MAINTENANCE]),
                ]
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        "SlurmCluster Available, workers 2/3, slurm nodes usable 2/2",
        [
            H(
                "nodeset-maintenance",
                "warning",
                "old",
                "NodeSet old is in maintenance: its workers are stopped (Workers are "
                "disabled), 0/1 running",
                "leave maintenance by setting the SlurmCluster's spec.maintenance back to "
                "`none`: "
                + kubectl(
                    "patch slurmcluster soperator --type merge -p "
                    '\'{"spec":{"maintenance":"none"}}\''
                )
                + " (npa's next deploy renders maintenance none as well)",
            )
        ],
    ),
    "nodeset-maintenance-without-its-condition": (
        {
            "kube": kube(nodesets=[nodeset(), nodeset(1, 0, "Terminating", name="old")]),
            "slurm": HEALTHY,
        },
        "progressing",
        "SlurmCluster Available, workers 2/3, slurm nodes usable 2/2",
        [
            H(
                "nodeset-maintenance",
                "warning",
                "old",
                "NodeSet old is in maintenance: its workers are stopped, 0/1 running",
                "leave maintenance by setting the SlurmCluster's spec.maintenance back to "
                "`none`: "
                + kubectl(
                    "patch slurmcluster soperator --type merge -p "
                    '\'{"spec":{"maintenance":"none"}}\''
                )
                + " (npa's next deploy renders maintenance none as well)",
            )
        ],
    ),
    "nodeset-short-in-ready-phase": (
        {
            "kube": kube(nodesets=[nodeset(3, 2)], node_groups=[group("worker", 3, 3)]),
            "slurm": HEALTHY,
        },
        "progressing",
        "SlurmCluster Available, workers 2/3, slurm nodes usable 2/2",
        [],
    ),
    "nodeset-ephemeral": (
        {"kube": kube(nodesets=[nodeset(3, 0, ephemeral=True)]), "slurm": HEALTHY},
        "ready",
        "SlurmCluster Available, workers 0/3, slurm nodes usable 2/2",
        [],
    ),
    "no-nodes-on-demand": (
        {
            "kube": kube(
                nodesets=[nodeset(2, 0, "Provisioning")], node_groups=[group("system", 3, 3)]
            ),
            "slurm": None,
            "workers": capacity("on-demand"),
        },
        "progressing",
        "SlurmCluster Available, workers 0/2",
        [
            H(
                "workers-no-nodes",
                "warning",
                "worker",
                f"{NO_NODES} 2; on-demand GPU quota is often 0 (capacity: on-demand)",
                QUOTA,
            )
        ],
    ),
    "no-nodes-preemptible": (
        {
            "kube": kube(
                nodesets=[nodeset(2, 0, "Provisioning")], node_groups=[group("worker", 0, 0)]
            ),
            "slurm": None,
            "workers": capacity("preemptible"),
        },
        "progressing",
        "SlurmCluster Available, workers 0/2",
        [
            H(
                "workers-no-nodes",
                "warning",
                "worker",
                f"{NO_NODES} 2; preemptible GPU capacity may be unavailable right now "
                "(capacity: preemptible)",
                QUOTA,
            )
        ],
    ),
    "no-nodes-reserved": (
        {
            "kube": kube(nodesets=[nodeset(1, 0, "Provisioning")], node_groups=[]),
            "slurm": None,
            "workers": capacity("reserved", 1),
        },
        "progressing",
        "SlurmCluster Available, workers 0/1",
        [
            H(
                "workers-no-nodes",
                "warning",
                "worker",
                f"{NO_NODES} 1; GPU quota or capacity may be 0 (capacity: reserved)",
                QUOTA,
            )
        ],
    ),
    "no-nodes-mode-unknown": (
        {"kube": kube(nodesets=[nodeset(1, 0, "Provisioning")], node_groups=[]), "slurm": None},
        "progressing",
        "SlurmCluster Available, workers 0/1",
        [
            H(
                "workers-no-nodes",
                "warning",
                "worker",
                f"{NO_NODES} 1; GPU quota or capacity may be 0",
                QUOTA,
            )
        ],
    ),
    "nodeset-wants-none": (
        {"kube": kube(nodesets=[nodeset(0, 0, "Provisioning")], node_groups=[]), "slurm": None},
        "progressing",
        "SlurmCluster Available, workers 0/0",
        [],
    ),
    # --- pods -----------------------------------------------------------------------------
    "unschedulable": (
        {
            "kube": kube(
                components=pods(
                    "nodeset",
                    *(
                        {
                            "name": f"worker-{i}",
                            "phase": "Pending",
                            "waiting_reason": "Unschedulable",
                            "message": None if i else "0/3 nodes are available",
                        }
                        for i in range(6)
                    ),
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [
            H(
                "pods-unschedulable",
                "warning",
                "worker-0",
                "6 pod(s) Pending, unschedulable (worker-0, worker-1, worker-2, worker-3, "
                "worker-4 and 1 more): 0/3 nodes are available",
                UNSCHEDULABLE + kubectl("describe pod worker-0"),
            )
        ],
    ),
    "five-unschedulable": (
        {
            "kube": kube(
                components=pods(
                    "nodeset",
                    *(
                        {
                            "name": f"worker-{i}",
                            "phase": "Pending",
                            "waiting_reason": "Unschedulable",
                        }
                        for i in range(5)
                    ),
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [
            H(
                "pods-unschedulable",
                "warning",
                "worker-0",
                "5 pod(s) Pending, unschedulable (worker-0, worker-1, worker-2, worker-3, "
                "worker-4): no node fits",
                UNSCHEDULABLE + kubectl("describe pod worker-0"),
            )
        ],
    ),
    "unschedulable-without-message": (
        {
            "kube": kube(
                components=pods(
                    "login",
                    {"name": "login-0", "phase": "Pending", "waiting_reason": "Unschedulable"},
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [
            H(
                "pods-unschedulable",
                "warning",
                "login-0",
                "1 pod(s) Pending, unschedulable (login-0): no node fits",
                UNSCHEDULABLE + kubectl("describe pod login-0"),
            )
        ],
    ),
    "image-pull": (
        {
            "kube": kube(
                components=pods(
                    "controller",
                    {
                        "name": "controller-0",
                        "phase": "Pending",
                        "waiting_reason": "ErrImagePull",
                        "message": "tag 9.9 not found",
                    },
                )
            ),
            "slurm": HEALTHY,
        },
        "failed",
        SUMMARY,
        [
            H(
                "image-pull",
                "error",
                "controller-0",
                "pod controller-0 (controller) cannot start: ErrImagePull: tag 9.9 not found",
                IMAGE + kubectl("describe pod controller-0"),
            )
        ],
    ),
    "container-config": (
        {
            "kube": kube(
                components=pods(
                    "login",
                    {
                        "name": "login-0",
                        "phase": "Pending",
                        "waiting_reason": "CreateContainerConfigError",
                    },
                )
            ),
            "slurm": HEALTHY,
        },
        "failed",
        SUMMARY,
        [
            H(
                "container-config",
                "error",
                "login-0",
                "pod login-0 (login) cannot start: CreateContainerConfigError",
                IMAGE + kubectl("describe pod login-0"),
            )
        ],
    ),
    "init-container-crash": (
        {
            "kube": kube(
                components=pods(
                    "nodeset",
                    {
                        "name": "worker-0",
                        "phase": "Pending",
                        "waiting_reason": "CrashLoopBackOff",
                        "init": True,
                    },
                )
            ),
            "slurm": HEALTHY,
        },
        "failed",
        SUMMARY,
        [
            H(
                "init-failing",
                "error",
                "worker-0",
                "pod worker-0: an init container fails (CrashLoopBackOff); for workers this is "
                "usually the jail filesystem not being mounted (virtiofs)",
                kubectl("logs worker-0 --all-containers")
                + "; check the filestore attachment of the node group",
            )
        ],
    ),
    "control-plane-crash": (
        {
            "kube": kube(
                components=pods(
                    "accounting",
                    {
                        "name": "accounting-0",
                        "phase": "Running",
                        "waiting_reason": "Error",
                        "restarts": 1,
                    },
                )
            ),
            "slurm": HEALTHY,
        },
        "failed",
        SUMMARY,
        [
            H(
                "crashloop",
                "error",
                "accounting-0",
                "pod accounting-0 (accounting) is crash-looping (1 restarts)",
                kubectl("logs accounting-0 --previous"),
            )
        ],
    ),
    # --- the operator (its controller manager in soperator-system) ---------------------------
    "operator-crashloop": (
        {
            "kube": kube(
                operator=OperatorInfo(
                    version="4.1.13",
                    pods=[
                        PodInfo(
                            name="soperator-controller-manager-7d9-x2",
                            component="manager",
                            phase="Running",
                            restarts=6,
                            waiting_reason="CrashLoopBackOff",
                        )
                    ],
                )
            ),
            "slurm": HEALTHY,
        },
        "degraded",
        SUMMARY,
        [
            H(
                "operator-unhealthy",
                "error",
                "soperator-controller-manager-7d9-x2",
                "the Soperator operator 4.1.13 is not running: pod "
                "soperator-controller-manager-7d9-x2 (soperator-system) is CrashLoopBackOff "
                "(6 restarts); the cluster runs on but no change reaches it",
                f"`kubectl --context {CTX} -n soperator-system logs "
                "soperator-controller-manager-7d9-x2 -c manager --previous`; if a new "
                "slurm_operator_version brought it, deploy the previous version again",
            )
        ],
    ),
    "operator-running": (
        {
            "kube": kube(
                operator=OperatorInfo(
                    version="4.1.6",
                    pods=[
                        PodInfo(
                            name="soperator-controller-manager-0",
                            component="manager",
                            phase="Running",
                            ready=True,
                        )
                    ],
                )
            ),
            "slurm": HEALTHY,
        },
        "ready",
        SUMMARY,
        [],
    ),
    "operator-starting": (
        {
            "kube": kube(
                operator=OperatorInfo(
                    pods=[
                        PodInfo(
                            name="soperator-controller-manager-0",
                            component="manager",
                            phase="Pending",
                        )
                    ],
                )
            ),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [],
    ),
    "operator-gone-from-a-running-cluster": (
        {"kube": kube(operator=OperatorInfo()), "slurm": HEALTHY},
        "degraded",
        SUMMARY,
        [
            H(
                "operator-missing",
                "warning",
                "soperator-system",
                "no Soperator operator pod in soperator-system: nothing reconciles the "
                "SlurmCluster",
                f"look at the operator's release: `kubectl --context {CTX} -n flux-system get "
                f"helmreleases` and `kubectl --context {CTX} -n soperator-system get "
                "deployments`",
            )
        ],
    ),
    "operator-not-yet-while-the-cluster-is-pending": (
        {
            "kube": kube(operator=OperatorInfo(), slurm_cluster=cluster("Pending", **UNKNOWN)),
            "slurm": None,
        },
        "progressing",
        "SlurmCluster Pending, workers 2/2",
        [
            H(
                "jail-populating",
                "info",
                "SlurmCluster",
                "SlurmCluster is Pending: the jail is being populated",
                "wait; the populate-jail Job can take several minutes (`kubectl -n soperator "
                "get jobs`)",
            ),
            H(
                "operator-missing",
                "info",
                "soperator-system",
                "no Soperator operator pod in soperator-system: nothing reconciles the "
                "SlurmCluster",
                f"look at the operator's release: `kubectl --context {CTX} -n flux-system get "
                f"helmreleases` and `kubectl --context {CTX} -n soperator-system get "
                "deployments`",
            ),
        ],
    ),
    "worker-crash-5-restarts": (
        {
            "kube": kube(
                components=pods(
                    "nodeset",
                    {
                        "name": "worker-0",
                        "phase": "Running",
                        "waiting_reason": "RunContainerError",
                        "restarts": 5,
                    },
                )
            ),
            "slurm": HEALTHY,
        },
        "failed",
        SUMMARY,
        [
            H(
                "crashloop",
                "error",
                "worker-0",
                "pod worker-0 (nodeset) is crash-looping (5 restarts)",
                kubectl("logs worker-0 --previous"),
            )
        ],
    ),
    "worker-crash-4-restarts": (
        {
            "kube": kube(
                components=pods(
                    "nodeset",
                    {
                        "name": "worker-0",
                        "phase": "Running",
                        "waiting_reason": "CrashLoopBackOff",
                        "restarts": 4,
                    },
                )
            ),
            "slurm": HEALTHY,
        },
        "degraded",
        SUMMARY,
        [
            H(  # too few restarts for a crash-loop hint of its own: its NodeSet says it
                "nodeset-degraded",
                "warning",
                "worker",
                "NodeSet worker is degraded: 1 worker pod(s) unhealthy (worker-0: "
                "CrashLoopBackOff; 4 restarts)",
                "look at the worker pods: " + kubectl("get pods -l slurm.nebius.ai/nodeset=worker"),
            )
        ],
    ),
    "pod-pending": (
        {
            "kube": kube(components=pods("login", {"name": "login-0", "phase": "Pending"})),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [],
    ),
    "pod-running-not-ready": (
        {
            "kube": kube(components=pods("login", {"name": "login-0", "phase": "Running"})),
            "slurm": HEALTHY,
        },
        "progressing",
        SUMMARY,
        [],
    ),
    "pod-failed": (
        {
            "kube": kube(components=pods("exporter", {"name": "e-0", "phase": "Failed"})),
            "slurm": HEALTHY,
        },
        "degraded",
        SUMMARY,
        [],
    ),
    "populate-jail-failed-is-fine": (
        {
            "kube": kube(
                components=pods(
                    "populate-jail",
                    {"name": "populate-jail-x", "phase": "Failed"},
                    {"name": "populate-jail-y", "phase": "Succeeded"},
                )
            ),
            "slurm": HEALTHY,
        },
        "ready",
        SUMMARY,
        [],
    ),
    # --- Kubernetes nodes and the login address -------------------------------------------
    "k8s-nodes-not-ready": (
        {
            "kube": kube(
                node_groups=[group("worker", 1, 2, preemptible=True), group("system", 0, 0)]
            ),
            "slurm": HEALTHY,
        },
        "degraded",
        SUMMARY,
        [
            H(
                "k8s-nodes-not-ready",
                "warning",
                "worker",
                "node group worker: 1/2 Kubernetes nodes Ready (preemptible: nodes can be "
                "reclaimed)",
                NOT_READY,
            )
        ],
    ),
    "k8s-nodes-not-ready-while-coming-up": (
        {
            "kube": kube(
                slurm_cluster=cluster("Pending", LoginAvailable="False"),
                node_groups=[group("worker", 1, 2)],
            ),
            "slurm": None,
        },
        "progressing",
        "SlurmCluster Pending, workers 2/2",
        [
            H(
                "cluster-not-available",
                "info",
                "SlurmCluster",
                "SlurmCluster phase is Pending; waiting for LoginAvailable",
                WAIT_FOR,
            ),
            H(
                "k8s-nodes-not-ready",
                "warning",
                "worker",
                "node group worker: 1/2 Kubernetes nodes Ready",
                NOT_READY,
            ),
        ],
    ),
    "k8s-node-conditions": (
        {
            "kube": kube(
                node_groups=[
                    group(
                        "worker",
                        notable_conditions=[
                            Condition(type="Ready", status="False"),
                            Condition(type="GpuIssues", status="True", message="XID 79"),
                            Condition(type="DiskPressure", status="True"),
                        ],
                    )
                ]
            ),
            "slurm": HEALTHY,
        },
        "degraded",
        SUMMARY,
        [
            H(
                "k8s-node-condition",
                "warning",
                "worker",
                "node group worker: condition GpuIssues=True (XID 79)",
                FLAGGED,
            ),
            H(
                "k8s-node-condition",
                "warning",
                "worker",
                "node group worker: condition DiskPressure=True",
                FLAGGED,
            ),
        ],
    ),
    "no-login-service-yet": (
        {"kube": kube(login_service=False, login_ip=None), "slurm": HEALTHY},
        "progressing",
        SUMMARY,
        [],
    ),
    "login-without-address": (
        {"kube": kube(login_ip=None), "slurm": HEALTHY},
        "progressing",
        SUMMARY,
        [
            H(
                "login-no-address",
                "warning",
                "soperator-login-svc",
                "the login LoadBalancer has no external address yet",
                "wait a few minutes during deploy; if it stays empty, the project may forbid "
                "public IPs — see "
                + kubectl("describe svc soperator-login-svc")
                + " and consider slurm_login_public_ip = false with a private route",
            )
        ],
    ),
    # --- Slurm ------------------------------------------------------------------------------
    "drained-node-problem": (
        {
            "kube": kube(),
            "slurm": slurm(
                line("worker-0", "drained", "[node_problem] gpu_health_check: XID 79"),
                line("worker-1"),
            ),
        },
        "degraded",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 1/2",
        [
            H(
                "node-drained-health-check",
                "warning",
                "worker-0",
                "worker-0 drained by a health check: [node_problem] gpu_health_check: XID 79",
                CHECKS + "after fixing, " + resume("worker-0"),
            )
        ],
    ),
    "drained-hardware-problem": (
        {
            "kube": kube(),
            "slurm": slurm(
                line("worker-0", "drained*", "[hardware_problem] nvlink down"),
                line("worker-1", "draining", "[hardware_problem] other"),
            ),
        },
        "degraded",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 0/2",
        [
            H(
                "node-drained-health-check",
                "warning",
                "worker-0",
                "worker-0, worker-1 drained by a health check: [hardware_problem] nvlink down",
                CHECKS + "hardware problems are replaced automatically",
            )
        ],
    ),
    "drained-user-problem": (
        {
            "kube": kube(),
            "slurm": slurm(
                line("worker-0", "drained", "[user_problem] disk full"), line("worker-1")
            ),
        },
        "progressing",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 1/2",
        [
            H(
                "node-drained-maintenance",
                "info",
                "worker-0",
                "worker-0 drained: [user_problem] disk full",
                SELF_UNDRAIN,
            )
        ],
    ),
    "drained-compute-maintenance": (
        {
            "kube": kube(),
            "slurm": slurm(
                line("worker-0", "drained", "[compute_maintenance] planned"), line("worker-1")
            ),
        },
        "progressing",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 1/2",
        [
            H(
                "node-drained-maintenance",
                "info",
                "worker-0",
                "worker-0 drained: [compute_maintenance] planned",
                SELF_UNDRAIN,
            )
        ],
    ),
    "drained-by-hand": (
        {
            "kube": kube(),
            "slurm": slurm(
                line("worker-0", "drained", "kernel upgrade"), line("worker-1", "drained", "(null)")
            ),
        },
        "degraded",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 0/2",
        [
            H(
                "node-drained",
                "warning",
                "worker-0",
                "worker-0, worker-1 drained: kernel upgrade",
                "when done, " + resume("worker-0"),
            )
        ],
    ),
    "drained-without-reason": (
        {"kube": None, "slurm": slurm(line("w-0", "drained", "(null)"))},
        "degraded",
        "slurm nodes usable 0/1",
        [
            H(
                "node-drained",
                "warning",
                "w-0",
                "w-0 drained: no reason given",
                "when done, " + resume("w-0"),
            )
        ],
    ),
    "invalid-registration": (
        {"kube": kube(), "slurm": slurm(line("worker-0", "inval"), line("worker-1"))},
        "degraded",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 1/2",
        [
            H(
                "node-invalid-registration",
                "warning",
                "worker-0",
                "worker-0 registered with fewer resources than slurm.conf says",
                "check GPUs/memory on the node (`scontrol show node worker-0`); the worker pod "
                "may lack its GPU resources",
            )
        ],
    ),
    "dead-nodes": (
        {
            "kube": kube(),
            "slurm": slurm(line("worker-0", "down*", "Not responding"), line("worker-1", "fail")),
        },
        "degraded",
        "SlurmCluster Available, workers 2/2, slurm nodes usable 0/2",
        [
            H(
                "node-not-responding",
                "warning",
                "worker-0",
                "worker-0, worker-1 not responding / down: Not responding",
                DEAD,
            )
        ],
    ),
    "unknown-and-silent-nodes": (
        {"kube": None, "slurm": slurm(line("worker-0", "unk"), line("worker-1", "idle*"))},
        "degraded",
        "slurm nodes usable 0/2",
        [
            H(
                "node-not-responding",
                "warning",
                "worker-0",
                "worker-0, worker-1 not responding / down",
                DEAD,
            )
        ],
    ),
    "down-without-flags": (
        {"kube": None, "slurm": slurm(line("w-0", "down", "by hand"))},
        "degraded",
        "slurm nodes usable 0/1",
        [
            H(
                "node-not-responding",
                "warning",
                "w-0",
                "w-0 not responding / down: by hand",
                DEAD.replace("worker-0", "w-0"),
            )
        ],
    ),
    "powered-down-then-dead": (
        {"kube": None, "slurm": slurm(line("w-0", "idle*~"), line("w-1", "down*"))},
        "degraded",
        "slurm nodes usable 0/2",
        [
            H(
                "node-not-responding",
                "warning",
                "w-1",
                "w-1 not responding / down",
                DEAD.replace("worker-0", "w-1"),
            )
        ],
    ),
    "dead-nodes-while-coming-up": (
        {
            "kube": kube(nodesets=[nodeset(2, 1, "Provisioning")]),
            "slurm": slurm(line("worker-0", "down*", "Not responding"), line("worker-1")),
        },
        "progressing",
        "SlurmCluster Available, workers 1/2, slurm nodes usable 1/2",
        [],
    ),
    "powered-down-is-fine": (
        {"kube": None, "slurm": slurm(line("worker-0", "idle~"), line("worker-1", "idle*~"))},
        "ready",
        "slurm nodes usable 0/2",
        [],
    ),
    "missing-in-slurm": (
        {
            "kube": kube(
                nodesets=[nodeset(6, 6), nodeset(2, 2, name="burst", ephemeral=True)],
                node_groups=[group("worker", 6, 6)],
            ),
            "slurm": slurm(line("worker-0")),
        },
        "degraded",
        "SlurmCluster Available, workers 8/8, slurm nodes usable 1/1",
        [
            H(
                "worker-missing-in-slurm",
                "warning",
                "worker-1",
                "worker-1, worker-2, worker-3, worker-4 (+1 more) Ready in Kubernetes but "
                "missing in Slurm",
                resume("worker-1") + " on the login node; if it persists, restart the worker pod",
            )
        ],
    ),
    "no-slurm-nodes": (
        {"kube": None, "slurm": slurm()},
        "progressing",
        "slurm nodes usable 0/0",
        [],
    ),
}


def _drained(n: int, shown: str) -> Case:
    names = [f"w-{i}" for i in range(n)]
    return (
        {"kube": None, "slurm": slurm(*(line(x, "drained", "[node_problem] hc") for x in names))},
        "degraded",
        f"slurm nodes usable 0/{n}",
        [
            H(
                "node-drained-health-check",
                "warning",
                "w-0",
                f"{shown} drained by a health check: [node_problem] hc",
                CHECKS + "after fixing, " + resume("w-0"),
            )
        ],
    )


CASES["4-drained-names"] = _drained(4, "w-0, w-1, w-2, w-3")
CASES["5-drained-names"] = _drained(5, "w-0, w-1, w-2, w-3 (+1 more)")
CASES["6-drained-names"] = _drained(6, "w-0, w-1, w-2, w-3 (+2 more)")


@pytest.mark.parametrize("case", list(CASES))
def test_verdict_word_for_word(case: str) -> None:
    kw, state, summary, hints = CASES[case]
    verdict = compute_verdict(**{"freshness": FRESH, **kw})
    got = [(h.code, h.severity, h.subject, h.message, h.action) for h in verdict.hints]
    assert (verdict.state, verdict.summary, got) == (state, f"{state}: {summary}", hints)
