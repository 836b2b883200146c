"""Real sinfo over real SSH (asyncssh → sshd → slurmctld on loopback)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import pytest

from npa_sop_tui.home.paths import known_hosts_path
from npa_sop_tui.status.hostkeys import HostKeyChanged, HostKeyPolicy, HostKeyUnknown, KnownHosts
from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.status.sinfo_json import nodes_json_command, parse_sinfo_json
from npa_sop_tui.status.sinfo_summary import SUMMARY_CMD, VERSION_CMD
from npa_sop_tui.status.slurm import NODES_DELIMITED_CMD, SlurmCommandFailed, parse_nodes_delimited
from npa_sop_tui.status.slurm_poll import collect_slurm
from npa_sop_tui.status.ssh import SshSession, SshTarget
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher

from testkit.gpu_lab import LABS, GpuLab
from testkit.substrate import PrivateSshd, Substrate
from testkit.wait import eventually, within


def session(sub: Substrate, *, port: int | None = None, accept: bool = True) -> SshSession:
    target = SshTarget(host=sub.host, port=port or sub.port, user=sub.user, identity_file=sub.key)
    return SshSession(target, policy=HostKeyPolicy.accept_new() if accept else HostKeyPolicy())


@pytest.mark.slurm
async def test_sinfo_over_ssh_parses_partitions_and_nodes(substrate: Substrate) -> None:
    s = session(substrate)
    try:
        state = await collect_slurm(s, host=substrate.host)
        # The substrate runs Slurm 22.05 (`sinfo -V`, asked once per connection).
        assert state.version and state.version.startswith("22.05")
        assert state.source_format == "delimited"
        parts = {p.name: p for p in state.partitions}
        assert set(parts) == {"main", "debug"}
        assert parts["main"].default and not parts["debug"].default
        assert parts["debug"].timelimit == "30:00"
        assert sorted(parts["main"].nodes)[:3] == ["gpu-001", "gpu-002", "gpu-003"]
        nodes = {n.name: n for n in state.nodes}
        gpu = nodes["gpu-001"]
        assert gpu.cpus == 128 and gpu.memory_mb == 1000000 and gpu.gres == "gpu:h100:8"
        assert gpu.features == ["gpu_h100_sxm", "network_ssd"]
        assert "NOT_RESPONDING" in gpu.flags or gpu.state == "unknown"  # never answers
        real = [n for n in state.nodes if not n.name.startswith("gpu-")]
        assert len(real) == 1 and sorted(real[0].partitions) == ["debug", "main"]
        assert real[0].state in ("idle", "mixed", "allocated")
        assert "PARTITION" in state.sinfo_text
        assert s.connects == 1
        # One reused connection: more polls, no new connection.
        await asyncio.gather(*(collect_slurm(s, host=substrate.host) for _ in range(4)))
        assert s.connects == 1
    finally:
        await s.close()


@pytest.mark.slurm
async def test_json_and_delimited_agree_on_the_live_cluster(
    substrate: Substrate, drained_node: tuple[str, str]
) -> None:
    s = session(substrate)
    try:
        for _ in range(3):  # a state change between the two commands would be a false alarm
            js, txt = await asyncio.gather(
                s.run(nodes_json_command("22.05")), s.run(NODES_DELIMITED_CMD)
            )
            by_json = sorted(parse_sinfo_json(js.stdout).nodes, key=lambda n: n.name)
            by_text = sorted(parse_nodes_delimited(txt.stdout), key=lambda n: n.name)
            if _unordered(by_json) == _unordered(by_text):
                break
        # a node's partitions come in no fixed order from one sinfo call to the next
        assert _unordered(by_json) == _unordered(by_text)
        assert any("DRAIN" in n.flags for n in by_json)
    finally:
        await s.close()


@pytest.mark.slurm
async def test_drained_node_shows_its_reason_and_a_hint(
    substrate: Substrate, drained_node: tuple[str, str]
) -> None:
    name, reason = drained_node
    for fmt in ("json", "delimited"):
        settings = StatusSettings(
            name="lab",
            kube_enabled=False,
            login_host=substrate.host,
            login_port=substrate.port,
            login_user=substrate.user,
            identity_file=substrate.key,
            slurm_format=fmt,
        )
        async with StatusWatcher(settings, host_key_policy=HostKeyPolicy.accept_new()) as w:
            snap = await w.refresh()
        assert snap.slurm is not None, snap.freshness
        node = next(n for n in snap.slurm.nodes if n.name == name)
        assert node.reason == reason
        assert "DRAIN" in node.flags and node.display.startswith("drained")
        hint = next(h for h in snap.verdict.hints if h.code == "node-drained-health-check")
        assert name in hint.message and "state=resume" in hint.action
        assert snap.verdict.state == "degraded"


@pytest.mark.slurm
async def test_unknown_host_key_is_refused_then_accepted_with_consent(
    substrate: Substrate,
) -> None:
    refused = session(substrate, accept=False)
    with pytest.raises(HostKeyUnknown) as err:
        await refused.run("true")
    assert "--accept-new-host-key" in err.value.render()
    assert KnownHosts().lookup(substrate.host, substrate.port) == []

    asked: list[str] = []

    async def consent(host: str, port: int, entry: object) -> bool:
        asked.append(f"{host}:{port} {entry.fingerprint}")  # type: ignore[attr-defined]
        return True

    s = SshSession(refused.target, policy=HostKeyPolicy(consent))
    try:
        assert (await s.run("echo ok")).stdout.strip() == "ok"
    finally:
        await s.close()
    assert len(asked) == 1 and asked[0].startswith("127.0.0.1:2222 SHA256:")
    recorded = KnownHosts().lookup(substrate.host, substrate.port)
    assert [e.key_b64 for e in recorded] == [substrate.host_pub]
    assert known_hosts_path().read_text().startswith("[127.0.0.1]:2222 ssh-ed25519 ")
    # Known now: a refusing policy connects without being asked.
    again = session(substrate, accept=False)
    try:
        assert (await again.run("echo ok")).exit_status == 0
    finally:
        await again.close()


@pytest.mark.slurm
async def test_changed_host_key_is_refused_even_with_accept_new(
    substrate: Substrate, private_sshd: PrivateSshd
) -> None:
    s = session(substrate, port=private_sshd.port)
    try:
        assert (await s.run("echo first")).stdout.strip() == "first"
    finally:
        await s.close()
    before = known_hosts_path().read_text()
    private_sshd.stop()
    private_sshd.new_host_key()
    private_sshd.start()
    s = session(substrate, port=private_sshd.port)  # accept_new: still must refuse
    with pytest.raises(HostKeyChanged) as err:
        await s.run("echo second")
    text = err.value.render()
    assert "HAS CHANGED" in text and f"[127.0.0.1]:{private_sshd.port}" in text
    assert known_hosts_path().read_text() == before  # nothing auto-accepted


@pytest.mark.slurm
async def test_sshd_stopped_mid_watch_marks_slurm_stale_and_recovers(
    substrate: Substrate, private_sshd: PrivateSshd
) -> None:
    settings = StatusSettings(
        name="lab",
        kube_enabled=False,
        login_host=substrate.host,
        login_port=private_sshd.port,
        login_user=substrate.user,
        identity_file=substrate.key,
        slurm_interval=0.3,
        ssh_backoff_max=0.5,
        command_timeout=5,
    )
    phases: list[str] = []
    async with (
        asyncio.timeout(40),
        StatusWatcher(settings, host_key_policy=HostKeyPolicy.accept_new()) as w,
    ):
        async for snap in within(w.snapshots(), what="status snapshots"):
            f = snap.freshness["slurm"]
            phases.append(f.state)
            if len(phases) == 1:
                assert f.state == "fresh" and snap.slurm is not None
                private_sshd.stop()  # drops the live connection too
            elif f.state == "stale":
                assert snap.slurm is not None, "old data is kept while stale"
                assert f.stale_since is not None and f.error
                assert any(h.code == "slurm-unreachable" for h in snap.verdict.hints)
                if phases.count("stale") == 1:
                    private_sshd.start()
            elif f.state == "fresh" and "stale" in phases:
                break
            await asyncio.sleep(0)
        assert w._session is not None and w._session.connects == 2  # reconnected once
    assert phases[0] == "fresh" and "stale" in phases and phases[-1] == "fresh"


@pytest.mark.slurm
async def test_set_interval_changes_the_poll_rate(substrate: Substrate) -> None:
    settings = StatusSettings(
        name="lab",
        kube_enabled=False,
        login_host=substrate.host,
        login_port=substrate.port,
        login_user=substrate.user,
        identity_file=substrate.key,
        slurm_interval=60,
    )
    async with StatusWatcher(settings, host_key_policy=HostKeyPolicy.accept_new()) as w:
        await eventually(
            lambda: w.polls == 1 and w.snapshot().freshness["slurm"].state == "fresh",
            what="first poll done",
        )
        # A loop that did not wait would start the next poll on its very next turn; let it
        # run a few turns instead of sleeping a fixed time.
        for _ in range(20):
            await asyncio.sleep(0)
        assert w.polls == 1  # 60 s interval: no second poll yet
        w.set_interval("slurm", 0.1)
        await eventually(lambda: w.polls >= 4, what="faster polls")
        with pytest.raises(ValueError):
            w.set_interval("slurm", 0)


def test_known_hosts_file_is_plain_openssh(tmp_path: Path) -> None:
    kh = KnownHosts(tmp_path / "kh")
    from npa_sop_tui.status.hostkeys import HostKeyEntry

    kh.add("10.0.0.1", 22, HostKeyEntry("ssh-ed25519", "AAAAC3NzaC1lZDI1NTE5AAAAIA=="))
    assert (tmp_path / "kh").read_text() == "10.0.0.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA==\n"
    assert kh.lookup("10.0.0.1", 22)[0].fingerprint.startswith("SHA256:")
    assert kh.lookup("10.0.0.1", 2222) == []


def test_known_hosts_reads_hashed_entries(tmp_path: Path) -> None:
    import base64
    import hashlib
    import hmac

    salt = b"0123456789abcdefghij"
    mac = hmac.new(salt, b"[10.0.0.2]:2222", hashlib.sha1).digest()
    line = f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(mac).decode()} ssh-ed25519 AAAA"
    (tmp_path / "kh").write_text(line + "\n")
    kh = KnownHosts(tmp_path / "kh")
    assert [e.key_b64 for e in kh.lookup("10.0.0.2", 2222)] == ["AAAA"]
    assert kh.lookup("10.0.0.3", 2222) == []


@pytest.mark.slurm
async def test_auto_format_falls_back_to_delimited_when_json_is_unsupported(
    substrate: Substrate,
) -> None:
    """A Slurm without `--json`: the real sinfo rejects an unknown option with exit 1."""
    s = session(substrate)

    class OldSlurm:
        async def run(self, command: str, *, timeout: float = 30.0) -> object:
            return await s.run(command.replace("--json", "--no-such-json-flag"), timeout=timeout)

    try:
        state = await collect_slurm(OldSlurm(), host=substrate.host, fmt="auto")
        assert state.source_format == "delimited"  # auto never needed --json
        assert {n.name for n in state.nodes} >= {"gpu-001", "gpu-002", "gpu-003"}
        with pytest.raises(SlurmCommandFailed, match="no-such-json-flag"):
            await collect_slurm(OldSlurm(), host=substrate.host, fmt="json")
    finally:
        await s.close()


async def test_connect_failures_back_off_instead_of_hammering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from npa_sop_tui.status import ssh
    from npa_sop_tui.status.ssh import Backoff, SshUnavailable

    # The backoff window is measured on a clock the test moves, so a stall of the machine
    # between two calls cannot push the second call out of the window (or a sleep into it).
    now = [1000.0]
    monkeypatch.setattr(ssh, "time", SimpleNamespace(monotonic=lambda: now[0]))
    attempts = 0

    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal attempts
        attempts += 1
        writer.close()  # not an SSH server: every connect fails

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    sess = SshSession(
        SshTarget("127.0.0.1", port, "nobody", connect_timeout=2),
        backoff=Backoff(initial=0.4, maximum=0.4),
    )
    try:
        with pytest.raises(SshUnavailable, match="cannot reach"):
            await sess.run("true")
        assert attempts == 1
        now[0] += 0.19
        with pytest.raises(SshUnavailable):
            await sess.run("true")  # inside the backoff window (jitter takes ≤ half): none
        assert attempts == 1
        now[0] += 0.22
        with pytest.raises(SshUnavailable, match="cannot reach"):
            await sess.run("true")  # past the whole step: tried again
        assert attempts == 2 and sess.connects == 0
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.slurm
async def test_refused_channels_are_retried_on_the_same_connection(
    tmp_path: Path, substrate: Substrate
) -> None:
    # sshd refuses sessions beyond MaxSessions; a burst must not cost a reconnect.
    folder = tmp_path / "sshd-small"
    folder.mkdir()
    sshd = PrivateSshd(folder, substrate)
    with (folder / "sshd_config").open("a") as config:
        config.write("MaxSessions 2\n")
    sshd.start()
    s = session(substrate, port=sshd.port)
    try:
        results = await asyncio.gather(*(s.run("echo ok") for _ in range(6)))
        assert [r.stdout.strip() for r in results] == ["ok"] * 6
        assert s.connects == 1
    finally:
        await s.close()
        sshd.stop()


class Counting:
    """A session that notes every command it runs."""

    def __init__(self, session: SshSession) -> None:
        self.session = session
        self.commands: list[str] = []

    async def run(self, command: str, *, timeout: float = 30.0) -> object:
        self.commands.append(command)
        return await self.session.run(command, timeout=timeout)


@pytest.mark.slurm
async def test_one_sinfo_per_refresh_gives_what_three_gave(substrate: Substrate) -> None:
    """The single call's partitions and plain text match sinfo's own, and a refresh after the
    connection's first runs exactly one command."""
    from npa_sop_tui.status.slurm import PARTITIONS_CMD, parse_partitions_delimited

    s = session(substrate)
    runner = Counting(s)
    commands = runner.commands
    try:
        await collect_slurm(runner, host=substrate.host)
        assert sorted(commands) == sorted([SUMMARY_CMD, VERSION_CMD])
        for _ in range(3):  # a state change between two commands would be a false alarm
            commands.clear()
            state, plain, parts = await asyncio.gather(
                collect_slurm(runner, host=substrate.host), s.run("sinfo"), s.run(PARTITIONS_CMD)
            )
            real_parts = parse_partitions_delimited(parts.stdout)
            if sorted(state.sinfo_text.splitlines()) == sorted(plain.stdout.splitlines()):
                break
        assert commands == [SUMMARY_CMD]
        assert sorted(state.sinfo_text.splitlines()) == sorted(plain.stdout.splitlines())
        ours = {p.name: p for p in state.partitions}
        for real in real_parts:
            mine = ours[real.name]
            assert (mine.default, mine.available, mine.timelimit) == (
                real.default,
                real.available,
                real.timelimit,
            )
            counts = (mine.nodes_allocated, mine.nodes_idle, mine.nodes_other, mine.nodes_total)
            assert counts == (
                real.nodes_allocated,
                real.nodes_idle,
                real.nodes_other,
                real.nodes_total,
            )
    finally:
        await s.close()


