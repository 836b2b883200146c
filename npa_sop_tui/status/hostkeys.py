"""npa's own known_hosts file and the policy for keys it has not seen.

The file lives at `paths.known_hosts_path()` (under `~/.npa`), in OpenSSH format so the
system `ssh` can use it too (`npa soperator ssh` passes it as UserKnownHostsFile). Only plain
(unhashed) entries written by us are read back.

Rules: a key already recorded for host:port is trusted; an unknown key is accepted only when
the `HostKeyPolicy` consents (a flag headless, a modal in the TUI) and is then recorded; a key
that differs from the recorded one is always refused — never auto-accepted.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home.fsutil import atomic_write_text
from npa_sop_tui.home.paths import known_hosts_path


def host_token(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


def fingerprint(key_type: str, key_b64: str) -> str:
    """OpenSSH-style SHA256 fingerprint of a public key blob."""
    digest = hashlib.sha256(base64.b64decode(key_b64)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def _host_matches(field: str, token: str) -> bool:
    """Plain comma lists, and OpenSSH's hashed form `|1|salt|hmac` (HashKnownHosts yes)."""
    if field.startswith("|1|"):
        try:
            _, _, salt, digest = field.split("|", 3)
            mac = hmac.new(base64.b64decode(salt), token.encode(), hashlib.sha1).digest()
            return hmac.compare_digest(mac, base64.b64decode(digest))
        except (ValueError, binascii.Error):
            return False
    return token in field.split(",")


@dataclass(frozen=True)
class HostKeyEntry:
    key_type: str
    key_b64: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key_type, self.key_b64)

    @property
    def openssh(self) -> str:
        return f"{self.key_type} {self.key_b64}"


MAX_KNOWN_HOSTS_BYTES = 4 * 1024 * 1024  # thousands of host keys


class KnownHosts:
    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else known_hosts_path()

    def _lines(self) -> list[str]:
        from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

        try:  # a FIFO, /dev/zero or a sparse giant here is refused at once
            text = read_regular_text(self.path, limit=MAX_KNOWN_HOSTS_BYTES, what="known_hosts")
        except Unreadable as exc:
            if exc.missing:
                return []
            raise UsageError(
                f"{self.path}: {exc.reason}",
                hint=f"remove it (`rm {self.path}`) or point known_hosts at a regular file; "
                "npa records host keys there again on first contact",
            ) from None
        return text.splitlines()

    def lookup(self, host: str, port: int) -> list[HostKeyEntry]:
        token = host_token(host, port)
        found: list[HostKeyEntry] = []
        for line in self._lines():
            parts = line.split()
            if len(parts) < 3 or line.lstrip().startswith("#"):
                continue
            if _host_matches(parts[0], token):
                found.append(HostKeyEntry(parts[1], parts[2]))
        return found

    def add(self, host: str, port: int, entry: HostKeyEntry) -> None:
        lines = self._lines()
        lines.append(f"{host_token(host, port)} {entry.openssh}")
        atomic_write_text(self.path, "\n".join(lines) + "\n", mode=0o644)


class HostKeyUnknown(OperationError):
    def __init__(self, host: str, port: int, entry: HostKeyEntry, known_hosts: Path) -> None:
        super().__init__(
            f"the SSH host key of {host_token(host, port)} is not known yet "
            f"({entry.key_type} {entry.fingerprint}); refusing to connect",
            hint=(
                "check the fingerprint with your cluster admin, then re-run with "
                f"--accept-new-host-key to record it in {known_hosts}"
            ),
        )
        self.host, self.port, self.entry = host, port, entry

    def json_extra(self) -> dict[str, object]:
        return {"host": self.host, "port": self.port, "fingerprint": self.entry.fingerprint}


class HostKeyChanged(OperationError):
    def __init__(
        self,
        host: str,
        port: int,
        known: list[HostKeyEntry],
        presented: HostKeyEntry | None,
        known_hosts: Path,
    ) -> None:
        was = ", ".join(f"{k.key_type} {k.fingerprint}" for k in known)
        now = f"{presented.key_type} {presented.fingerprint}" if presented else "another key type"
        super().__init__(
            f"WARNING: the SSH host key of {host_token(host, port)} HAS CHANGED "
            f"(recorded: {was}; offered now: {now}). Someone may be intercepting the "
            "connection, or the login node was re-created. Refusing to connect.",
            hint=(
                "if the cluster was re-deployed and the new key is expected, delete the line "
                f"for {host_token(host, port)} from {known_hosts} and connect again with "
                "--accept-new-host-key"
            ),
        )
        self.host, self.port = host, port
        self.presented = presented

    def json_extra(self) -> dict[str, object]:
        return {
            "host": self.host,
            "port": self.port,
            "fingerprint": self.presented.fingerprint if self.presented else None,
        }


ConfirmFn = Callable[[str, int, HostKeyEntry], Awaitable[bool]]


class HostKeyPolicy:
    """What to do with an unknown host key. The default refuses.

    The TUI passes `confirm=` an async function that shows a modal with the fingerprint and
    returns the user's answer; headless `--accept-new-host-key` uses `HostKeyPolicy.accept_new()`.
    """

    def __init__(self, confirm: ConfirmFn | None = None) -> None:
        self._confirm = confirm

    @classmethod
    def accept_new(cls) -> HostKeyPolicy:
        async def yes(host: str, port: int, entry: HostKeyEntry) -> bool:
            return True

        return cls(yes)

    async def confirm_unknown(self, host: str, port: int, entry: HostKeyEntry) -> bool:
        if self._confirm is None:
            return False
        return bool(await self._confirm(host, port, entry))
