"""Kubernetes collection through the official client, a real kubeconfig and the in-repo fake
API server, with scripted faults: dropped watch, 410 Gone, 500s, expired bookmark."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import (
    make_login_service,
    make_node,
    make_nodeset,
    make_operator_pod,
    make_pod,
    make_slurmcluster,
    set_node_ready,
)
from npa_sop_tui.status.kube_collector import KubeCollector, _join_all
from npa_sop_tui.status.kube_informer import KubeSettings
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher

from testkit.kube import CONTEXT
from testkit.wait import eventually, within


def collector(kubeconfig: Path, **kw: object) -> KubeCollector:
    return KubeCollector(
        KubeSettings(
            context=CONTEXT,
            kubeconfig=kubeconfig,
            watch_timeout=2,
            backoff_initial=0.1,
            backoff_max=0.4,
            **kw,
        )
    )  # type: ignore[arg-type]


def watches(srv: FakeKubeServer, resource: str) -> list[str]:
    return [q for m, q in srv.requests if f"/{resource}?" in q and "watch=true" in q]


def lists(srv: FakeKubeServer, resource: str) -> list[str]:
    return [q for m, q in srv.requests if q.endswith(f"/{resource}")]


async def test_nodes_turn_ready_over_time_and_verdict_follows(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    srv = fake_kube
    srv.add("nodes", make_node("sys-0", nodeset="system"))
    for i in range(2):
        srv.add("nodes", make_node(f"w{i}", pool="worker", ready=False, gpu=True))
    srv.add("slurmclusters", make_slurmcluster())
    srv.add("nodesets", make_nodeset("worker", replicas=2, ready=0, phase="Provisioning"))
    srv.add("services", make_login_service("203.0.113.9"))
    srv.add("pods", make_operator_pod())  # soperator-system: the operator reconciles it
    settings = StatusSettings(
        name="demo", kubeconfig=kubeconfig, slurm_enabled=False, kube_coalesce=0.05, watch_timeout=2
    )
    seen: list[tuple[int, str]] = []
    async with StatusWatcher(settings) as watcher:
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            assert snap.kube is not None and snap.freshness["kube"].state == "fresh"
            group = next(g for g in snap.kube.node_groups if g.name == "worker")
            seen.append((group.ready, snap.verdict.state))
            assert snap.login.host == "203.0.113.9" and snap.login.source == "service"
            if group.ready < 2:
                srv.patch("nodes", f"w{group.ready}", lambda o: set_node_ready(o, True))
            elif snap.verdict.state != "ready":
                srv.upsert("nodesets", make_nodeset("worker", replicas=2, ready=2))
            else:
                break
    assert seen[0] == (0, "degraded")  # NotReady nodes in a group are reported
    assert (1, "degraded") in seen and (2, "progressing") in seen
    assert seen[-1] == (2, "ready")
    # The client used the context from the kubeconfig (its current-context is a decoy) and
    # watched with bookmarks and a timeout.
    assert any(
        "allowWatchBookmarks=true" in q and "timeoutSeconds=2" in q for q in watches(srv, "nodes")
    )


async def test_dropped_watch_resumes_from_last_version(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    srv = fake_kube
    srv.add("nodes", make_node("w0", pool="worker"))
    col = collector(kubeconfig)
    await col.start()
    try:
        await eventually(lambda: len(watches(srv, "nodes")) >= 1, what="first watch")
        relists = col.resource_states()["nodes"].relists
        assert srv.drop_watches("nodes") == 1
        srv.add("nodes", make_node("w1", pool="worker"))
        await eventually(
            lambda: "/w1" in str(col.resource_states()["nodes"].objects),
            what="node added after the drop",
        )
        st = col.resource_states()["nodes"]
        assert st.relists == relists, "a dropped stream is resumed, not re-listed"
        assert st.error is None
        resumed = watches(srv, "nodes")[-1]
        assert "resourceVersion=" in resumed and "resourceVersion=&" not in resumed
    finally:
        await col.close()


async def test_410_gone_relists(fake_kube: FakeKubeServer, kubeconfig: Path) -> None:
    srv = fake_kube
    srv.add("nodes", make_node("w0", pool="worker"))
    col = collector(kubeconfig)
    await col.start()
    try:
        await eventually(lambda: len(watches(srv, "nodes")) >= 1)
        before = len(lists(srv, "nodes"))
        srv.gone("nodes")
        srv.add("nodes", make_node("w1", pool="worker"))
        await eventually(
            lambda: len(col.snapshot().node_groups[0].nodes) == 2, what="w1 after re-list"
        )
        assert len(lists(srv, "nodes")) == before + 1
        assert col.resource_states()["nodes"].relists == 2
        assert col.health()[1] is None
    finally:
        await col.close()


async def test_expired_bookmark_leads_to_relist(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    srv = fake_kube
    srv.add("nodes", make_node("w0", pool="worker"))
    col = collector(kubeconfig)
    await col.start()
    try:
        await eventually(lambda: len(watches(srv, "nodes")) >= 1)
        before = len(lists(srv, "nodes"))
        srv.expire_bookmark("nodes")
        await eventually(lambda: len(lists(srv, "nodes")) == before + 1, what="re-list")
        # The resume used the bookmark's version (the newest the client had seen).
        bookmark_rv = srv._rv - 1
        assert any(
            f"resourceVersion={bookmark_rv}&" in q or q.endswith(f"resourceVersion={bookmark_rv}")
            for q in watches(srv, "nodes")
        )
        srv.patch("nodes", "w0", lambda o: set_node_ready(o, False))
        await eventually(
            lambda: col.snapshot().node_groups[0].ready == 0, what="changes seen after the re-list"
        )
    finally:
        await col.close()


async def test_500s_mark_kube_stale_then_recover(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    srv = fake_kube
    srv.add("pods", make_pod("controller-0", "controller"))
    settings = StatusSettings(
        name="demo", kubeconfig=kubeconfig, slurm_enabled=False, kube_coalesce=0.05, watch_timeout=2
    )
    states: list[str] = []
    async with StatusWatcher(settings) as watcher:
        watcher._kube.settings.backoff_initial = 0.1  # type: ignore[union-attr]
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            f = snap.freshness["kube"]
            states.append(f.state)
            assert snap.kube is not None
            assert [p.name for c in snap.kube.components for p in c.pods] == ["controller-0"]
            if len(states) == 1:
                srv.fail_next("pods", 2, status=500)
                srv.drop_watches("pods")
                srv.drop_watches("pods")
            elif f.state == "stale":
                assert "HTTP 500" in (f.error or "") and f.stale_since is not None
            elif "stale" in states and f.state == "fresh":
                break
    assert states[0] == "fresh" and "stale" in states and states[-1] == "fresh"


async def test_missing_crds_are_not_yet_not_errors(tmp_path: Path) -> None:
    with FakeKubeServer(crds=False, bookmark_interval=0.2) as srv:
        kc = srv.write_kubeconfig(tmp_path / "kc", CONTEXT)
        col = collector(kc, crd_poll=0.2)
        await col.start()
        try:
            await eventually(lambda: col.health()[0], what="synced")
            snap = col.snapshot()
            assert not snap.slurm_cluster_crd and snap.slurm_cluster is None
            assert col.health()[1] is None
            srv.register_crd("slurmclusters")
            srv.add("slurmclusters", make_slurmcluster("Not available"))
            await eventually(lambda: col.snapshot().slurm_cluster is not None, what="CR")
            assert col.snapshot().slurm_cluster_crd
            assert col.snapshot().slurm_cluster.phase == "Not available"  # type: ignore[union-attr]
        finally:
            await col.close()


async def test_unreachable_api_is_an_error_not_a_crash(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = FakeKubeServer(port=port)  # never started: nothing listens there
    kc = srv.write_kubeconfig(tmp_path / "kc", CONTEXT)
    settings = StatusSettings(name="demo", kubeconfig=kc, slurm_enabled=False)
    async with StatusWatcher(settings) as watcher:
        snap = await watcher.refresh()
        await eventually(lambda: watcher.snapshot().freshness["kube"].state == "error")
        snap = watcher.snapshot()
        assert snap.kube is None
        assert "connection refused" in (snap.freshness["kube"].error or "").lower()
        assert snap.verdict.state == "unknown"


async def test_missing_context_is_reported(tmp_path: Path, fake_kube: FakeKubeServer) -> None:
    kc = fake_kube.write_kubeconfig(tmp_path / "kc", "some-other-context")
    settings = StatusSettings(name="demo", kubeconfig=kc, slurm_enabled=False)
    async with StatusWatcher(settings) as watcher:
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            f = snap.freshness["kube"]
            assert f.state == "error"
            assert "nebius-demo-slurm" in (f.error or "") and "get-credentials" in (f.error or "")
            break


async def test_close_stops_every_watch_thread(fake_kube: FakeKubeServer, kubeconfig: Path) -> None:
    import threading

    def kube_threads() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("kube-")}

    # only this watcher's threads: earlier tests in the same worker process may still own some
    before = kube_threads()
    settings = StatusSettings(
        name="demo", kubeconfig=kubeconfig, slurm_enabled=False, watch_timeout=30
    )
    async with StatusWatcher(settings) as watcher:
        await watcher.refresh()
        await eventually(lambda: len(watches(fake_kube, "pods")) >= 1, what="watching")
        mine = kube_threads() - before
        assert mine
    # The watches were cut at close, not left to run out their 30 s timeout.
    await eventually(
        lambda: not any(t.is_alive() for t in mine),
        timeout=10,  # well under the 30 s a watch would otherwise run on
        what="kube threads to end",
    )


def test_closing_waits_for_stuck_watch_threads_once_not_once_each() -> None:
    stuck = threading.Event()
    threads = [threading.Thread(target=stuck.wait, daemon=True) for _ in range(6)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    try:
        _join_all(threads, 0.3)
        waited = time.monotonic() - started
    finally:
        stuck.set()
    # six watches blocked in a read: one shared deadline, not 6 x 0.3 s
    assert 0.3 <= waited < 1.2


async def test_an_ingress_with_both_an_ip_and_a_hostname_gives_the_watcher_the_ip(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    svc = make_login_service(None)
    svc["status"]["loadBalancer"]["ingress"] = [{"hostname": "lb.example", "ip": "203.0.113.7"}]
    fake_kube.add("services", svc)
    settings = StatusSettings(name="demo", kubeconfig=kubeconfig, slurm_enabled=False)
    async with StatusWatcher(settings) as watcher:
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            if snap.kube is not None:
                assert (snap.login.host, snap.login.source) == ("203.0.113.7", "service")
                break


@pytest.mark.parametrize("source", ["flag", "config", "none"])
async def test_a_configured_login_host_wins_over_the_service_in_the_live_watcher(
    fake_kube: FakeKubeServer, kubeconfig: Path, source: str
) -> None:
    fake_kube.add("services", make_login_service("203.0.113.9"))
    settings = StatusSettings(
        name="demo",
        kubeconfig=kubeconfig,
        slurm_enabled=False,
        login_host="login.example",
        login_port=2200,
        login_user="ops",
        login_source=source,  # type: ignore[arg-type]
    )
    async with StatusWatcher(settings) as watcher:
        async for snap in within(watcher.snapshots(), what="status snapshots"):
            if snap.kube is not None and snap.kube.login_ip == "203.0.113.9":
                login = snap.login
                assert (login.host, login.port, login.user) == ("login.example", 2200, "ops")
                assert login.source == ("flag" if source == "none" else source)
                break