# --- the same over Slurm 26.05 (what depends on Slurm's output; transport tests stay above) --

ON_SLURM26 = pytest.mark.parametrize("gpu_lab", [LABS[1]], indirect=True, ids=["slurm26.05"])


def lab_session(lab: GpuLab) -> SshSession:
    target = SshTarget(lab.host, lab.port, lab.user, identity_file=lab.key)
    return SshSession(target, policy=HostKeyPolicy.accept_new())


def lab_settings(lab: GpuLab, fmt: str = "auto") -> StatusSettings:
    return StatusSettings(
        name="lab",
        kube_enabled=False,
        login_host=lab.host,
        login_port=lab.port,
        login_user=lab.user,
        identity_file=lab.key,
        slurm_format=fmt,
    )


@pytest.mark.slurm
@ON_SLURM26
async def test_slurm26_one_call_table_parses_as_sinfo_prints_it(gpu_lab: GpuLab) -> None:
    """26.05's one-call table: release, partitions `main*` and `hidden`, the nodes in both,
    one command per refresh, and the plain text equal to 26.05's own `sinfo -a`."""
    s = lab_session(gpu_lab)
    runner = Counting(s)
    commands = runner.commands
    try:
        state = await collect_slurm(runner, host="lab")
        assert state.version and state.version.startswith("26.05")
        assert state.source_format == "delimited"
        parts = {p.name: p for p in state.partitions}
        assert list(parts) == ["main", "hidden"] and parts["main"].default
        assert not parts["hidden"].default and parts["hidden"].available == "up"
        assert {n.name for n in state.nodes} == set(gpu_lab.nodes)
        assert all(sorted(n.partitions) == ["hidden", "main"] and n.gres for n in state.nodes)
        commands.clear()
        for _ in range(3):  # a state change between two commands would be a false alarm
            again, plain = await asyncio.gather(
                collect_slurm(runner, host="lab"), s.run("sinfo -a")
            )
            if sorted(again.sinfo_text.splitlines()) == sorted(plain.stdout.splitlines()):
                break
        assert sorted(again.sinfo_text.splitlines()) == sorted(plain.stdout.splitlines())
        assert set(commands) == {SUMMARY_CMD} and s.connects == 1  # the release is known
    finally:
        await s.close()


