"""Where the post-deploy steps run Slurm commands: the cluster's login node, over SSH.

`SlurmShell` is the one method the repairs and the GPU gate need. The real one is the
status module's SSH session to the login node (root, the recipe's root login key); the
sandbox supplies a simulated login node. Soperator's login sshd chroots into the jail, where
`sinfo`, `srun`, `scancel` and `scontrol` are on PATH.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from npa_sop_tui.status.ssh import CommandResult, SshSession


class SlurmShell(Protocol):
    async def run(self, command: str, *, timeout: float) -> CommandResult: ...

    async def close(self) -> None: ...


class SshSlurmShell:
    """A `SlurmShell` over one reused SSH connection (at most 8 channels at once)."""

    def __init__(self, session: SshSession) -> None:
        self.session = session

    async def run(self, command: str, *, timeout: float) -> CommandResult:
        return await self.session.run(command, timeout=timeout)

    async def close(self) -> None:
        await self.session.close()


def login_shell(host: str, settings: Any) -> SshSlurmShell:
    """An SSH shell to the login node at `host` (from status/login_address.py), as the
    `login.user`/`login.port` and key of the settings.

    The login node of a cluster that was just created has a host key nobody has seen: it is
    recorded on first contact (trust on first use) in npa's known_hosts, and a changed key is
    refused as always.
    """
    from pathlib import Path

    from npa_sop_tui.status.hostkeys import HostKeyPolicy
    from npa_sop_tui.status.ssh import SshSession, SshTarget

    key = settings["ssh_private_key_path"]
    target = SshTarget(
        host=host,
        port=int(settings["login.port"] or 22),
        user=str(settings["login.user"] or "root"),
        identity_file=Path(key).expanduser() if key else None,
    )
    return SshSlurmShell(SshSession(target, policy=HostKeyPolicy.accept_new()))
