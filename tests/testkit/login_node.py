"""A login node over real SSH (asyncssh's server, in the test's own event loop) whose
commands run in bash on this machine, with the PATH and HOME the test gives. For tests of
the SSH side of a flow (channels, stdin, exit status, closing a channel mid-run) that do not
need Slurm itself: the test puts Slurm's recorded answers on the PATH. The shared substrate's
sshd is for the flows against real Slurm."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncssh

from npa_sop_tui.status.hostkeys import HostKeyPolicy, KnownHosts
from npa_sop_tui.status.ssh import SshSession, SshTarget

USER = "slurm-user"


async def _pump(source: Any, sink: Any) -> None:
    while data := await source.read(65536):
        sink.write(data)


class _Shell:
    """One exec request: `bash -c <command>` with the node's environment, its streams
    joined to the channel's; a channel closed by the client kills it."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    async def __call__(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        local = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            process.command or "",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
        )
        assert local.stdin is not None

        async def feed() -> None:
            assert local.stdin is not None
            with contextlib.suppress(asyncssh.Error, ConnectionError):
                while data := await process.stdin.read(65536):
                    local.stdin.write(data)
                    await local.stdin.drain()
            local.stdin.close()

        # stdin is fed while the command runs; a command that ends without reading it all
        # ends the channel all the same (as sshd does)
        feeder = asyncio.create_task(feed())
        try:
            await asyncio.gather(
                _pump(local.stdout, process.stdout), _pump(local.stderr, process.stderr)
            )
            process.exit(await local.wait())
        except (asyncssh.Error, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            feeder.cancel()
            if local.returncode is None:
                local.kill()
                await local.wait()


@contextlib.asynccontextmanager
async def login_node(folder: Path, env: dict[str, str]) -> AsyncIterator[SshSession]:
    """An `SshSession` to a login node on a free local port, its commands run with `env`."""
    folder.mkdir(parents=True, exist_ok=True)
    client_key = asyncssh.generate_private_key("ssh-ed25519")
    key_file = folder / "id_ed25519"
    client_key.write_private_key(str(key_file))
    key_file.chmod(0o600)
    server = await asyncssh.listen(
        "127.0.0.1",
        0,
        server_host_keys=[asyncssh.generate_private_key("ssh-ed25519")],
        authorized_client_keys=asyncssh.import_authorized_keys(
            client_key.export_public_key().decode()
        ),
        process_factory=_Shell(env),
        encoding=None,
    )
    port = server.sockets[0].getsockname()[1]
    session = SshSession(
        SshTarget("127.0.0.1", port, USER, key_file),
        policy=HostKeyPolicy.accept_new(),
        known_hosts=KnownHosts(folder / "known_hosts"),
    )
    try:
        yield session
    finally:
        await session.close()
        server.close()
        await server.wait_closed()
