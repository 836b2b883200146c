"""What npa knows about a cluster beyond its live state: how the last operation ended, and
whether it is a sandbox. Applied on top of the live verdict (verdict.py) so that:

- a destroyed cluster reads DESTROYED, not PROGRESSING (nothing is coming up);
- after a failed or interrupted deploy, nothing is progressing either: a verdict that would
  say "wait" says FAILED with what to do (deploy again), and a READY one keeps a warning;
- in the sandbox, hints speak of the sandbox: no Nebius console, quotas, mk8s credentials
  or real login nodes; what only a real cloud can cause is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from npa_sop_tui.status.model import Hint, Verdict

REAL_CLUSTER_ONLY = frozenset(
    {"workers-no-nodes", "login-no-address", "pods-unschedulable", "k8s-node-condition"}
)
"""Hints about cloud capacity, quotas and networks: they cannot happen in the sandbox."""

SANDBOX_ACTIONS = {
    "kube-unreachable": "the sandbox's Kubernetes API is served by the npa process that "
    "deployed it; reopen the app (npa-sop --sandbox) or run `npa soperator status --sandbox`",
    "slurm-unreachable": "the sandbox reads Slurm from the login.host in its config; check "
    "that sshd and Slurm run there (the local substrate: bash scripts/substrate.sh start)",
}


@dataclass(frozen=True)
class VerdictContext:
    """The inventory's view of the cluster (None: npa has no record of it)."""

    state: str | None = None  # deployed, failed, interrupted, destroyed, deploying, …
    last_operation: str | None = None  # "deploy", "destroy", "plan"
    last_message: str = ""
    simulated: bool = False  # no real cloud behind the cluster (the sandbox environment)
    kubeconfig: str | None = None  # the sandbox's kubeconfig, for the kubectl commands shown


def apply_context(verdict: Verdict, context: VerdictContext | None) -> Verdict:
    if context is None:
        return verdict
    hints = list(verdict.hints)
    state = verdict.state
    summary = verdict.summary
    what = f" ({context.last_message})" if context.last_message else ""
    if context.state == "destroyed":
        state = "destroyed"
        summary = "destroyed: npa tore this cluster down"
        hints = [
            Hint(
                code="cluster-destroyed",
                severity="info",
                subject="cluster",
                message="the last operation destroyed this cluster",
                action="deploy it again to bring it back (home screen: d, or "
                "`npa soperator deploy`)",
            )
        ]
    elif context.state in ("failed", "interrupted", "destroy-incomplete"):
        op = context.last_operation or "deploy"
        ended = "was interrupted" if context.state == "interrupted" else "failed"
        if context.state == "destroy-incomplete":
            op, ended = "destroy", "left resources behind"
        hints.insert(
            0,
            Hint(
                code=f"last-{op}-{context.state}",
                severity="error" if state != "ready" else "warning",
                subject="cluster",
                message=f"the last {op} {ended}{what}; what Terraform did not reach is not coming",
                action=f"run {op} again to converge (it continues from Terraform's state); "
                "the operation log has the details",
            ),
        )
        if state in ("progressing", "unknown"):
            state = "failed"
            summary = f"failed: the last {op} {ended}; " + summary.split(": ", 1)[-1]
    if context.simulated:
        hints = [_for_simulated(h, context) for h in hints if h.code not in REAL_CLUSTER_ONLY]
    return Verdict(state=state, summary=summary, hints=hints)


def _for_simulated(hint: Hint, context: VerdictContext) -> Hint:
    action = SANDBOX_ACTIONS.get(hint.code)
    if action is None:
        config = context.kubeconfig or "the sandbox kubeconfig"
        action = hint.action.replace(
            "kubectl --context", f"kubectl --kubeconfig {config} --context"
        )
    return hint.model_copy(update={"action": action})
