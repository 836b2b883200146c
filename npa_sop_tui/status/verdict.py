"""Readiness verdict and hints, following Soperator's own notion of a ready cluster.

Rules, as the Soperator operator reports readiness:
- control plane: SlurmCluster phase `Available` and ControllersAvailable, LoginAvailable,
  SConfigControllerAvailable True (CommonAvailable/AccountingAvailable True if present;
  "accounting is disabled" is not a failure). Workers are not part of the phase;
- workers: each NodeSet phase `Ready` with ready == desired (ephemeral: phase only); the
  operator never sets a `Degraded` phase, so degradation is read from the worker pods
  `<nodeset>-<i>`, their Kubernetes nodes and Slurm;
- Slurm: every node in use has none of DOWN/DRAIN/NOT_RESPONDING/INVALID_REG/FAIL;
- the login Service has an address.

States: ready (all of the above), progressing (not there yet, nothing wrong that waiting
won't fix), degraded (was or could be up, but parts are unhealthy: drained or dead nodes,
a NodeSet whose worker pods broke, NotReady Kubernetes nodes), failed (something that
waiting will not fix: image pulls failing, crash loops, init containers failing), unknown (no
source answered).
Every hint names what to do next.
"""

from __future__ import annotations

import re

from npa_sop_tui.status.model import (
    Freshness,
    Hint,
    KubeState,
    PodInfo,
    SlurmNode,
    SlurmState,
    Verdict,
    WorkerCapacity,
)
from npa_sop_tui.status.verdict_context import VerdictContext, apply_context

REQUIRED_CLUSTER_CONDITIONS = (
    "ControllersAvailable",
    "LoginAvailable",
    "SConfigControllerAvailable",
)
OPTIONAL_CLUSTER_CONDITIONS = ("CommonAvailable", "AccountingAvailable")
FATAL_WAITING = {
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}
CRASHING = {"CrashLoopBackOff", "Error", "RunContainerError"}
CONTROL_PLANE_COMPONENTS = {"controller", "login", "accounting", "sconfigcontroller"}


def _kubectl(context: str, rest: str) -> str:
    return f"kubectl --context {context} -n soperator {rest}"


def compute_verdict(
    *,
    kube: KubeState | None,
    slurm: SlurmState | None,
    freshness: dict[str, Freshness],
    workers: list[WorkerCapacity] | None = None,
    context: VerdictContext | None = None,
) -> Verdict:
    """The live verdict, then what npa knows besides (last operation, sandbox) on top."""
    live = _live_verdict(kube=kube, slurm=slurm, freshness=freshness, workers=workers)
    return apply_context(live, context)


def _live_verdict(
    *,
    kube: KubeState | None,
    slurm: SlurmState | None,
    freshness: dict[str, Freshness],
    workers: list[WorkerCapacity] | None,
) -> Verdict:
    hints: list[Hint] = []
    waiting: list[bool] = []  # something is still coming up
    broken: list[bool] = []  # degraded
    fatal = False  # failed

    kf, sf = freshness.get("kube", Freshness()), freshness.get("slurm", Freshness())
    if kube is None and slurm is None:
        return Verdict(
            state="unknown",
            summary="unknown: no status source answered",
            hints=_source_hints(kf, sf),
        )
    hints.extend(_source_hints(kf, sf))

    capacity = {w.name: w.capacity_mode for w in workers or []}
    # Control plane Available and every NodeSet ready; without a Kubernetes view there is
    # nothing there to wait for.
    settled = True
    if kube is not None:
        ctx = kube.context
        cluster_ready = _cluster(kube, hints)
        nodesets_ready, nodesets_broken = _nodesets(kube, hints, capacity, ctx)
        pods_waiting, pods_broken, fatal = _pods(kube, hints, ctx)
        not_ready, flagged = _nodes(kube, hints)
        settled = cluster_ready and nodesets_ready
        # Nodes joining a cluster that is still coming up are NotReady for a while: that is
        # progress, not damage (the hint stays). Once the SlurmCluster is Available, a
        # NotReady node is a degraded cluster.
        waiting += [pods_waiting, _login_waiting(kube, hints, ctx)]
        broken += [nodesets_broken, pods_broken, flagged, not_ready and cluster_ready]

    if slurm is None and sf.state == "pending":
        waiting.append(True)  # Slurm is about to be asked: don't call it ready before it answers
    if slurm is not None:
        slurm_waiting, slurm_broken = _slurm(slurm, hints, settled, kube)
        waiting.append(slurm_waiting)
        broken.append(slurm_broken)

    if fatal:
        state = "failed"
    elif any(broken):
        state = "degraded"
    elif any(waiting) or not settled:
        state = "progressing"
    else:
        state = "ready"
    if kube is not None:
        from npa_sop_tui.status.active_checks import hints as active_check_hints

        hints.extend(active_check_hints(kube.active_checks, kube.context))
    return Verdict(state=state, summary=_summary(state, kube, slurm), hints=hints)


