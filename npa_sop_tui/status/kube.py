"""What npa reads from Kubernetes: Soperator's names and labels, and the `KubeState` built from
the listed objects (nodes, pods, services, SlurmCluster and NodeSet custom resources).

The objects are kept current by `KubeCollector` (status/kube_collector.py).
"""

from __future__ import annotations

from typing import Any

from npa_sop_tui.status.model import (
    ComponentPods,
    Condition,
    KubeNode,
    KubeState,
    NodeGroup,
    NodeSetInfo,
    OperatorInfo,
    PodInfo,
    SlurmClusterInfo,
)

NAMESPACE = "soperator"
# The operator's own namespace (the soperator Helm chart's controller-manager Deployment):
# the cluster's namespace does not show whether the operator that reconciles it is healthy.
OPERATOR_NAMESPACE = "soperator-system"
OPERATOR_LABEL = ("control-plane", "controller-manager")
OPERATOR_CONTAINER = "manager"
SLURM_GROUP = "slurm.nebius.ai"
LOGIN_SERVICE = "soperator-login-svc"
CLUSTER_CR = "soperator"

NODESET_LABEL = "slurm.nebius.ai/nodeset"
NODESET_NAME_LABEL = "slurm.nebius.ai/nodeset-name"
COMPONENT_LABEL = "app.kubernetes.io/component"


def kubectl_command(context: str, rest: str) -> str:
    """The kubectl command a hint tells the user to run, in Soperator's namespace."""
    return f"kubectl --context {context} -n {NAMESPACE} {rest}"


# Node conditions worth a line in the dashboard (Soperator's health-check and GPU
# conditions), shown when they are "True" (for Ready: when not True).
NOTABLE_NODE_CONDITIONS = frozenset(
    {
        "SlurmNodeDrain",
        "SlurmNodeReboot",
        "SoperatorChecksNodeDegraded",
        "SoperatorChecksNodeMaintenance",
        "HardwareIssuesSuspected",
        "NebiusMaintenanceScheduled",
        "NebiusGPUError",
        "NebiusBootDiskIOError",
        "NebiusContainerRuntimeError",
        "MemoryPressure",
        "DiskPressure",
        "PIDPressure",
        "NetworkUnavailable",
    }
)


def _conditions(raw: list[dict[str, Any]] | None) -> list[Condition]:
    out = []
    for c in raw or []:
        if "type" in c:
            out.append(
                Condition(
                    type=str(c["type"]),
                    status=str(c.get("status", "Unknown")),
                    reason=c.get("reason") or None,
                    message=c.get("message") or None,
                )
            )
    return out


def _node(obj: dict[str, Any]) -> KubeNode:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    labels = meta.get("labels") or {}
    conds = _conditions(status.get("conditions"))
    ready = any(c.type == "Ready" and c.status == "True" for c in conds)
    notable = [
        c
        for c in conds
        if (c.type == "Ready" and c.status != "True")
        or (c.type in NOTABLE_NODE_CONDITIONS and c.status == "True")
    ]
    return KubeNode(
        name=str(meta.get("name")),
        ready=ready,
        unschedulable=bool(spec.get("unschedulable")),
        nodeset=labels.get(NODESET_LABEL),
        nodeset_name=labels.get(NODESET_NAME_LABEL),
        node_group_id=labels.get("nebius.com/node-group-id"),
        preemptible=labels.get("nebius.com/preemptible") == "true",
        gpu=labels.get("nebius.com/gpu") == "true"
        or labels.get("slurm.nebius.ai/workload") == "gpu",
        notable_conditions=notable,
    )


def _group_name(node: KubeNode) -> str:
    if node.nodeset == "worker" and node.nodeset_name:
        return node.nodeset_name
    return node.nodeset or node.nodeset_name or "other"


def _pod(obj: dict[str, Any]) -> PodInfo:
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    labels = meta.get("labels") or {}
    conds = _conditions(status.get("conditions"))
    containers = status.get("containerStatuses") or []
    inits = status.get("initContainerStatuses") or []
    waiting, message, init = None, None, False
    for cs, is_init in [*((c, True) for c in inits), *((c, False) for c in containers)]:
        state = cs.get("state") or {}
        w = state.get("waiting")
        term = state.get("terminated")
        if (w and w.get("reason") not in (None, "PodInitializing", "ContainerCreating")) or (
            is_init and term and term.get("exitCode", 0) != 0
        ):
            src = w or term or {}
            waiting, message, init = src.get("reason") or "Error", src.get("message"), is_init
            break
    if waiting is None:
        for c in conds:
            if c.type == "PodScheduled" and c.status == "False":
                waiting, message = c.reason or "Unschedulable", c.message
        if waiting is None and status.get("phase") == "Pending":
            for cs in [*inits, *containers]:
                w = (cs.get("state") or {}).get("waiting")
                if w and w.get("reason"):
                    waiting, message = w["reason"], w.get("message")
                    break
    return PodInfo(
        job=labels.get("batch.kubernetes.io/job-name") or labels.get("job-name"),
        name=str(meta.get("name")),
        component=labels.get(COMPONENT_LABEL) or "other",
        phase=str(status.get("phase") or "Unknown"),
        ready=any(c.type == "Ready" and c.status == "True" for c in conds),
        restarts=sum(int(cs.get("restartCount") or 0) for cs in containers),
        node=spec.get("nodeName"),
        waiting_reason=waiting,
        message=message or None,
        init=init,
    )


