"""SSH hardening: hostile users and hosts are refused before anything runs; `ssh` gets the
user with `-l` and the host after `--`; ~/.ssh/config (ProxyJump, IdentityFile) is
honoured by asyncssh while host keys stay pinned in npa's known_hosts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.status.hostkeys import HostKeyPolicy, KnownHosts
from npa_sop_tui.status.ssh import (
    SshSession,
    SshTarget,
    SshUnavailable,
    check_login_host,
    check_login_user,
)
from npa_sop_tui.status.watch import StatusSettings

from testkit.substrate import PrivateSshd, Substrate

NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]
HOSTILE_USERS = [
    "-oProxyCommand=touch {marker}",
    "-l",
    "root@host",
    "ro ot",
    "root;id",
    "",
    "x" * 40,
]
HOSTILE_HOSTS = [
    "-oProxyCommand=touch {marker}",
    "-p1",
    "host name",
    "user@host",
    "host;id",
    "$(touch {marker})",
    "",
    "a" * 300,
]


@pytest.mark.parametrize("user", HOSTILE_USERS)
def test_hostile_users_are_refused(user: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a valid login name"):
        check_login_user(user.format(marker=tmp_path / "m"))
    with pytest.raises(UsageError):
        SshTarget(host="127.0.0.1", user=user.format(marker=tmp_path / "m"))


@pytest.mark.parametrize("host", HOSTILE_HOSTS)
def test_hostile_hosts_are_refused(host: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a host name or IP address"):
        check_login_host(host.format(marker=tmp_path / "m"))


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "login.example.com", "::1", "[2001:db8::1]", "node_1.local"]
)
def test_plain_hosts_and_users_pass(host: str) -> None:
    assert check_login_host(host) == host.strip("[]")
    assert check_login_user("slurmops") == "slurmops"
    assert check_login_user("svc.bot-1") == "svc.bot-1"


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--login-user", "-oProxyCommand=touch {marker}"),
        ("--login-host", "-oProxyCommand=touch {marker}"),
    ],
)
def test_the_ssh_command_refuses_an_option_in_disguise(
    flag: str, value: str, tmp_path: Path, npa_home: Path
) -> None:
    marker = tmp_path / "marker"
    args = ["soperator", "ssh", "--name", "lab", "--login-host", "127.0.0.1"]
    args += [f"{flag}={value.format(marker=marker)}", "--", "true"]
    done = subprocess.run(
        [*NPA, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NPA_HOME": str(npa_home)},
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert flag in done.stderr and "Traceback" not in done.stderr
    assert not marker.exists()


def test_a_hostile_login_user_in_config_is_refused(tmp_path: Path, npa_home: Path) -> None:
    marker = tmp_path / "marker"
    (npa_home / "config.yaml").write_text(
        f"login:\n  host: 127.0.0.1\n  user: '-oProxyCommand=touch {marker}'\n"
    )
    done = subprocess.run(
        [*NPA, "soperator", "status", "--name", "lab", "--no-kube"],
        capture_output=True,
        text=True,
        env={**os.environ, "NPA_HOME": str(npa_home)},
        timeout=30,
    )
    assert done.returncode == 2, done.stderr
    assert "login.user (config" in done.stderr and "not a valid login name" in done.stderr
    assert not marker.exists()


def test_ssh_argv_keeps_user_and_host_out_of_option_parsing(npa_home: Path) -> None:
    from npa_sop_tui.cli.status_cmds import ssh_command

    settings = StatusSettings(name="lab", login_user="slurmops", login_port=2222)
    cmd = ssh_command(settings, "127.0.0.1", accept_new=False, remote=["sinfo", "-h"])
    assert cmd[-6:] == ["-l", "slurmops", "--", "127.0.0.1", "sinfo", "-h"]
    assert "-F" not in cmd  # ~/.ssh/config stays in force
    assert "UserKnownHostsFile=${NPA_SSH_KNOWN_HOSTS}" in cmd  # keys stay pinned
    assert cmd[:2] == ["env", f"NPA_SSH_KNOWN_HOSTS={npa_home / 'known_hosts'}"]
    with pytest.raises(UsageError):
        ssh_command(settings, "-oProxyCommand=id", accept_new=False, remote=[])


@pytest.mark.slurm
async def test_asyncssh_honours_proxyjump_and_identityfile_from_ssh_config(
    substrate: Substrate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bastion of our own (an sshd that allows forwarding) named only in ~/.ssh/config;
    the target's key is not passed either: IdentityFile comes from the config."""
    bastion_dir = tmp_path / "bastion"
    bastion_dir.mkdir()
    bastion = PrivateSshd(bastion_dir, substrate)
    config_text = (bastion_dir / "sshd_config").read_text()
    (bastion_dir / "sshd_config").write_text(
        config_text.replace("AllowTcpForwarding no", "AllowTcpForwarding yes")
    )
    bastion_key = (bastion_dir / "host_ed25519.pub").read_text().split()
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "bastion_known_hosts").write_text(
        f"[127.0.0.1]:{bastion.port} {bastion_key[0]} {bastion_key[1]}\n"
    )
    (home / ".ssh" / "config").write_text(
        f"Host lab-bastion\n  HostName 127.0.0.1\n  Port {bastion.port}\n"
        f"  User {substrate.user}\n  IdentityFile {substrate.key}\n"
        f"  UserKnownHostsFile {home / '.ssh' / 'bastion_known_hosts'}\n"
        f"Host {substrate.host}\n  ProxyJump lab-bastion\n  IdentityFile {substrate.key}\n"
    )
    monkeypatch.setenv("HOME", str(home))  # asyncssh reads ~/.ssh/config from $HOME
    known = KnownHosts(tmp_path / "known_hosts")
    target = SshTarget(host=substrate.host, port=substrate.port, user=substrate.user)
    session = SshSession(target, policy=HostKeyPolicy.accept_new(), known_hosts=known)
    try:
        with pytest.raises(SshUnavailable):
            await session.run("true")  # the bastion is down: no way through
        session = SshSession(target, policy=HostKeyPolicy.accept_new(), known_hosts=known)
        bastion.start()
        result = await session.run("echo via-bastion")
        assert result.stdout.strip() == "via-bastion"
        # The target's key was pinned in npa's known_hosts, not in ~/.ssh.
        assert known.lookup(substrate.host, substrate.port)
    finally:
        await session.close()
        bastion.stop()


