"""What npa knows about a cluster beyond its live state: how the last operation ended, and
how the environment the cluster lives in words its hints. Applied on top of the live verdict
(verdict.py) so that:

- a destroyed cluster reads DESTROYED, not PROGRESSING (nothing is coming up);
- after a failed or interrupted deploy, nothing is progressing either: a verdict that would
  say "wait" says FAILED with what to do (deploy again), and a READY one keeps a warning;
- an environment with no real cloud behind it (the sandbox) supplies a `HintPolicy`: the
  hints that only a real cloud can cause are left out, and the actions are its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from npa_sop_tui.status.model import Hint, Verdict


@dataclass(frozen=True)
class HintPolicy:
    """How an environment rewords the verdict's hints."""

    omit: frozenset[str] = frozenset()
    """Hint codes that cannot happen there (cloud capacity, quotas, networks)."""
    actions: Mapping[str, str] = field(default_factory=dict)
    """Hint code → the action to show instead."""
    kubeconfig: str | None = None
    """Named in the kubectl commands the hints show (its own kubeconfig, not ~/.kube)."""

    def apply(self, hints: list[Hint]) -> list[Hint]:
        return [self._reworded(h) for h in hints if h.code not in self.omit]

    def _reworded(self, hint: Hint) -> Hint:
        action = self.actions.get(hint.code)
        if action is None and self.kubeconfig:
            action = hint.action.replace(
                "kubectl --context", f"kubectl --kubeconfig {self.kubeconfig} --context"
            )
        return hint if action is None else hint.model_copy(update={"action": action})


@dataclass(frozen=True)
class VerdictContext:
    """The inventory's view of the cluster (None: npa has no record of it)."""

    state: str | None = None  # deployed, failed, interrupted, destroyed, deploying, …
    last_operation: str | None = None  # "deploy", "destroy", "plan"
    last_message: str = ""
    hint_policy: HintPolicy | None = None  # the environment's wording; None: a real cloud


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
    if context.hint_policy is not None:
        hints = context.hint_policy.apply(hints)
    return Verdict(state=state, summary=summary, hints=hints)
