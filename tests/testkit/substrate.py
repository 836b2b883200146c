"""The local Slurm + sshd substrate (scripts/substrate.sh) and private sshd instances.

The fixtures that hand these to tests live in tests/conftest.py; tests that use them must be
marked `slurm` (the collection check in tests/conftest.py enforces it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from testkit.wait import wait_until

# scripts/substrate.sh: $NPA_SUBSTRATE_DIR, else $LAB (its older name), else the default
LAB = Path(os.environ.get("NPA_SUBSTRATE_DIR") or os.environ.get("LAB") or "/tmp/npa-substrate")
SSHD = "/usr/sbin/sshd"
HOST = "127.0.0.1"
PORT = 2222


@contextlib.contextmanager
def held_exclusively(lock_file: Path) -> Iterator[None]:
    """One test at a time, across every suite on the machine, holds the piece of the
    substrate `lock_file` stands for (an flock, let go when the test ends or dies)."""
    with lock_file.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@dataclass(frozen=True)
class Substrate:
    lab: Path
    host: str = HOST
    port: int = PORT
    user: str = "slurmops"

    @property
    def key(self) -> Path:
        return self.lab / "client_ed25519"

    @property
    def host_pub(self) -> str:
        return (self.lab / "host_ed25519.pub").read_text().split()[1]


def port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def substrate_missing() -> str | None:
    """Why the substrate cannot be used, or None when it answers."""
    if shutil.which("sinfo") is None:
        return "sinfo is not installed"
    if not (LAB / "client_ed25519").is_file():
        return f"no lab keys in {LAB}"
    if not port_open(HOST, PORT):
        return f"nothing listens on {HOST}:{PORT}"
    if subprocess.run(["sinfo", "-h"], capture_output=True, timeout=15).returncode != 0:
        return "slurmctld does not answer"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
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
            f"Port {self.port}\nListenAddress {HOST}\nHostKey {key}\nPidFile none\n"
            "AuthenticationMethods publickey\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPermitRootLogin no\nAllowUsers slurmops\n"
            "UsePAM no\nX11Forwarding no\nAllowTcpForwarding no\nPrintMotd no\n"
        )

    def start(self) -> None:
        assert self.proc is None
        proc = self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.dir / "sshd_config")],
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "sshd.log").open("ab"),
        )

        def listening() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"private sshd exited: {(self.dir / 'sshd.log').read_text()}")
            return port_open(HOST, self.port)

        wait_until(listening, timeout=10, what=f"the private sshd on port {self.port}")

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
