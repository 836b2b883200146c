"""npa's side of the Terraform supervisor (see `_supervisor.py` for why it exists).

`spawn()` starts one Terraform command under the supervisor and returns a handle whose
stdout/stderr carry Terraform's output, `interrupt()` asks for a graceful stop (SIGINT to
Terraform's group), `kill()` for a hard one. The supervisor's stdin is the lifeline: it stays
open for as long as npa lives, so it must never be closed while Terraform runs (closing it is
how the supervisor learns that npa died).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from npa_sop_tui.home import fsutil

SUPERVISOR = Path(__file__).with_name("_supervisor.py")
RUN_DIR = ".npa-run"  # inside the installation: spools of orphaned runs, the disk reserve
# Files Terraform creates (state, backups, saved plans, .terraform/) are private: 0600/0700.
STATE_UMASK = 0o077
STREAM_LIMIT = 16 * 1024 * 1024  # a `show -json` line can be large


def run_dir(install_dir: Path) -> Path:
    return Path(install_dir) / RUN_DIR


def spool_path(install_dir: Path, operation_id: str) -> Path:
    """Where an orphaned supervisor writes the rest of Terraform's output."""
    return run_dir(install_dir) / f"{operation_id}.orphaned.log"


@dataclass
class Supervised:
    """A running supervisor; `pid` is the supervisor's (Terraform's group is its child)."""

    proc: asyncio.subprocess.Process
    args: list[str]
    _stopped: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.proc.stdout is not None
        return self.proc.stdout

    @property
    def stderr(self) -> asyncio.StreamReader:
        assert self.proc.stderr is not None
        return self.proc.stderr

    def _send(self, word: str) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(OSError, RuntimeError):
            stdin.write(word.encode() + b"\n")
        self._stopped.append(word)

    def interrupt(self) -> None:
        """Graceful: Terraform stops starting resources, finishes or taints in-flight ones,
        saves state and exits."""
        self._send("int")

    def kill(self) -> None:
        """Hard: SIGKILL to Terraform's group; in-flight resources may be missing from state."""
        self._send("kill")

    async def wait(self) -> int:
        code = await self.proc.wait()
        self.close()
        return code

    def close(self) -> None:
        """Only once the supervisor has exited: closing the lifeline earlier stops Terraform."""
        if self.proc.returncode is None:
            return
        stdin = self.proc.stdin
        if stdin is not None and not stdin.is_closing():
            with contextlib.suppress(OSError, RuntimeError):
                stdin.close()


async def spawn(
    binary: str,
    args: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    spool: Path | None = None,
    hold_fds: Sequence[int] = (),
    on_spawn: Callable[[int, list[str]], None] | None = None,
) -> Supervised:
    """Start `binary args` in `cwd` under a supervisor.

    `hold_fds` are inherited by the supervisor and kept open until Terraform has exited: the
    cluster lock goes here, so a Terraform that outlives npa still holds the cluster.
    """
    reserve = fsutil.ensure_reserve(run_dir(cwd))
    config = {
        "argv": [binary, *args],
        "spool": str(spool) if spool else "",
        "ballast": str(reserve) if reserve else "",
        "state_file": "errored.tfstate",
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",  # isolated: no user site, no PYTHON* variables from Terraform's environment
        "-S",  # no site import: the supervisor needs the standard library only
        str(SUPERVISOR),
        json.dumps(config),
        cwd=str(cwd),
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        # Its own session: a terminal's Ctrl-C or hang-up reaches npa, which decides.
        start_new_session=True,
        pass_fds=tuple(hold_fds),
        # Terraform's state, backups and plans can hold secrets (reservation IDs,
        # passwords, cluster credentials): whatever it creates is for this user only.
        umask=STATE_UMASK,
        limit=STREAM_LIMIT,
    )
    handle = Supervised(proc, [binary, *args])
    if on_spawn is not None:
        on_spawn(proc.pid, list(args))
    return handle
