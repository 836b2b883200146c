"""Readiness verdict and hints, following Soperator's own notion of a ready cluster.

Rules, as the Soperator operator reports readiness:
- control plane: SlurmCluster phase `Available` and ControllersAvailable, LoginAvailable,
  SConfigControllerAvailable True (CommonAvailable/AccountingAvailable True if present;
  "accounting is disabled" is not a failure). Workers are not part of the phase;
- workers: each NodeSet phase `Ready` with ready == desired (ephemeral: phase only); the
  operator never sets a `Degraded` phase, so degradation is read from the worker pods
  `<nodeset>-<i>`, their Kubernetes nodes and Slurm;
- Slurm: every node in use has none of DOWN/DRAIN/NOT_RESPONDING/INVALID_REG/FAIL;
- the login Service has an address;
- the operator (its controller manager in `soperator-system`) runs: one crash-looping or
  failing to start reconciles nothing, so the cluster is degraded.

States: ready (all of the above), progressing (not there yet, nothing wrong that waiting
won't fix), degraded (was or could be up, but parts are unhealthy: drained or dead nodes,
a NodeSet whose worker pods broke, NotReady Kubernetes nodes), failed (something that
waiting will not fix: image pulls failing, crash loops, init containers failing), unknown (no
source answered).
Every hint names what to do next.
"""

from __future__ import annotations

from npa_sop_tui.status.model import (
    Freshness,
    Hint,
    KubeState,
    SlurmState,
    Verdict,
    WorkerCapacity,
)
from npa_sop_tui.status.verdict_context import VerdictContext, apply_context
from npa_sop_tui.status.verdict_control_plane import judge_cluster, judge_login, judge_operator
from npa_sop_tui.status.verdict_slurm import judge_slurm
from npa_sop_tui.status.verdict_workloads import judge_nodes, judge_nodesets, judge_pods


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
        cluster_ready = judge_cluster(kube, hints)
        nodesets_ready, nodesets_broken = judge_nodesets(kube, hints, capacity, ctx)
        pods_waiting, pods_broken, fatal = judge_pods(kube, hints, ctx)
        not_ready, flagged = judge_nodes(kube, hints)
        operator_waiting, operator_broken = judge_operator(kube, hints, ctx)
        settled = cluster_ready and nodesets_ready
        # Nodes joining a cluster that is still coming up are NotReady for a while: that is
        # progress, not damage (the hint stays). Once the SlurmCluster is Available, a
        # NotReady node is a degraded cluster.
        waiting += [pods_waiting, judge_login(kube, hints, ctx), operator_waiting]
        broken += [nodesets_broken, pods_broken, flagged, not_ready and cluster_ready,
                   operator_broken]  # fmt: skip

    if slurm is None and sf.state == "pending":
        waiting.append(True)  # Slurm is about to be asked: don't call it ready before it answers
    if slurm is not None:
        slurm_waiting, slurm_broken = judge_slurm(slurm, hints, settled, kube)
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
        from npa_sop_tui.status.active_checks import CLUSTER, wait_job_of
        from npa_sop_tui.status.active_checks import hints as active_check_hints

        cluster = kube.slurm_cluster.name if kube.slurm_cluster is not None else CLUSTER
        hints.extend(
            active_check_hints(kube.active_checks, kube.context, wait_job_of(kube), cluster)
        )
    return Verdict(state=state, summary=_summary(state, kube, slurm), hints=hints)


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