@pytest.mark.slurm
@ON_SLURM26
async def test_slurm26_drained_node_shows_its_reason_and_a_hint(gpu_lab: GpuLab) -> None:
    node, reason = gpu_lab.nodes[1], "[node_problem] gpu_health_check: XID 79 seen [hc_program]"
    s = lab_session(gpu_lab)
    drained = await s.run(f"scontrol update nodename={node} state=drain reason='{reason}'")
    assert drained.exit_status == 0, drained.stderr
    try:
        for fmt in ("json", "delimited"):
            async with StatusWatcher(
                lab_settings(gpu_lab, fmt), host_key_policy=HostKeyPolicy.accept_new()
            ) as w:
                snap = await w.refresh()
            assert snap.slurm is not None, snap.freshness
            shown = next(n for n in snap.slurm.nodes if n.name == node)
            assert shown.reason == reason and "DRAIN" in shown.flags, fmt
            assert shown.display.startswith("drained") and sorted(shown.partitions) == [
                "hidden",
                "main",
            ]
            hint = next(h for h in snap.verdict.hints if h.code == "node-drained-health-check")
            assert node in hint.message and "state=resume" in hint.action
            assert snap.verdict.state == "degraded"
    finally:
        await s.run(f"scontrol update nodename={node} state=resume")
        await s.close()


def _unordered(nodes: list[SlurmNode]) -> list[dict[str, object]]:
    return [{**n.model_dump(), "partitions": sorted(n.partitions)} for n in nodes]
