"""Fixtures for the status tests: the local Slurm+sshd substrate and the fake API server."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

# scripts/substrate.sh: $NPA_SUBSTRATE_DIR, else $LAB (its older name), else the default
LAB = Path(os.environ.get("NPA_SUBSTRATE_DIR") or os.environ.get("LAB") or "/tmp/npa-substrate")
SSHD = "/usr/sbin/sshd"
CONTEXT = "nebius-demo-slurm"


@dataclass(frozen=True)
class Substrate:
    lab: Path
    host: str = "127.0.0.1"
    port: int = 2222
    user: str = "slurmops"

    @property
    def key(self) -> Path:
        return self.lab / "client_ed25519"

    @property
    def host_pub(self) -> str:
        return (self.lab / "host_ed25519.pub").read_text().split()[1]


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _substrate_missing() -> str | None:
    if shutil.which("sinfo") is None:
        return "sinfo is not installed"
    if not (LAB / "client_ed25519").is_file():
        return f"no lab keys in {LAB}"
    if not _port_open("127.0.0.1", 2222):
        return "nothing listens on 127.0.0.1:2222"
    if subprocess.run(["sinfo", "-h"], capture_output=True, timeout=15).returncode != 0:
        return "slurmctld does not answer"
    return None


@pytest.fixture(scope="session")
def substrate() -> Substrate:
    """The substrate from scripts/substrate.sh. Skips only when NPA_REQUIRE_SUBSTRATE is unset."""
    missing = _substrate_missing()
    if missing:
        msg = f"substrate not running ({missing}); run `bash scripts/substrate.sh start`"
        if os.environ.get("NPA_REQUIRE_SUBSTRATE"):
            pytest.fail(msg)
        pytest.skip(msg)
    return Substrate(LAB)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PrivateSshd:
    """An sshd of our own on a free port, so fault tests never disturb the shared :2222."""

    def __init__(self, workdir: Path, substrate: Substrate) -> None:
        self.dir = workdir
        self.port = free_port()
        self.substrate = substrate
        self.proc: subprocess.Popen[bytes] | None = None
        self.new_host_key()

    def new_host_key(self) -> None:
        key = self.dir / "host_ed25519"
        for p in (key, key.with_suffix(".pub")):
            p.unlink(missing_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
        (self.dir / "sshd_config").write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {key}\nPidFile none\n"
            "AuthenticationMethods publickey\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin no\nAllowUsers slurmops\n"
            "UsePAM no\nX11Forwarding no\nAllowTcpForwarding no\nPrintMotd no\n"
        )

    def start(self) -> None:
        assert self.proc is None
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "sshd.log").open("ab"),
        )
        deadline = time.monotonic() + 10
        while not _port_open("127.0.0.1", self.port):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(
                    f"private sshd did not start: {(self.dir / 'sshd.log').read_text()}"
                )
            time.sleep(0.05)

    def _descendants(self, pid: int) -> list[int]:
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True
        ).stdout.split()
        kids = [int(p) for p in out]
        return kids + [d for k in kids for d in self._descendants(k)]

    def stop(self) -> None:
        """Stop the listener and its per-connection children: live sessions drop too."""
        if self.proc is not None:
            for child in self._descendants(self.proc.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child, signal.SIGTERM)
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
            self.proc = None


@pytest.fixture
def private_sshd(tmp_path: Path, substrate: Substrate) -> Iterator[PrivateSshd]:
    d = tmp_path / "sshd"
    d.mkdir()
    sshd = PrivateSshd(d, substrate)
    sshd.start()
    try:
        yield sshd
    finally:
        sshd.stop()


@pytest.fixture
def drained_node(substrate: Substrate) -> Iterator[tuple[str, str]]:
    """Drain a fake GPU node with a health-check reason; always undrain afterwards."""
    node, reason = "gpu-003", "[node_problem] gpu_health_check: XID 79 seen [hc_program]"
    subprocess.run(
        ["scontrol", "update", f"nodename={node}", "state=drain", f"reason={reason}"],
        check=True,
        capture_output=True,
    )
    try:
        yield node, reason
    finally:
        # The fake node never answers, so after SlurmdTimeout it is DOWN+DRAIN: undrain
        # clears the drain, resume clears DOWN and the reason. Either may report an error
        # depending on the state reached; the check below is what counts.
        for state in ("undrain", "resume"):
            subprocess.run(
                ["scontrol", "update", f"nodename={node}", f"state={state}"], capture_output=True
            )
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-n", node, "-o", "%E"], capture_output=True, text=True
        ).stdout
        assert "node_problem" not in out, f"could not undrain {node}: {out}"


@pytest.fixture
def fake_kube() -> Iterator[FakeKubeServer]:
    with FakeKubeServer(bookmark_interval=0.2) as srv:
        yield srv


@pytest.fixture
def kubeconfig(fake_kube: FakeKubeServer, tmp_path: Path) -> Path:
    return fake_kube.write_kubeconfig(tmp_path / "kubeconfig", CONTEXT)


async def eventually(
    check: Callable[[], bool] | Callable[[], Awaitable[bool]],
    timeout: float = 8.0,
    what: str = "condition",
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)