def _login_waiting(kube: KubeState, hints: list[Hint], ctx: str) -> bool:
    """The login Service and its address come last: until then the cluster is coming up."""
    if kube.login_service and not kube.login_ip:
        hints.append(
            Hint(
                code="login-no-address",
                severity="warning",
                subject="soperator-login-svc",
                message="the login LoadBalancer has no external address yet",
                action=(
                    "wait a few minutes during deploy; if it stays empty, the project may "
                    "forbid public IPs — see `"
                    + _kubectl(ctx, "describe svc soperator-login-svc")
                    + "` and consider slurm_login_public_ip = false with a private route"
                ),
            )
        )
    return not (kube.login_service and kube.login_ip)


def _source_hints(kf: Freshness, sf: Freshness) -> list[Hint]:
    out = []
    if kf.state in ("error", "stale") and kf.error:
        out.append(
            Hint(
                code="kube-unreachable",
                severity="warning",
                subject="kubernetes",
                message=f"Kubernetes data is {kf.state}: {kf.error}",
                action="check the kube context (`nebius mk8s cluster get-credentials "
                "--context-name nebius-<name>-slurm --external`) and network",
            )
        )
    if sf.state in ("error", "stale") and sf.error:
        out.append(
            Hint(
                code="slurm-unreachable",
                severity="warning",
                subject="slurm",
                message=f"Slurm data is {sf.state}: {sf.error}",
                action="check the login IP and SSH key (--login-host, --identity-file); "
                "`npa soperator ssh --name <name>` to try by hand",
            )
        )
    return out


def _cluster(kube: KubeState, hints: list[Hint]) -> bool:
    """Is the control plane ready (SlurmCluster Available with its conditions)?"""
    if not kube.slurm_cluster_crd:
        hints.append(
            Hint(
                code="soperator-not-installed",
                severity="info",
                subject="SlurmCluster",
                message="the SlurmCluster CRD is not installed yet",
                action="wait: Flux installs the operator after the Kubernetes stage",
            )
        )
        return False
    sc = kube.slurm_cluster
    if sc is None:
        hints.append(
            Hint(
                code="slurmcluster-missing",
                severity="info",
                subject="SlurmCluster",
                message="no SlurmCluster `soperator` yet",
                action="wait for the slurm-cluster HelmRelease (`kubectl -n flux-system "
                "get helmreleases`)",
            )
        )
        return False
    conds = {c.type: c for c in sc.conditions}
    # Pending with the availability conditions as set up (Unknown, reason SetUpCondition):
    # the first reconcile has not got past populating the jail. PopulateJailMode and a
    # disabled accounting are set before that and say nothing about it.
    availability = [
        c
        for c in sc.conditions
        if c.type in (*REQUIRED_CLUSTER_CONDITIONS, *OPTIONAL_CLUSTER_CONDITIONS)
        and not _accounting_disabled(c.message)
    ]
    if sc.phase in (None, "Pending") and all(c.status == "Unknown" for c in availability):
        hints.append(
            Hint(
                code="jail-populating",
                severity="info",
                subject="SlurmCluster",
                message="SlurmCluster is Pending: the jail is being populated",
                action="wait; the populate-jail Job can take several minutes "
                "(`kubectl -n soperator get jobs`)",
            )
        )
        return False
    bad = [
        t for t in REQUIRED_CLUSTER_CONDITIONS if conds.get(t) is None or conds[t].status != "True"
    ]
    for t in OPTIONAL_CLUSTER_CONDITIONS:
        c = conds.get(t)
        if c is not None and c.status != "True" and not _accounting_disabled(c.message):
            bad.append(t)
    if sc.phase == "Available" and not bad:
        return True
    for t in bad:
        c = conds.get(t)
        if c is not None and c.reason == "Maintenance":
            hints.append(
                Hint(
                    code="cluster-maintenance",
                    severity="warning",
                    subject=t,
                    message=f"{t} is False: the cluster is in maintenance mode",
                    action="set spec.maintenance back to `none` when maintenance is over",
                )
            )
    hints.append(
        Hint(
            code="cluster-not-available",
            severity="info",
            subject="SlurmCluster",
            message=f"SlurmCluster phase is {sc.phase or 'unset'}; waiting for "
            + (", ".join(bad) or "phase Available"),
            action="wait; if it stays, look at the controller/login pods below",
        )
    )
    return False


