"""One reused asyncssh connection per cluster, at most 8 channels at once, with backoff.

sshd's default `MaxSessions 10` makes unbounded concurrency fail with "open failed", so a
semaphore caps channels. A dropped connection is noticed on the next command; the session
then reconnects, waiting `backoff` between failed attempts so a dead login node is not
hammered, but never longer than the refresh interval: data comes back within two intervals
of the login node's return. Host keys go through `hostkeys.KnownHosts` + `HostKeyPolicy`,
whatever ~/.ssh/config says; the rest of ~/.ssh/config (ProxyJump to a bastion,
IdentityFile) is honoured.

Login users and hosts are validated wherever they come from (flag, config, the login
Service's address): a value starting with `-` would be read as an option by `ssh`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.status.hostkeys import (
    HostKeyChanged,
    HostKeyEntry,
    HostKeyPolicy,
    HostKeyUnknown,
    KnownHosts,
)

_JITTER = random.Random()  # its own generator: backoff in a thread never moves the global one

if TYPE_CHECKING:
    import asyncssh

MAX_CHANNELS = 8
CHANNEL_RETRY_DELAYS = (0.1, 0.3, 0.8)  # seconds between retries of a refused channel


_USER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}$")
_LABEL = r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
_HOSTNAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$")


def check_login_user(user: str, *, source: str = "login user") -> str:
    """`user` if it is a plain login name; `UsageError` otherwise (never an ssh option)."""
    if not _USER.fullmatch(user or ""):
        raise UsageError(
            f"{source} {user!r} is not a valid login name",
            hint="use letters, digits, '_', '.', '-' (not first), at most 32 characters; "
            "for example root",
        )
    return user


def check_login_host(host: str, *, source: str = "login host") -> str:
    """`host` if it is a host name or an IP address; `UsageError` otherwise."""
    bare = (host or "").strip()
    if bare.startswith("[") and bare.endswith("]"):
        bare = bare[1:-1]
    try:
        ipaddress.ip_address(bare)
        return bare
    except ValueError:
        pass
    if not _HOSTNAME.fullmatch(bare):
        raise UsageError(
            f"{source} {host!r} is not a host name or IP address",
            hint="for example 203.0.113.10 or login.example.com",
        )
    return bare


@dataclass(frozen=True)
class SshTarget:
    host: str
    port: int = 22
    user: str = "root"
    identity_file: Path | None = None  # None: the SSH agent / ~/.ssh/config / default keys
    connect_timeout: float = 10.0
    # OpenSSH client config files; None: ~/.ssh/config when it exists.
    ssh_config: tuple[Path, ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "host", check_login_host(self.host))
        check_login_user(self.user)


@dataclass
class CommandResult:
    exit_status: int
    stdout: str
    stderr: str


class SshUnavailable(OperationError):
    """The login node could not be reached or the command could not run."""


MIN_BACKOFF_CAP = 1.0  # seconds: the cap never goes below this, however short the interval


def backoff_cap(interval: float, maximum: float = 30.0) -> float:
    """The longest wait between retries: the refresh interval (at least 1 s, at most
    `maximum`), so a source that comes back shows up within two intervals."""
    return max(MIN_BACKOFF_CAP, min(interval, maximum))


@dataclass
class Backoff:
    """Exponential backoff with jitter: each wait is drawn from [half, all] of the current
    step, and the step never exceeds `maximum`; clients that failed together do not retry
    in lockstep."""

    initial: float = 0.5
    maximum: float = 30.0
    current: float = field(default=0.0)
    jitter: float = 0.5  # the share of the step that is random

    def failed(self) -> float:
        self.current = self.initial if self.current == 0 else min(self.current * 2, self.maximum)
        return self.current * (1 - self.jitter * _JITTER.random())

    def reset(self) -> None:
        self.current = 0.0


class SshSession:
    def __init__(
        self,
        target: SshTarget,
        *,
        policy: HostKeyPolicy | None = None,
        known_hosts: KnownHosts | None = None,
        backoff: Backoff | None = None,
        max_channels: int = MAX_CHANNELS,
    ) -> None:
        self.target = target
        self.policy = policy or HostKeyPolicy()
        self.known_hosts = known_hosts or KnownHosts()
        self.backoff = backoff or Backoff()
        self._sem = asyncio.Semaphore(max_channels)
        self._conn: asyncssh.SSHClientConnection | None = None
        self._lock = asyncio.Lock()
        self._retry_at = 0.0
        self._last_error: Exception | None = None
        self.connects = 0  # successful connections made (for tests and benchmarks)

    @property
    def connected(self) -> bool:
        return self._conn is not None

    async def _open(self, trusted: list[HostKeyEntry]) -> tuple[Any, HostKeyEntry | None]:
        import asyncssh

        presented: list[HostKeyEntry] = []

        class _Recorder(asyncssh.SSHClient):
            def validate_host_public_key(
                self, host: str, addr: str, port: int, key: asyncssh.SSHKey
            ) -> bool:
                # Called only for keys not in `trusted`; remember what was offered and say
                # no, so the decision (unknown vs changed) is taken outside the handshake.
                kt, b64 = key.export_public_key("openssh").decode().split()[:2]
                presented.append(HostKeyEntry(kt, b64))
                return False

        keys = [asyncssh.import_public_key(e.openssh) for e in trusted]
        t = self.target
        options: dict[str, Any] = {
            "host": t.host,
            "port": t.port,
            "username": t.user,
            # Pinned keys only: ~/.ssh/config's known-hosts settings do not apply here.
            "known_hosts": lambda h, a, p: (keys, [], []),
            "client_factory": _Recorder,
            "connect_timeout": t.connect_timeout,
            "keepalive_interval": 15,
        }
        if t.ssh_config is not None:  # else asyncssh reads ~/.ssh/config (ProxyJump, keys)
            options["config"] = [str(p) for p in t.ssh_config]
        if t.identity_file is not None:
            options["client_keys"] = [str(t.identity_file)]
            options["agent_path"] = None
        try:
            conn = await asyncssh.connect(**options)
        except asyncssh.HostKeyNotVerifiable:
            return None, presented[0] if presented else None
        except asyncssh.KeyExchangeFailed:
            if keys:  # the server offers no key of the recorded type: a changed key
                return None, None
            raise
        return conn, None

    async def _connect(self) -> Any:
        import asyncssh

        t = self.target
        trusted = self.known_hosts.lookup(t.host, t.port)
        try:
            conn, offered = await self._open(trusted)
            if conn is None:
                if trusted or offered is None:
                    raise HostKeyChanged(t.host, t.port, trusted, offered, self.known_hosts.path)
                if not await self.policy.confirm_unknown(t.host, t.port, offered):
                    raise HostKeyUnknown(t.host, t.port, offered, self.known_hosts.path)
                self.known_hosts.add(t.host, t.port, offered)
                conn, offered = await self._open([offered])
                if conn is None:  # the key changed between the two handshakes
                    raise HostKeyChanged(t.host, t.port, [*trusted], offered, self.known_hosts.path)
        except (HostKeyChanged, HostKeyUnknown):
            raise
        except asyncssh.PermissionDenied as exc:
            raise SshUnavailable(
                f"SSH login to {t.user}@{t.host}:{t.port} was refused: {exc.reason}",
                hint="check --identity-file / ssh_private_key_path, or add the key to your agent",
            ) from exc
        except (TimeoutError, OSError, asyncssh.Error) as exc:
            raise SshUnavailable(
                f"cannot reach {t.host}:{t.port} over SSH: {_describe(exc)}",
                hint="check the login IP and that the login pods are running",
            ) from exc
        self.connects += 1
        return conn

    async def connection(self) -> Any:
        async with self._lock:
            if self._conn is not None:
                return self._conn
            now = time.monotonic()
            if now < self._retry_at and self._last_error is not None:
                raise self._last_error
            try:
                self._conn = await self._connect()
            except (HostKeyChanged, HostKeyUnknown):
                raise  # never retried automatically: a person must decide
            except SshUnavailable as exc:
                self._last_error = exc
                self._retry_at = time.monotonic() + self.backoff.failed()
                raise
            self.backoff.reset()
            self._last_error = None
            return self._conn

    async def run(self, command: str, *, timeout: float = 30.0) -> CommandResult:
        """Run a non-interactive command; reconnects once if the connection went away."""
        import asyncssh

        for attempt in (1, 2):
            conn = await self.connection()
            try:
                result = await self._run_on(conn, command, timeout)
            except (
                _ConnectionGone,
                asyncssh.ConnectionLost,
                OSError,
                asyncssh.DisconnectError,
            ) as exc:
                await self._drop(conn)
                if attempt == 2:
                    raise SshUnavailable(
                        f"SSH connection to {self.target.host} lost: {_describe(exc)}"
                    ) from exc
                continue
            except asyncssh.TimeoutError as exc:
                raise SshUnavailable(f"`{command}` timed out after {timeout:g}s") from exc
            return CommandResult(
                exit_status=result.exit_status if result.exit_status is not None else -1,
                stdout=_text(result.stdout),
                stderr=_text(result.stderr),
            )
        raise AssertionError("unreachable")

    async def _run_on(self, conn: Any, command: str, timeout: float) -> Any:
        """One command on `conn`, retrying a refused channel on the same connection.

        sshd counts sessions that are still closing against MaxSessions, so a burst of short
        commands can see a channel refused while the connection itself is healthy; dropping
        the connection for that would turn load into reconnect storms.
        """
        import asyncssh

        for delay in (*CHANNEL_RETRY_DELAYS, None):
            try:
                async with self._sem:
                    return await conn.run(command, check=False, timeout=timeout)
            except asyncssh.ChannelOpenError as exc:
                if delay is None or conn.is_closed():
                    # Closed underneath us, or refused every time: treat it as a lost
                    # connection, which `run` answers with one reconnect.
                    raise _ConnectionGone(exc) from exc
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _drop(self, conn: Any) -> None:
        async with self._lock:
            if self._conn is conn:
                self._conn = None
        conn.abort()

    async def close(self) -> None:
        async with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except (TimeoutError, OSError):
                conn.abort()


class _ConnectionGone(Exception):
    """A channel could not be opened on a connection that is closed or keeps refusing."""

    def __str__(self) -> str:
        return _describe(self.args[0])


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def _describe(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__
