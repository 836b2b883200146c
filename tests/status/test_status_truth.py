"""Truthful live state: ages count from the last success and keep counting; failures and
overdue answers are stale at once; verdicts know destroyed / failed / interrupted / sandbox."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import pytest

from npa_sop_tui.status.freshness import view
from npa_sop_tui.status.hostkeys import HostKeyPolicy
from npa_sop_tui.status.model import (
    ClusterStatus,
    Freshness,
    KubeState,
)
from npa_sop_tui.status.verdict import compute_verdict
from npa_sop_tui.status.verdict_context import HintPolicy, VerdictContext
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher

from testkit.kube import progressing_kube
from testkit.substrate import Substrate
from testkit.wait import eventually, within

NOW = 1_800_000_000.0


def test_freshness_counts_from_the_last_success() -> None:
    fresh = Freshness(state="fresh", updated_at=NOW - 3)
    assert view(fresh, interval=10, now=NOW).label() == "fresh 3s"
    # an answer overdue by more than the grace is stale before the poll gives up
    late = view(fresh, interval=10, now=NOW + 20)
    assert late.state == "stale" and late.age == 23 and "no answer for 13s" in late.label()
    failed = Freshness(state="stale", updated_at=NOW - 40, stale_since=NOW - 1, error="refused")
    shown = view(failed, interval=10, now=NOW)
    assert shown.label() == "STALE 40s (refused)"  # age since the success, not the failure
    never = view(Freshness(state="error", error="no route"), now=NOW)
    assert never.label() == "error (no route)"


def _verdict(context: VerdictContext | None, kube: KubeState | None = None) -> Any:
    fresh: dict[str, Freshness] = {
        "kube": Freshness(state="fresh", updated_at=NOW),
        "slurm": Freshness(state="disabled"),
    }
    return compute_verdict(kube=kube, slurm=None, freshness=fresh, context=context)


def test_live_state_alone_says_progressing() -> None:
    assert _verdict(None, progressing_kube()).state == "progressing"


@pytest.mark.parametrize("state", ["interrupted", "failed"])
def test_after_a_stopped_deploy_nothing_is_progressing(state: str) -> None:
    context = VerdictContext(state=state, last_operation="deploy", last_message="boom")
    verdict = _verdict(context, progressing_kube())
    assert verdict.state == "failed"
    first = verdict.hints[0]
    assert first.code == f"last-deploy-{state}" and "deploy again" in first.action
    assert "boom" in first.message


def test_a_destroyed_cluster_reads_destroyed() -> None:
    verdict = _verdict(VerdictContext(state="destroyed", last_operation="destroy"))
    assert verdict.state == "destroyed"
    assert [h.code for h in verdict.hints] == ["cluster-destroyed"]


def test_an_environments_hint_policy_omits_and_rewords_hints() -> None:
    kube = progressing_kube(login_ip=None)
    real = _verdict(None, kube)
    codes = {h.code for h in real.hints}
    assert {"login-no-address", "cluster-not-available", "workers-no-nodes"} <= codes
    policy = HintPolicy(
        omit=frozenset({"workers-no-nodes"}),
        actions={"cluster-not-available": "look at the local pods"},
        kubeconfig="/tmp/k/kubeconfig",
    )
    worded = compute_verdict(
        kube=kube,
        slurm=None,
        freshness={"kube": Freshness(state="fresh", updated_at=NOW)},
        context=VerdictContext(hint_policy=policy),
    )
    by_code = {h.code: h for h in worded.hints}
    assert "workers-no-nodes" not in by_code
    assert by_code["cluster-not-available"].action == "look at the local pods"
    kubectl = [h.action for h in worded.hints if "kubectl" in h.action]
    assert kubectl and all("--kubeconfig /tmp/k/kubeconfig --context" in a for a in kubectl)
    # the policy rewords; the state and summary are the live verdict's
    assert (worded.state, worded.summary) == (real.state, real.summary)


def test_cluster_status_accepts_destroyed() -> None:
    snap = ClusterStatus(name="x", context="c", taken_at=NOW)
    snap.verdict = _verdict(VerdictContext(state="destroyed"))
    assert ClusterStatus.model_validate(snap.model_dump(mode="json")).verdict.state == "destroyed"


@pytest.mark.slurm
async def test_every_successful_poll_is_a_snapshot_even_without_change(
    substrate: Substrate,
) -> None:
    settings = StatusSettings(
        name="lab",
        kube_enabled=False,
        login_host=substrate.host,
        login_port=substrate.port,
        login_user=substrate.user,
        identity_file=substrate.key,
        slurm_interval=0.3,
    )
    stamps: list[float] = []
    async with (
        asyncio.timeout(30),
        StatusWatcher(settings, host_key_policy=HostKeyPolicy.accept_new()) as watcher,
    ):
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            stamps.append(snap.freshness["slurm"].updated_at or 0.0)
            if len(stamps) == 3:
                break
    assert stamps == sorted(stamps) and len(set(stamps)) == 3
    assert time.time() - stamps[-1] < 5


async def test_status_watch_text_redraws_every_second(monkeypatch: pytest.MonkeyPatch) -> None:
    from npa_sop_tui.cli import status_cmds
    from npa_sop_tui.status import render

    drawn: list[float] = []
    original = render.render_status

    def spy(snap: ClusterStatus, **kw: Any) -> Any:
        drawn.append(time.monotonic())
        return original(snap, **kw)

    monkeypatch.setattr(render, "render_status", spy)
    snap = ClusterStatus(
        name="demo",
        context="nebius-demo-slurm",
        taken_at=time.time(),
        freshness={"kube": Freshness(state="fresh", updated_at=time.time()), "slurm": Freshness()},
    )

    async def one_then_quiet() -> Any:
        yield snap
        # No new snapshot: the stream stays quiet until two redraws came on their own.
        await eventually(lambda: len(drawn) >= 3, timeout=30, what="redraws between snapshots")

    assert await status_cmds._watch_text(one_then_quiet(), interval=10) == 0
    # one draw for the snapshot, then one a second (a loaded machine only makes gaps longer)
    gaps = [later - earlier for earlier, later in itertools.pairwise(drawn)]
    assert all(gap >= 0.9 for gap in gaps[:2]), gaps
