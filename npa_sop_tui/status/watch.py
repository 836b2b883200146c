"""`StatusWatcher`: runs the collectors and yields a `ClusterStatus` whenever it changes.

    async with StatusWatcher(StatusSettings(name="demo")) as watcher:
        async for snap in watcher.snapshots():
            render(snap)

Kubernetes is watched continuously (threads, see kube_collector.py) and Slurm is polled every
`slurm_interval` seconds over one reused SSH connection; the two fail independently. The
login host comes from settings (flag/config) or, when not given, from the login Service's
address once Kubernetes reports it. Intervals can be changed while running
(`set_interval`), `refresh()` polls at once, `close()` ends everything cleanly.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal

from npa_sop_tui.status.apply_deadlines import ApplyWaitTracker
from npa_sop_tui.status.hostkeys import HostKeyChanged, HostKeyPolicy, HostKeyUnknown, KnownHosts
from npa_sop_tui.status.kube_collector import KubeCollector
from npa_sop_tui.status.kube_informer import KubeSettings
from npa_sop_tui.status.model import (
    ApplyWaitDeadline,
    ClusterStatus,
    Freshness,
    KubeState,
    LoginTarget,
    SlurmState,
    WorkerCapacity,
)
from npa_sop_tui.status.sinfo_memo import SinfoMemo
from npa_sop_tui.status.slurm import SinfoParseError, SlurmCommandFailed
from npa_sop_tui.status.slurm_poll import collect_slurm
from npa_sop_tui.status.ssh import Backoff, SshSession, SshTarget, SshUnavailable, backoff_cap
from npa_sop_tui.status.verdict import compute_verdict
from npa_sop_tui.status.verdict_context import HintPolicy, VerdictContext
from npa_sop_tui.status.watch_settings import (
    StatusSettings,
    last_validation,
    verdict_context_for,
)

Source = Literal["kube", "slurm"]

SlurmSource = Callable[[], Awaitable[SlurmState]]
"""Where Slurm state comes from when not over SSH (the sandbox's simulated Slurm): polled
on the same rhythm as sinfo would be, so its freshness is real and snapshots keep coming."""


class StatusWatcher:
    def __init__(
        self,
        settings: StatusSettings,
        *,
        host_key_policy: HostKeyPolicy | None = None,
        hint_policy: HintPolicy | None = None,
        slurm_source: SlurmSource | None = None,
        slurm_note: str | None = None,
    ) -> None:
        self.settings = settings
        self._slurm_source = slurm_source
        self._slurm_note = slurm_note
        self.policy = host_key_policy or HostKeyPolicy()
        self.hint_policy = hint_policy
        self._intervals: dict[Source, float] = {
            "kube": settings.kube_coalesce,
            "slurm": settings.slurm_interval,
        }
        self._wake = asyncio.Event()  # something changed: build a snapshot
        self._poll_now = asyncio.Event()  # refresh() or interval change: poll Slurm at once
        self._kube: KubeCollector | None = None
        self._session: SshSession | None = None
        self._slurm: SlurmState | None = None
        self._slurm_fresh = Freshness(state="disabled" if not settings.slurm_enabled else "pending")
        self._slurm_task: asyncio.Task[None] | None = None
        self._poll_lock = asyncio.Lock()
        self._started = False
        self._closed = False
        self._workers: list[WorkerCapacity] = []
        self._capacity_status: Literal["applied", "unknown"] = "unknown"
        self._gpu_validation: dict[str, object] | None = None
        self.polls = 0
        self.successes = 0
        """Successful Slurm polls so far (a new one is a new snapshot even if nothing changed)."""
        self._closing: set[asyncio.Task[None]] = set()
        self._context: VerdictContext | None = None
        self._sinfo_memo = SinfoMemo()
        self._apply_waits = ApplyWaitTracker(settings.name)
        self._apply_now: list[ApplyWaitDeadline] = []

    # --- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> StatusWatcher:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        from npa_sop_tui.status.capacity import capacity_for

        self._workers, status = await asyncio.to_thread(
            capacity_for, self.settings.name, self.settings.terraform_dir
        )
        self._capacity_status = "applied" if status == "applied" else "unknown"
        self._gpu_validation = await asyncio.to_thread(last_validation, self.settings.name)
        self._context = await asyncio.to_thread(
            verdict_context_for, self.settings, self.hint_policy
        )
        s = self.settings
        if s.kube_enabled:
            self._kube = KubeCollector(
                KubeSettings(
                    context=s.kube_context,
                    kubeconfig=s.kubeconfig,
                    watch_timeout=s.watch_timeout,
                    # Retries never wait longer than the refresh interval (at least 1 s).
                    backoff_max=backoff_cap(s.slurm_interval),
                ),
                on_change=self._on_kube_change,
            )
            await self._kube.start()
        if s.slurm_enabled:
            self._slurm_task = asyncio.create_task(self._slurm_loop(), name="slurm-poll")

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._slurm_task is not None:
            self._slurm_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._slurm_task
        if self._session is not None:
            await self._session.close()
        if self._kube is not None:
            await self._kube.close()
        self._wake.set()

    # --- control -------------------------------------------------------------------------

    def set_interval(self, source: Source, seconds: float) -> None:
        """Change how often Slurm is polled / how long Kubernetes events are coalesced."""
        if seconds < 0 or (source == "slurm" and seconds <= 0):
            raise ValueError(f"interval for {source} must be positive, got {seconds}")
        self._intervals[source] = seconds
        if source == "slurm":
            # Backoff follows the refresh interval, so data returns within two of them.
            cap = backoff_cap(seconds, self.settings.ssh_backoff_max)
            if self._session is not None:
                self._session.backoff.maximum = cap
            if self._kube is not None:
                self._kube.settings.backoff_max = backoff_cap(seconds)
            self._poll_now.set()  # start the new rhythm now, not after the old wait

    def interval(self, source: Source) -> float:
        return self._intervals[source]

    async def refresh(self) -> ClusterStatus:
        """Poll Slurm now (Kubernetes is watched continuously) and return a snapshot."""
        await self.start()
        if self.settings.slurm_enabled:
            await self._poll_slurm()
        self._wake.set()
        self._apply_now = await asyncio.to_thread(self._apply_waits.update)
        return self.snapshot()

    # --- snapshots -----------------------------------------------------------------------

    async def snapshots(self, *, initial_timeout: float = 10.0) -> AsyncIterator[ClusterStatus]:
        """Yield the first complete snapshot, then one per change and one per successful Slurm
        poll (so `freshness.updated_at` is always the last success), until `close()`."""
        await self.start()
        await self._wait_initial(initial_timeout)
        last: str | None = None
        last_success = -1
        while not self._closed:
            # Building and fingerprinting a 10,000-node snapshot takes ~0.2 s: use a thread.
            success = self.successes
            snap, key = await asyncio.to_thread(self._snapshot_and_key)
            if key != last or success != last_success:
                last, last_success = key, success
                yield snap
            self._wake.clear()
            await self._wake.wait()
            if self._closed:
                break
            if self._intervals["kube"] > 0:
                await asyncio.sleep(self._intervals["kube"])

    async def _wait_initial(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._initial_done():
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(0.0, deadline - time.monotonic()))

    def _initial_done(self) -> bool:
        kube_done = self._kube is None or self._kube_fresh().state != "pending"
        slurm_done = self._slurm_fresh.state != "pending"
        return kube_done and slurm_done

    def _snapshot_and_key(self) -> tuple[ClusterStatus, str]:
        # in a worker thread: reads what the running deploy appended to its log
        self._apply_now = self._apply_waits.update()
        snap = self.snapshot()
        return snap, snap.content_key()

    def snapshot(self) -> ClusterStatus:
        kube_state = self._kube_state()
        kf = self._kube_fresh()
        freshness: dict[Literal["kube", "slurm"], Freshness] = {
            "kube": kf,
            "slurm": self._slurm_fresh.model_copy(),
        }
        verdict = compute_verdict(
            kube=kube_state,
            slurm=self._slurm,
            freshness=dict(freshness),
            workers=self._workers,
            context=self._context,
        )
        return ClusterStatus(
            name=self.settings.name,
            context=self.settings.kube_context,
            sinfo=self._slurm.sinfo_text if self._slurm else "",
            workers=self._workers,
            capacity_status=self._capacity_status,
            taken_at=time.time(),
            login=self._login(),
            kube=kube_state,
            slurm=self._slurm,
            freshness=freshness,
            verdict=verdict,
            gpu_validation=self._gpu_validation,
            apply_waits=self._apply_now,
        )

    # --- kube ----------------------------------------------------------------------------

    def _on_kube_change(self) -> None:
        self._wake.set()
        # The login address may just have appeared: don't wait a whole interval for Slurm.
        waiting = self._slurm_fresh.state in ("pending", "disabled")
        if waiting and self.settings.slurm_enabled and self._login().host is not None:
            if self._slurm_fresh.state == "disabled":
                self._slurm_fresh = Freshness(state="pending", note="connecting to the login node")
            self._poll_now.set()

    def _kube_state(self) -> KubeState | None:
        if self._kube is None:
            return None
        synced, _, _, _ = self._kube.health()
        return self._kube.snapshot() if synced else None

    def _kube_fresh(self) -> Freshness:
        if self._kube is None:
            return Freshness(state="disabled", note="Kubernetes collection is off")
        synced, error, since, last_ok = self._kube.health()
        if error:
            return Freshness(
                state="stale" if synced else "error",
                updated_at=last_ok,
                stale_since=since if synced else None,
                error=error,
            )
        if not synced:
            return Freshness(state="pending", note="listing Kubernetes objects")
        return Freshness(state="fresh", updated_at=last_ok)

    # --- slurm ---------------------------------------------------------------------------

    def _login(self) -> LoginTarget:
        s = self.settings
        if s.login_host:
            return LoginTarget(
                host=s.login_host,
                port=s.login_port,
                user=s.login_user,
                source=s.login_source if s.login_source != "none" else "flag",
            )
        ip = None
        if self._kube is not None:
            state = self._kube_state()
            ip = state.login_ip if state else None
        if ip:
            return LoginTarget(host=ip, port=s.login_port, user=s.login_user, source="service")
        return LoginTarget(port=s.login_port, user=s.login_user, source="none")

    def _session_for(self, login: LoginTarget) -> SshSession:
        assert login.host is not None
        target = SshTarget(
            host=login.host,
            port=login.port,
            user=login.user,
            identity_file=self.settings.identity_file,
        )
        if self._session is None or self._session.target != target:
            old = self._session
            if old is not None:  # the login address changed: let the old connection go
                task = asyncio.get_running_loop().create_task(old.close())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
            self._session = SshSession(
                target,
                policy=self.policy,
                known_hosts=KnownHosts(self.settings.known_hosts),
                backoff=Backoff(
                    maximum=backoff_cap(self._intervals["slurm"], self.settings.ssh_backoff_max)
                ),
            )
        return self._session

    async def _slurm_loop(self) -> None:
        while not self._closed:
            await self._poll_slurm()
            self._poll_now.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._poll_now.wait(), self._intervals["slurm"])

    async def _poll_slurm(self) -> None:
        async with self._poll_lock:
            if self._slurm_source is not None:
                await self._poll_source(self._slurm_source)
                return
            login = self._login()
            if login.host is None:
                if self._kube is not None and self._kube_fresh().state == "pending":
                    state: Literal["pending", "disabled"] = "pending"
                    note = "waiting for Kubernetes to report the login Service address"
                elif self._kube is not None:
                    state, note = "disabled", "the login Service has no address yet"
                else:
                    state = "disabled"
                    note = "no login host: pass --login-host or set login.host in config"
                self._slurm_fresh = Freshness(state=state, note=note)
                self._wake.set()
                return
            session = self._session_for(login)
            self.polls += 1
            try:
                state = await collect_slurm(
                    session,
                    host=login.host,
                    fmt=self.settings.slurm_format,
                    timeout=self.settings.command_timeout,
                    memo=self._sinfo_memo,
                )
            except (HostKeyChanged, HostKeyUnknown, SshUnavailable) as exc:
                self._slurm_failed(exc.render())
            except (SlurmCommandFailed, SinfoParseError) as exc:
                self._slurm_failed(str(exc))
            except Exception as exc:  # anything unforeseen must not end the poll loop
                self._slurm_failed(f"{type(exc).__name__}: {exc}")
            else:
                self._slurm_succeeded(state)
            self._wake.set()

    async def _poll_source(self, source: SlurmSource) -> None:
        self.polls += 1
        try:
            state = await source()
        except Exception as exc:  # anything unforeseen must not end the poll loop
            self._slurm_failed(f"{type(exc).__name__}: {exc}")
        else:
            self._slurm_succeeded(state)
        self._wake.set()

    def _slurm_succeeded(self, state: SlurmState) -> None:
        self._slurm = state
        self._slurm_fresh = Freshness(state="fresh", updated_at=time.time(), note=self._slurm_note)
        self.successes += 1

    def _slurm_failed(self, message: str) -> None:
        prev = self._slurm_fresh
        if self._slurm is None:
            self._slurm_fresh = Freshness(state="error", error=message)
            return
        since = prev.stale_since if prev.state == "stale" and prev.stale_since else time.time()
        self._slurm_fresh = Freshness(
            state="stale", updated_at=prev.updated_at, stale_since=since, error=message
        )
