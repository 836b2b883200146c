"""Slurm's part of the verdict: drained, dead and badly registered nodes, and workers that
Kubernetes has but Slurm lacks (the rules are listed in status/verdict.py)."""

from __future__ import annotations

from npa_sop_tui.status.model import Hint, KubeState, SlurmNode, SlurmState


def judge_slurm(
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