def operator_version(obj: dict[str, Any]) -> str | None:
    """The tag of the `manager` container's image (`…/slurm-operator:4.1.6` → `4.1.6`); a
    digest-pinned or untagged image says nothing about the version."""
    for container in (obj.get("spec") or {}).get("containers") or []:
        if container.get("name") != OPERATOR_CONTAINER:
            continue
        image = str(container.get("image") or "").split("@", 1)[0]
        _, sep, tag = image.rpartition(":")
        if sep and "/" not in tag and tag:
            return tag
    return None


def build_operator(pods: list[dict[str, Any]]) -> OperatorInfo:
    """The operator's pods (the controller manager's, by its label; every pod of the
    namespace when none carries it) and the version they run (during a rollout, old and new
    pods run two: both are named, `4.1.6, 4.1.13`)."""
    key, value = OPERATOR_LABEL
    managers = [
        p for p in pods if ((p.get("metadata") or {}).get("labels") or {}).get(key) == value
    ]
    chosen = managers or pods
    versions = list(dict.fromkeys(v for v in map(operator_version, chosen) if v))
    infos = sorted((_pod(p) for p in chosen), key=lambda p: p.name)
    return OperatorInfo(
        namespace=OPERATOR_NAMESPACE, version=", ".join(versions) or None, pods=infos
    )


def build_kube_state(
    context: str,
    *,
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    services: list[dict[str, Any]],
    slurmclusters: list[dict[str, Any]],
    slurmclusters_missing: bool,
    nodesets: list[dict[str, Any]],
    nodesets_missing: bool,
) -> KubeState:
    groups: dict[str, NodeGroup] = {}
    for raw in nodes:
        node = _node(raw)
        name = _group_name(node)
        g = groups.setdefault(name, NodeGroup(name=name, role=node.nodeset))
        g.nodes.append(node)
        g.total += 1
        g.ready += node.ready
        g.preemptible = g.preemptible or node.preemptible
        g.gpu = g.gpu or node.gpu
        for c in node.notable_conditions:
            if not any(x.type == c.type and x.status == c.status for x in g.notable_conditions):
                g.notable_conditions.append(c)
    for g in groups.values():
        g.nodes.sort(key=lambda n: n.name)

    comps: dict[str, ComponentPods] = {}
    for raw in pods:
        pod = _pod(raw)
        cp = comps.setdefault(pod.component, ComponentPods(component=pod.component))
        cp.pods.append(pod)
        cp.total += 1
        cp.ready += pod.ready
    for cp in comps.values():
        cp.pods.sort(key=lambda p: p.name)

    cluster = None
    for raw in slurmclusters:
        meta, status = raw.get("metadata") or {}, raw.get("status") or {}
        if meta.get("name") == CLUSTER_CR or cluster is None:
            cluster = SlurmClusterInfo(
                name=str(meta.get("name")),
                phase=status.get("phase"),
                conditions=_conditions(status.get("conditions")),
                ready_login=status.get("readyLogin"),
            )

    sets = []
    for raw in nodesets:
        meta, spec, status = (
            raw.get("metadata") or {},
            raw.get("spec") or {},
            raw.get("status") or {},
        )
        sets.append(
            NodeSetInfo(
                name=str(meta.get("name")),
                desired=int(spec.get("replicas") or 0),
                ready=int(status.get("replicas") or 0),
                phase=status.get("phase"),
                ephemeral=bool(spec.get("ephemeralNodes")),
                conditions=_conditions(status.get("conditions")),
            )
        )
    sets.sort(key=lambda s: s.name)

    login_service, login_ip = False, None
    for raw in services:
        if (raw.get("metadata") or {}).get("name") == LOGIN_SERVICE:
            login_service = True
            ingress = ((raw.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
            for ing in ingress:
                login_ip = ing.get("ip") or ing.get("hostname")
                if login_ip:
                    break

    return KubeState(
        context=context,
        node_groups=sorted(groups.values(), key=lambda g: (g.role != "worker", g.name)),
        components=sorted(comps.values(), key=lambda c: c.component),
        slurm_cluster=cluster,
        slurm_cluster_crd=not slurmclusters_missing,
        nodesets=sets,
        nodesets_crd=not nodesets_missing,
        login_service=login_service,
        login_ip=login_ip,
    )
