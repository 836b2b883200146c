"""How the sandbox words the status verdict's hints: it has no Nebius console, quotas, mk8s
credentials or real login nodes, so what only a real cloud can cause is left out and the
rest points at the sandbox's own pieces."""

from __future__ import annotations

from npa_sop_tui.status.verdict_context import HintPolicy

CLOUD_ONLY_HINTS = frozenset(
    {"workers-no-nodes", "login-no-address", "pods-unschedulable", "k8s-node-condition"}
)

SANDBOX_ACTIONS = {
    "kube-unreachable": "the sandbox's Kubernetes API is served by the npa process that "
    "deployed it; reopen the app (npa-sop --sandbox) or run `npa soperator status --sandbox`",
    "slurm-unreachable": "the sandbox reads Slurm from the login.host in its config; check "
    "that sshd and Slurm run there (the local substrate: bash scripts/substrate.sh start)",
}


def sandbox_hint_policy(kubeconfig: str | None) -> HintPolicy:
    return HintPolicy(omit=CLOUD_ONLY_HINTS, actions=SANDBOX_ACTIONS, kubeconfig=kubeconfig)