def _accounting_disabled(message: str | None) -> bool:
    return message is not None and "accounting is disabled" in message.lower()


def _nodesets(
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
        # the worker pods `<nodeset>-<i>` (here), their nodes and Slurm (_nodes, _slurm).
        if ns.phase == "Terminating":
            hints.append(
                Hint(
                    code="nodeset-terminating",
                    severity="info",
                    subject=ns.name,
                    message=f"NodeSet {ns.name} is being deleted (Terminating, "
                    f"{ns.ready}/{ns.desired} ready)",
                    action="expected while a pool is removed; if it stays, look at its "
                    "finalizers and pods: `"
                    + _kubectl(ctx, f"get nodeset {ns.name} -o yaml")
                    + "`",
                )
            )
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
                    + _kubectl(ctx, f"get pods -l slurm.nebius.ai/nodeset={ns.name}")
                    + "`",
                )
            )
    for ns in coming:
        if ns.phase == "Terminating":  # going away: its missing nodes are no quota problem
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


def _sick_worker_pods(kube: KubeState, nodeset: str) -> list[PodInfo]:
    """The NodeSet's worker pods (`<nodeset>-<i>`, component `nodeset`) that ran and broke
    and that no pod hint of their own names (`_pods` names image pulls, failing init
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


def _pods(kube: KubeState, hints: list[Hint], ctx: str) -> tuple[bool, bool, bool]:
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
                            "access; `" + _kubectl(ctx, f"describe pod {pod.name}") + "`"
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
                            action="`" + _kubectl(ctx, f"logs {pod.name} --all-containers") + "`; "
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
                            action="`" + _kubectl(ctx, f"logs {pod.name} --previous") + "`",
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
                    + _kubectl(ctx, f"describe pod {unschedulable[0].name}")
                    + "`"
                ),
            )
        )
    return waiting, broken, fatal


def _nodes(kube: KubeState, hints: list[Hint]) -> tuple[bool, bool]:
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


def _slurm(
    slurm: SlurmState, hints: list[Hint], kube_settled: bool, kube: KubeState | None
) -> tuple[bool, bool]:
    waiting = broken = False
    by_reason: dict[str | None, list[SlurmNode]] = {}
    dead: list[SlurmNode] = []
    invalid: list[SlurmNode] = []
    for n in slurm.nodes:
        fl = set(n.flags)
        if "DRAIN" in fl:
            # Soperator's checks tag their drains `[node_problem] …`; anything else is by hand
            tagged = n.reason is not None and n.reason.startswith("[")
            prefix = n.reason.partition("]")[0] + "]" if tagged else None
            by_reason.setdefault(prefix, []).append(n)
        elif "INVALID_REG" in fl:
            invalid.append(n)
        elif n.state in ("down", "unknown", "fail") or "NOT_RESPONDING" in fl:
            if n.state == "idle" and "POWERED_DOWN" in fl:
                continue
            dead.append(n)
    for prefix, nodes in by_reason.items():
        names = _names(nodes)
        reason = nodes[0].reason or "no reason given"
        if prefix in ("[node_problem]", "[hardware_problem]"):
            broken = True
            hints.append(
                Hint(
                    code="node-drained-health-check",
                    severity="warning",
                    subject=nodes[0].name,
                    message=f"{names} drained by a health check: {reason}",
                    action=(
                        "see which check failed (`kubectl -n soperator get activechecks`); "
                        + (
                            "hardware problems are replaced automatically"
                            if prefix == "[hardware_problem]"
                            else f"after fixing, `scontrol update nodename={nodes[0].name} "
                            "state=resume`"
                        )
                    ),
                )
            )
        elif prefix in ("[user_problem]", "[compute_maintenance]"):
            waiting = True
            hints.append(
                Hint(
                    code="node-drained-maintenance",
                    severity="info",
                    subject=nodes[0].name,
                    message=f"{names} drained: {reason}",
                    action="Soperator undrains these by itself once the condition clears; wait",
                )
            )
        else:
            broken = True
            hints.append(
                Hint(
                    code="node-drained",
                    severity="warning",
                    subject=nodes[0].name,
                    message=f"{names} drained: {reason}",
                    action=f"when done, `scontrol update nodename={nodes[0].name} state=resume`",
                )
            )
    if invalid:
        broken = True
        hints.append(
            Hint(
                code="node-invalid-registration",
                severity="warning",
                subject=invalid[0].name,
                message=f"{_names(invalid)} registered with fewer resources than slurm.conf says",
                action="check GPUs/memory on the node (`scontrol show node "
                f"{invalid[0].name}`); the worker pod may lack its GPU resources",
            )
        )
    # Not settled yet: nodes still joining are down for a while, and the verdict already
    # says progressing for the unsettled control plane.
    if dead and kube_settled:
        broken = True
        hints.append(
            Hint(
                code="node-not-responding",
                severity="warning",
                subject=dead[0].name,
                message=f"{_names(dead)} not responding / down"
                + (f": {dead[0].reason}" if dead[0].reason else ""),
                action=(
                    "check the worker pods (`kubectl -n soperator get pods -l "
                    "slurm.nebius.ai/worker=true`) and `scontrol show node "
                    f"{dead[0].name}`; resume with `scontrol update nodename="
                    f"{dead[0].name} state=resume` once slurmd runs"
                ),
            )
        )
    if kube is not None and kube_settled and kube.nodesets:
        slurm_names = {n.name for n in slurm.nodes}
        missing = [
            f"{ns.name}-{i}"
            for ns in kube.nodesets
            if not ns.ephemeral
            for i in range(ns.desired)
            if f"{ns.name}-{i}" not in slurm_names
        ]
        if missing:
            broken = True
            hints.append(
                Hint(
                    code="worker-missing-in-slurm",
                    severity="warning",
                    subject=missing[0],
                    message=f"{_names_str(missing)} Ready in Kubernetes but missing in Slurm",
                    action=f"`scontrol update nodename={missing[0]} state=resume` on the login "
                    "node; "
                    "if it persists, restart the worker pod",
                )
            )
    if not slurm.nodes:
        waiting = True
    return waiting, broken


def _names(nodes: list[SlurmNode]) -> str:
    return _names_str([n.name for n in nodes])


def _names_str(names: list[str]) -> str:
    head = ", ".join(names[:4])
    return head + (f" (+{len(names) - 4} more)" if len(names) > 4 else "")


def _summary(state: str, kube: KubeState | None, slurm: SlurmState | None) -> str:
    parts = []
    if kube is not None:
        sc = kube.slurm_cluster
        parts.append(f"SlurmCluster {sc.phase or 'pending'}" if sc else "no SlurmCluster")
        if kube.nodesets:
            ready = sum(n.ready for n in kube.nodesets)
            desired = sum(n.desired for n in kube.nodesets)
            parts.append(f"workers {ready}/{desired}")
    if slurm is not None:
        usable = sum(1 for n in slurm.nodes if n.usable)
        parts.append(f"slurm nodes usable {usable}/{len(slurm.nodes)}")
    return f"{state}: " + ", ".join(parts)
