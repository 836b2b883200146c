"""Soperator's ActiveCheck resources: what ran, what failed, what a running apply waits on.

An ActiveCheck (`slurm.nebius.ai/v1alpha1`) is a k8s Job or a Slurm job the operator runs
on the cluster (NCCL all-reduce, CUDA samples, GPU burn-in, ssh and user checks …). The
recipe's Helm hook `wait-for-active-checks` holds the activechecks release, and so the
Terraform apply, until every `runAfterCreation` check that is not comment-only is Complete.
Failures drain Slurm nodes with `[node_problem] <check>` (or `[hardware_problem]`) reasons,
which is where the latest per-node result shows.
"""

from __future__ import annotations

from typing import Any

from npa_sop_tui.status.model import ActiveCheckInfo, Hint

DONE = ("Complete", "Cancelled", "Skipped")
FAILED = ("Failed", "Error")
REASON_PREFIXES = ("[node_problem]", "[hardware_problem]")


def _comment_only(spec: dict[str, Any]) -> bool:
    """Checks whose failure only comments a node (no drain): the wait hook ignores them."""
    reactions = spec.get("failureReactions") or {}
    return bool(reactions.get("commentSlurmNode")) and not reactions.get("drainSlurmNode")


def parse_active_checks(objects: list[dict[str, Any]]) -> list[ActiveCheckInfo]:
    out = []
    for raw in objects:
        meta, spec, status = (
            raw.get("metadata") or {},
            raw.get("spec") or {},
            raw.get("status") or {},
        )
        kind = spec.get("checkType") or "unknown"
        if kind == "slurmJob":
            slurm = status.get("slurmJobsStatus") or {}
            state = slurm.get("lastRunStatus")
            failures = [
                f"job {f.get('jobID', '?')}: {f.get('reason', '')}".strip()
                for f in [*(slurm.get("lastRunFailJobsAndReasons") or []),
                          *(slurm.get("lastRunErrorJobsAndReasons") or [])]
            ]  # fmt: skip
            run_id, submitted = slurm.get("lastRunId"), slurm.get("lastRunSubmitTime")
        else:
            state = (status.get("k8sJobsStatus") or {}).get("lastJobStatus")
            failures, run_id, submitted = [], None, None
        out.append(
            ActiveCheckInfo(
                name=str(spec.get("name") or meta.get("name")),
                type=kind,
                status=state,
                run_after_creation=bool(spec.get("runAfterCreation")),
                suspended=bool(spec.get("suspend")),
                comment_only=_comment_only(spec),
                schedule=spec.get("schedule"),
                last_run_id=str(run_id) if run_id is not None else None,
                last_run_submitted=submitted,
                failures=failures,
            )
        )
    return sorted(out, key=lambda c: c.name)


def waiting_on(checks: list[ActiveCheckInfo]) -> list[ActiveCheckInfo]:
    """The checks the `wait-for-active-checks` hook (and so a running apply) still waits on.
    A failed one is not waited on any more: it aborts the release (see `hints`)."""
    finished = (*DONE, *FAILED)
    return [
        c
        for c in checks
        if c.run_after_creation and not c.comment_only and c.status not in finished
    ]


def results_by_node(check: str, slurm_nodes: list[Any]) -> dict[str, str]:
    """Latest per-node result of `check`, from Slurm drain/comment reasons naming it."""
    out = {}
    for node in slurm_nodes:
        reason = getattr(node, "reason", None) or ""
        if reason.startswith(REASON_PREFIXES) and f" {check}" in reason.split(":", 1)[0]:
            out[node.name] = reason
    return out


def hints(checks: list[ActiveCheckInfo], context: str) -> list[Hint]:
    out = []
    for c in checks:
        if c.status in FAILED:
            detail = f": {c.failures[0]}" if c.failures else ""
            out.append(
                Hint(
                    code="active-check-failed",
                    severity="error" if c.run_after_creation else "warning",
                    message=f"active check {c.name} {c.status.lower()}{detail}",
                    action=f"kubectl --context {context} -n soperator describe activecheck "
                    f"{c.name}; drained nodes name it in their reason",
                    subject=c.name,
                )
            )
    return out
