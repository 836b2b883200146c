"""The workloads' part of the verdict: NodeSets, pods and Kubernetes nodes (the rules are listed
in status/verdict.py)."""

from __future__ import annotations

import re

from npa_sop_tui.status.kube import kubectl_command
from npa_sop_tui.status.model import Hint, KubeState, NodeSetInfo, PodInfo

FATAL_WAITING = {
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}
CRASHING = {"CrashLoopBackOff", "Error", "RunContainerError"}
CONTROL_PLANE_COMPONENTS = {"controller", "login", "accounting", "sconfigcontroller"}


def judge_nodesets(
    kube: KubeState, hints: list[Hint], capacity: dict[str, str], ctx: str
) -> tuple[bool, bool]:
    """(all NodeSets ready, some NodeSet degraded); none listed yet is not ready."""
    broken = False
    groups = {g.name: g for g in kube.node_groups}
    coming = [
        ns
        for ns in kube.nodesets
        if not (ns.phase == "Ready" and (ns.ephemeral or ns.ready >= ns.desired))
    ]
    for ns in kube.nodesets:
        # The NodeSet controller never sets a Degraded phase (only Pending, Provisioning,
        # Ready, Terminating: nodesetcontroller/reconcile.go at 4.1.6); degradation shows in
        # the worker pods `<nodeset>-<i>` (here), their nodes and Slurm (judge_nodes, judge_slurm).
        if ns.phase == "Terminating":
            hints.append(_maintenance_hint(ns, ctx))
            continue
        sick = _sick_worker_pods(kube, ns.name)
        if sick:
            broken = True
            first = sick[0]
            why = first.waiting_reason or ("not ready" if first.phase == "Running" else first.phase)
            hints.append(
                Hint(
                    code="nodeset-degraded",
                    severity="warning",
                    subject=ns.name,
                    message=f"NodeSet {ns.name} is degraded: {len(sick)} worker pod(s) unhealthy "
                    f"({first.name}: {why}; {first.restarts} restarts)",
                    action="look at the worker pods: `"
                    + kubectl_command(ctx, f"get pods -l slurm.nebius.ai/nodeset={ns.name}")
                    + "`",
                )
            )
    for ns in coming:
        if ns.phase == "Terminating":  # workers disabled on purpose: no quota problem
            continue
        group = groups.get(ns.name)
        if ns.desired > 0 and (group is None or group.total == 0):
            # capacity is per worker pool; a GB300 rack NodeSet `<pool>-rack<N>` is the pool's
            mode = capacity.get(ns.name) or capacity.get(_RACK.sub("", ns.name))
            gpu_words = {
                "preemptible": "preemptible GPU capacity may be unavailable right now",
                "on-demand": "on-demand GPU quota is often 0",
            }.get(mode, "GPU quota or capacity may be 0")
            hints.append(
                Hint(
                    code="workers-no-nodes",
                    severity="warning",
                    subject=ns.name,
                    message=(
                        f"worker pool {ns.name} has 0 Kubernetes nodes while its NodeSet wants "
                        f"{ns.desired}; {gpu_words}" + (f" (capacity: {mode})" if mode else "")
                    ),
                    action=(
                        "check the quota for the platform in the Nebius console and the node "
                        "group's events; switch the pool to `preemptible: {}` or a reservation "
                        "if on-demand quota is 0, or lower its size"
                    ),
                )
            )
    ready = kube.nodesets_crd and bool(kube.nodesets) and not coming
    return ready, broken


_RACK = re.compile(r"-rack\d+$")
LEAVE_MAINTENANCE = (
    'patch slurmcluster soperator --type merge -p \'{"spec":{"maintenance":"none"}}\''
)


def _maintenance_hint(ns: NodeSetInfo, ctx: str) -> Hint:
    """`Terminating` is the NodeSet controller's word for maintenance: the SlurmCluster's
    `spec.maintenance` disables workers (downscale…), so it terminates the NodeSet's
    StatefulSet and says so in `StatefulSetTerminated=True`, reason `Maintenance`, "Workers
    are disabled" (nodesetcontroller/reconcile.go at 4.1.6). No NodeSet is being deleted."""
    said = next(
        (c for c in ns.conditions if c.type == "StatefulSetTerminated" and c.status == "True"),
        None,
    )
    why = f" ({said.message})" if said is not None and said.message else ""
    return Hint(
        code="nodeset-maintenance",
        severity="warning",
        subject=ns.name,
        message=f"NodeSet {ns.name} is in maintenance: its workers are stopped{why}, "
        f"{ns.ready}/{ns.desired} running",
        action="leave maintenance by setting the SlurmCluster's spec.maintenance back to "
        "`none`: `" + kubectl_command(ctx, LEAVE_MAINTENANCE) + "` (npa's next deploy renders "
        "maintenance none as well)",
    )