def _npa_ssh(substrate: Substrate, home: Path, key: Path, *extra: str) -> list[str]:
    return [
        *NPA,
        *("soperator", "ssh", "--name", "lab", "--login-host", substrate.host),
        *("--login-port", str(substrate.port), "--login-user", substrate.user, "-i", str(key)),
        *extra,
    ]


@pytest.mark.slurm
def test_npa_home_with_space_keeps_host_key_pinning(substrate: Substrate, tmp_path: Path) -> None:
    """An npa home whose path has a space, `%` tokens, quotes and `${VAR}`, and a key file
    named alike: the real ssh reaches the substrate's login sshd with that key, and the host
    key is written to npa's own known_hosts (0600), nowhere else."""
    home = tmp_path / 'np a%d%% "q" ${HOME}' / "npa"
    key = tmp_path / 'k e%y "x"'
    key.write_bytes(substrate.key.read_bytes())
    key.chmod(0o600)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    env = {**os.environ, "NPA_HOME": str(home), "HOME": str(tmp_path / "user-home")}
    done = subprocess.run(
        _npa_ssh(substrate, home, key, "--accept-new-host-key", "--", "echo", "pinned"),
        capture_output=True,
        text=True,
        env=env,
        cwd=workdir,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pinned"
    known = home / "known_hosts"
    assert substrate.host_pub in known.read_text()
    assert known.stat().st_mode & 0o777 == 0o600
    written = {p for p in tmp_path.rglob("*") if p.is_file()}
    assert written == {known, key}
    # and the pin holds: the same call without --accept-new-host-key still connects
    again = subprocess.run(
        _npa_ssh(substrate, home, key, "--", "echo", "again"),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert again.returncode == 0 and again.stdout.strip() == "again", again.stderr
