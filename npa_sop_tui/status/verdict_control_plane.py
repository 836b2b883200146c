"""The control plane's part of the verdict: the SlurmCluster's phase and conditions, and the
login Service's address (the rules are listed in status/verdict.py)."""

from __future__ import annotations

from npa_sop_tui.status.kube import kubectl_command
from npa_sop_tui.status.model import Hint, KubeState

REQUIRED_CLUSTER_CONDITIONS = (
    "ControllersAvailable",
    "LoginAvailable",
    "SConfigControllerAvailable",
)
OPTIONAL_CLUSTER_CONDITIONS = ("CommonAvailable", "AccountingAvailable")


def judge_login(kube: KubeState, hints: list[Hint], ctx: str) -> bool:
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
                    + kubectl_command(ctx, "describe svc soperator-login-svc")
                    + "` and consider slurm_login_public_ip = false with a private route"
                ),
            )
        )
    return not (kube.login_service and kube.login_ip)


def judge_cluster(kube: KubeState, hints: list[Hint]) -> bool:
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


# Waiting reasons of an operator pod that waiting will not fix (the workloads' own list is in
# verdict_workloads.py; these are the same Kubernetes words).
_OPERATOR_BROKEN = {
    "CrashLoopBackOff",
    "Error",
    "RunContainerError",
    "ImagePullBackOff",
    "ErrImagePull",
    "InvalidImageName",
    "CreateContainerConfigError",
    "CreateContainerError",
}


def judge_operator(kube: KubeState, hints: list[Hint], ctx: str) -> tuple[bool, bool]:
    """(waiting, degraded) from the operator's own pods in `soperator-system`. A broken
    operator reconciles nothing: the cluster keeps running as it is, but no change (a resize,
    an upgrade, a maintenance switch) reaches it, and NodeSets are not healed."""
    op = kube.operator
    if op is None:  # its namespace was not (or may not be) read: nothing to say
        return False, False
    where = f"kubectl --context {ctx} -n {op.namespace}"
    if not op.pods:
        sc = kube.slurm_cluster
        if sc is None:
            return False, False  # nothing to reconcile yet: the operator comes with Flux
        coming = sc.phase in (None, "Pending")
        hints.append(
            Hint(
                code="operator-missing",
                severity="info" if coming else "warning",
                subject=op.namespace,
                message=f"no Soperator operator pod in {op.namespace}: nothing reconciles "
                "the SlurmCluster",
                action="look at the operator's release: `kubectl --context "
                f"{ctx} -n flux-system get helmreleases` and `{where} get deployments`",
            )
        )
        return coming, not coming
    sick = [p for p in op.pods if p.waiting_reason in _OPERATOR_BROKEN or p.phase == "Failed"]
    if sick:
        pod = sick[0]
        why = pod.waiting_reason or pod.phase
        version = f" {op.version}" if op.version else ""
        hints.append(
            Hint(
                code="operator-unhealthy",
                severity="error",
                subject=pod.name,
                message=f"the Soperator operator{version} is not running: pod {pod.name} "
                f"({op.namespace}) is {why} ({pod.restarts} restarts); the cluster runs on "
                "but no change reaches it",
                action=f"`{where} logs {pod.name} -c manager --previous`; if a new "
                "slurm_operator_version brought it, deploy the previous version again",
            )
        )
        return False, True
    waiting = any(not p.ready for p in op.pods)
    return waiting, False