def _sick_worker_pods(kube: KubeState, nodeset: str) -> list[PodInfo]:
    """The NodeSet's worker pods (`<nodeset>-<i>`, component `nodeset`) that ran and broke
    and that no pod hint of their own names (`judge_pods` names image pulls, failing init
    containers and long crash loops): failed, crashing, or running but not ready after a
    restart. A pod still starting (Pending, no restarts) is progress."""
    pattern = re.compile(rf"^{re.escape(nodeset)}-\d+$")
    return [
        pod
        for comp in kube.components
        if comp.component == "nodeset"
        for pod in comp.pods
        if pattern.match(pod.name)
        and (
            pod.phase == "Failed"
            or (pod.waiting_reason in CRASHING and not pod.init and pod.restarts < 5)
            or (
                pod.phase == "Running"
                and not pod.ready
                and pod.restarts > 0
                and pod.waiting_reason is None
            )
        )
    ]


def judge_pods(kube: KubeState, hints: list[Hint], ctx: str) -> tuple[bool, bool, bool]:
    """(waiting, degraded, failed) from pod phases and waiting reasons."""
    waiting = broken = fatal = False
    unschedulable = []
    for comp in kube.components:
        for pod in comp.pods:
            reason = pod.waiting_reason
            if reason in ("Unschedulable",):
                unschedulable.append(pod)
                waiting = True
            elif reason in FATAL_WAITING:
                fatal = True
                hints.append(
                    Hint(
                        code="image-pull" if "Image" in reason else "container-config",
                        severity="error",
                        subject=pod.name,
                        message=f"pod {pod.name} ({comp.component}) cannot start: {reason}"
                        + (f": {pod.message}" if pod.message else ""),
                        action=(
                            "check slurm_operator_version / image tags in the spec and registry "
                            "access; `" + kubectl_command(ctx, f"describe pod {pod.name}") + "`"
                        ),
                    )
                )
            elif reason in CRASHING:
                if pod.init:
                    fatal = True
                    hints.append(
                        Hint(
                            code="init-failing",
                            severity="error",
                            subject=pod.name,
                            message=f"pod {pod.name}: an init container fails ({reason}); for "
                            "workers "
                            "this is usually the jail filesystem not being mounted (virtiofs)",
                            action="`"
                            + kubectl_command(ctx, f"logs {pod.name} --all-containers")
                            + "`; "
                            "check the filestore attachment of the node group",
                        )
                    )
                elif comp.component in CONTROL_PLANE_COMPONENTS or pod.restarts >= 5:
                    fatal = True
                    hints.append(
                        Hint(
                            code="crashloop",
                            severity="error",
                            subject=pod.name,
                            message=f"pod {pod.name} ({comp.component}) is crash-looping "
                            f"({pod.restarts} restarts)",
                            action="`" + kubectl_command(ctx, f"logs {pod.name} --previous") + "`",
                        )
                    )
                else:
                    broken = True
            elif pod.phase in ("Pending",) or (pod.phase == "Running" and not pod.ready):
                waiting = True
            elif pod.phase == "Failed" and comp.component != "populate-jail" and not pod.job:
                # A failed Job pod is one run of an active check; Soperator keeps 16 of them.
                # Only each check's latest run counts, read from its ActiveCheck status.
                broken = True
    if unschedulable:
        names = ", ".join(p.name for p in unschedulable[:5])
        more = f" and {len(unschedulable) - 5} more" if len(unschedulable) > 5 else ""
        msg = unschedulable[0].message or "no node fits"
        hints.append(
            Hint(
                code="pods-unschedulable",
                severity="warning",
                subject=unschedulable[0].name,
                message=(
                    f"{len(unschedulable)} pod(s) Pending, unschedulable ({names}{more}): {msg}"
                ),
                action=(
                    "the node group for them is missing, still scaling up, or too small "
                    "(resources/ephemeral storage); check node group sizes and quota, and `"
                    + kubectl_command(ctx, f"describe pod {unschedulable[0].name}")
                    + "`"
                ),
            )
        )
    return waiting, broken, fatal


def judge_nodes(kube: KubeState, hints: list[Hint]) -> tuple[bool, bool]:
    """(some node is not Ready, some node carries a notable condition)."""
    not_ready = flagged = False
    for g in kube.node_groups:
        if g.total and g.ready < g.total:
            not_ready = True
            hints.append(
                Hint(
                    code="k8s-nodes-not-ready",
                    severity="warning",
                    subject=g.name,
                    message=f"node group {g.name}: {g.ready}/{g.total} Kubernetes nodes Ready"
                    + (" (preemptible: nodes can be reclaimed)" if g.preemptible else ""),
                    action=f"`kubectl --context {kube.context} describe node` for the NotReady "
                    "nodes; mk8s auto-repair replaces broken nodes",
                )
            )
        for c in g.notable_conditions:
            if c.type == "Ready":
                continue
            flagged = True
            hints.append(
                Hint(
                    code="k8s-node-condition",
                    severity="warning",
                    subject=g.name,
                    message=f"node group {g.name}: condition {c.type}=True"
                    + (f" ({c.message})" if c.message else ""),
                    action="Soperator/Nebius flagged the node; it is drained or being replaced — "
                    "check `kubectl describe node` and the Slurm reason below",
                )
            )
    return not_ready, flagged
