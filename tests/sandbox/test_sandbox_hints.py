"""The sandbox's hint policy: hints name no real cloud and point at the sandbox's own pieces."""

from __future__ import annotations

from npa_sop_tui.sandbox.hints import sandbox_hint_policy
from npa_sop_tui.status.model import Freshness
from npa_sop_tui.status.verdict import compute_verdict
from npa_sop_tui.status.verdict_context import VerdictContext

from testkit.kube import progressing_kube

NOW = 1_800_000_000.0
KUBECONFIG = "/tmp/sandbox/kubeconfig"


def _hints(context: VerdictContext | None, kube_fresh: bool) -> dict[str, str]:
    kube = (
        Freshness(state="fresh", updated_at=NOW)
        if kube_fresh
        else Freshness(state="stale", updated_at=NOW, error="connection refused")
    )
    verdict = compute_verdict(
        kube=progressing_kube(login_ip=None),
        slurm=None,
        freshness={"kube": kube, "slurm": Freshness(state="disabled")},
        context=context,
    )
    return {h.code: f"{h.message} {h.action}" for h in verdict.hints}


def test_the_sandbox_names_no_real_cloud() -> None:
    real = _hints(None, kube_fresh=True)
    assert {"workers-no-nodes", "login-no-address"} <= set(real)  # a real cloud would say so
    assert "Nebius console" in " ".join(real.values())
    sandboxed = _hints(VerdictContext(hint_policy=sandbox_hint_policy(KUBECONFIG)), True)
    text = " ".join(sandboxed.values())
    for real_only in ("nebius mk8s", "Nebius console", "public IPs", "quota", "--identity-file"):
        assert real_only not in text
    assert "workers-no-nodes" not in sandboxed and "login-no-address" not in sandboxed


def test_an_unreachable_sandbox_api_points_at_the_sandbox() -> None:
    policy = sandbox_hint_policy(KUBECONFIG)
    hints = _hints(VerdictContext(hint_policy=policy), kube_fresh=False)
    assert "npa-sop --sandbox" in hints["kube-unreachable"]
    assert "nebius mk8s" not in hints["kube-unreachable"]
