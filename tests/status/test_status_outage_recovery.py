"""Recovery after an outage: sshd (our own, on the real Slurm) and the kube API server both go
away for a while; each source turns stale at once, and both come back within two refresh
intervals of their return, because retry backoff is capped at the refresh interval.

The outage lasts 45 s, as in the bug report: an uncapped backoff (0.5, 1, 2, 4, 8, 16 s …)
would by then wait far longer than two 2 s intervals after the services return.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.status.hostkeys import HostKeyPolicy
from npa_sop_tui.status.model import ClusterStatus
from npa_sop_tui.status.ssh import Backoff, backoff_cap
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher

from testkit.substrate import PrivateSshd, Substrate

INTERVAL = 2.0
OUTAGE = 45.0


async def _until(
    w: StatusWatcher, check: Callable[[ClusterStatus], bool], timeout: float, what: str
) -> tuple[ClusterStatus, float]:
    start = time.monotonic()
    while True:
        snap = w.snapshot()
        if check(snap):
            return snap, time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"{what}: not within {timeout:g}s: {snap.freshness}")
        await asyncio.sleep(0.05)


def _state(snap: ClusterStatus, source: str) -> str:
    return snap.freshness[source].state  # type: ignore[index]


@pytest.mark.slurm
@pytest.mark.slow
async def test_sshd_and_kube_api_back_within_two_intervals(
    substrate: Substrate,
    private_sshd: PrivateSshd,
    fake_kube: FakeKubeServer,
    kubeconfig: Path,
    tmp_path: Path,
) -> None:
    settings = StatusSettings(
        name="demo",
        kubeconfig=kubeconfig,
        login_host=substrate.host,
        login_port=private_sshd.port,
        login_user=substrate.user,
        identity_file=substrate.key,
        known_hosts=tmp_path / "known_hosts",
        slurm_interval=INTERVAL,
        kube_coalesce=0.1,
        command_timeout=5,
    )
    async with StatusWatcher(settings, host_key_policy=HostKeyPolicy.accept_new()) as w:
        both_fresh = lambda s: _state(s, "kube") == "fresh" and _state(s, "slurm") == "fresh"  # noqa: E731
        await _until(w, both_fresh, 20, "first data")

        private_sshd.stop()
        fake_kube.stop()
        down_at = time.monotonic()
        # Stale at once: the next failed read (within one interval) says so.
        _, took = await _until(
            w,
            lambda s: _state(s, "kube") == "stale" and _state(s, "slurm") == "stale",
            INTERVAL + 3,
            "both stale",
        )
        snap = w.snapshot()
        assert snap.slurm is not None and snap.kube is not None  # old data kept while stale
        await asyncio.sleep(max(0.0, OUTAGE - (time.monotonic() - down_at)))

        private_sshd.start()
        fake_kube.start()
        back_at = time.time()
        back = lambda s: all(  # noqa: E731
            _state(s, src) == "fresh" and (s.freshness[src].updated_at or 0) >= back_at
            for src in ("kube", "slurm")
        )
        _, took = await _until(w, back, 4 * INTERVAL, "data back")
        assert took <= 2 * INTERVAL, f"data came back {took:.1f}s after the outage ended"


def test_backoff_is_capped_at_the_interval_with_jitter() -> None:
    assert backoff_cap(2.0) == 2.0
    assert backoff_cap(0.2) == 1.0  # never below 1 s
    assert backoff_cap(120.0, 30.0) == 30.0
    backoff = Backoff(initial=0.5, maximum=backoff_cap(2.0))
    waits = [backoff.failed() for _ in range(12)]
    assert max(waits) <= 2.0 and min(waits[3:]) >= 1.0  # capped, and jitter takes ≤ half
    assert len({round(w, 6) for w in waits[3:]}) > 1  # not lockstep
    backoff.reset()
    assert backoff.failed() <= 0.5
