"""`npa soperator status` and `npa soperator ssh`.

Nothing heavy is imported at module level: the watcher (kubernetes, asyncssh) is imported
inside the handlers.

Exit codes of `status`: 0 when the verdict is ready or progressing; 1 when it is degraded,
failed, or no source could be queried; 2 for bad flags; 130 when a `--watch` is interrupted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.cli.cluster_connection import (
    add_connection_flags,
    build_settings,
    connection_environment,
)
from npa_sop_tui.cli.common import add_output_flag, emit_json, wants_json
from npa_sop_tui.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, OperationError, UsageError

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.status.model import ClusterStatus
    from npa_sop_tui.status.watch_settings import StatusSettings


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    status = subparsers.add_parser(
        "status",
        help="live status: Kubernetes (node groups, pods, SlurmCluster) and Slurm (sinfo)",
        description=(
            "Show a Soperator cluster's state from Kubernetes (kube context "
            "nebius-<name>-slurm) and from Slurm (sinfo over SSH on the login node), with a "
            "readiness verdict and hints. Exit 0 when ready or progressing, 1 when degraded, "
            "failed or unreachable."
        ),
    )
    add_connection_flags(status)
    status.add_argument(
        "--watch",
        "-w",
        action="store_true",
        help="keep watching; with --output json one full JSON document per line: a snapshot "
        "per change or Slurm poll, and a heartbeat (each source's freshness) whenever an "
        "interval passes without one",
    )
    status.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="S",
        help="seconds between Slurm polls (default: $NPA_STATUS_INTERVAL, else config "
        "status.interval_seconds, which defaults to 10)",
    )
    status.add_argument("--no-kube", action="store_true", help="skip Kubernetes")
    status.add_argument("--no-slurm", action="store_true", help="skip Slurm (no SSH)")
    status.add_argument(
        "--slurm-format",
        choices=("auto", "json", "delimited"),
        default="auto",
        help="how to read sinfo (default: JSON if supported, else delimited)",
    )
    status.add_argument(
        "--terraform-dir",
        type=Path,
        default=None,
        help="installation dir whose terraform.tfstate gives workers[] capacity",
    )
    status.add_argument(
        "--sandbox",
        action="store_true",
        help="a sandbox cluster: Kubernetes from the sandbox's fake API server rebuilt from "
        "its Terraform state, Slurm simulated from the spec",
    )
    add_output_flag(status)
    status.set_defaults(handler=handle_status)

    ssh = subparsers.add_parser(
        "ssh",
        help="open a shell on the login node (same connection settings as status)",
        description=(
            "Run the system ssh to the cluster's login node with npa's known_hosts file. "
            "Anything after `--` is run as a remote command."
        ),
    )
    add_connection_flags(ssh)
    ssh.add_argument(
        "--sandbox",
        action="store_true",
        help="a sandbox cluster: its Slurm is simulated, so there is a login node only when "
        "login.host points at a real one",
    )
    ssh.add_argument(
        "remote",
        nargs=argparse.REMAINDER,
        help="optional command to run instead of a shell (after --)",
    )
    ssh.set_defaults(handler=handle_ssh)


# --- status -----------------------------------------------------------------------------


def exit_code_for(snap: ClusterStatus) -> int:
    return EXIT_OK if snap.verdict.state in ("ready", "progressing") else EXIT_FAILED


def handle_status(args: argparse.Namespace) -> int:
    environment = connection_environment(args)
    settings = build_settings(args, environment)
    if environment.is_sandbox:
        from npa_sop_tui.lifecycle.adopt import require_cluster

        # a clear "no such sandbox cluster" before any server; one the existing npa deployed
        # in this home is adopted first (its spec is what the sandbox's cluster is built from)
        require_cluster(settings.name)
    try:
        import asyncio

        return asyncio.run(_status(args, settings, environment))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _status(
    args: argparse.Namespace, settings: StatusSettings, environment: Environment
) -> int:
    from npa_sop_tui.status.hostkeys import HostKeyPolicy

    policy = HostKeyPolicy.accept_new() if args.accept_new_host_key else HostKeyPolicy()
    try:
        feed = environment.status_feed(settings, host_key_policy=policy)
        return await _show(args, feed, interval=settings.slurm_interval)
    finally:
        await environment.aclose()


async def _show(
    args: argparse.Namespace,
    snapshots: AsyncIterator[ClusterStatus],
    *,
    interval: float | None = None,
) -> int:
    """One snapshot (exit code from its verdict), or every change with --watch."""
    as_json = wants_json(args)
    if not args.watch:
        async for snap in snapshots:
            _emit(snap, as_json)
            return exit_code_for(snap)
        raise OperationError("status collection ended before the first snapshot")
    if as_json:
        await _watch_json(snapshots, interval=interval)
        return EXIT_OK
    return await _watch_text(snapshots, interval=interval)


async def _watch_json(
    snapshots: AsyncIterator[ClusterStatus], *, interval: float | None = None
) -> None:
    """A line per snapshot, and a heartbeat line whenever `interval` passes without one, so a
    consumer always sees within two intervals whether the watch is live or stuck."""
    import asyncio

    from npa_sop_tui.status.freshness import heartbeat_doc

    wait = interval or 10.0
    latest: ClusterStatus | None = None
    iterator = aiter(snapshots)
    pending: asyncio.Task[ClusterStatus] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({pending}, timeout=wait)
            if not done:
                if latest is not None:
                    emit_json(heartbeat_doc(latest, interval=interval))
                continue
            try:
                latest = pending.result()
            except StopAsyncIteration:
                return
            finally:
                pending = None
            emit_json(_json_doc(latest))
    finally:
        if pending is not None:
            pending.cancel()


def _json_doc(snap: ClusterStatus) -> dict[str, Any]:
    return snap.model_dump(mode="json")


def _emit(snap: ClusterStatus, as_json: bool) -> None:
    if as_json:
        emit_json(_json_doc(snap))
        return
    from rich.console import Console

    from npa_sop_tui.status.render import render_status

    Console().print(render_status(snap))


async def _watch_text(
    snapshots: AsyncIterator[ClusterStatus], *, interval: float | None = None
) -> int:
    """Redraw on every snapshot and once a second in between, so ages keep counting."""
    import asyncio
    import contextlib

    from rich.console import Console
    from rich.live import Live

    from npa_sop_tui.status.render import render_status

    console = Console()
    latest: list[ClusterStatus] = []

    def draw(live: Live) -> None:
        if latest:
            live.update(render_status(latest[-1], interval=interval), refresh=True)

    async def tick(live: Live) -> None:
        while True:
            await asyncio.sleep(1.0)
            draw(live)

    with Live(console=console, auto_refresh=False, transient=False) as live:
        ticker = asyncio.create_task(tick(live))
        try:
            async for snap in snapshots:
                latest[:] = [snap]
                draw(live)
        finally:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
    return EXIT_OK


# --- ssh --------------------------------------------------------------------------------


def ssh_command(
    settings: StatusSettings, host: str, *, accept_new: bool, remote: list[str]
) -> list[str]:
    from npa_sop_tui.home.files import open_private
    from npa_sop_tui.home.paths import known_hosts_path
    from npa_sop_tui.status.ssh import check_login_host, check_login_user

    # Validated again here, whatever built the settings: a leading "-" would be an option.
    user = check_login_user(settings.login_user)
    host = check_login_host(host)
    kh = settings.known_hosts or known_hosts_path()
    # made (0600, no symlink) before ssh appends to it: ssh would create it 0644
    os.close(open_private(kh, os.O_WRONLY | os.O_CREAT | os.O_APPEND))
    paths_env = {_KNOWN_HOSTS_ENV: str(kh.absolute())}
    # ~/.ssh/config stays in force (ProxyJump, IdentityFile, …); only host-key checking is
    # npa's own, so keys stay pinned in npa's known_hosts. Paths reach ssh as environment
    # variables (see _SSH_PATH_VARS), so nothing in them is parsed by ssh.
    cmd = [
        "ssh",
        "-p",
        str(settings.login_port),
        "-o",
        f"UserKnownHostsFile=${{{_KNOWN_HOSTS_ENV}}}",
        "-o",
        "GlobalKnownHostsFile=/dev/null",
        "-o",
        f"StrictHostKeyChecking={'accept-new' if accept_new else 'yes'}",
        "-o",
        "CheckHostIP=no",  # one entry per host:port, as npa writes them
        "-o",
        "HashKnownHosts=no",  # keep entries readable (Debian's default hashes them)
    ]
    if settings.identity_file is not None:
        paths_env[_IDENTITY_ENV] = str(Path(settings.identity_file).expanduser().absolute())
        cmd += ["-o", f"IdentityFile=${{{_IDENTITY_ENV}}}", "-o", "IdentitiesOnly=yes"]
    # The user as its own argument and `--` before the host: nothing after this point can
    # be read as an option, whatever its value.
    cmd += ["-l", user, "--", host]
    # `env` sets the path variables for ssh alone; each is one argv element, never parsed.
    return ["env", *(f"{name}={value}" for name, value in paths_env.items()), *cmd, *remote]


# ssh reads a path given in an option as a config line: it splits at spaces (the known_hosts
# option takes several files), strips quotes, and expands `%x` tokens and `${VAR}` (ssh_config
# TOKENS). A home such as `/home/a b/.npa` or `/srv/100%/npa` would name other files. ssh
# expands `${VAR}` last and does not parse the value it inserts, so the paths go by variable.
_KNOWN_HOSTS_ENV = "NPA_SSH_KNOWN_HOSTS"
_IDENTITY_ENV = "NPA_SSH_IDENTITY_FILE"


def handle_ssh(args: argparse.Namespace) -> int:
    environment = connection_environment(args)
    settings = build_settings(args, environment)
    if environment.is_sandbox and not settings.login_host:
        raise UsageError(
            f"sandbox cluster {settings.name!r} has no login node to SSH to: its Slurm is "
            "simulated on this machine",
            hint=f"use `npa soperator nodes --name {settings.name} --sandbox` (or jobs, drain, "
            "resume, cancel); to reach a real login node set login.host (--login-host)",
        )
    from npa_sop_tui.status.login_address import resolve_login_address

    host = resolve_login_address(settings).host
    remote = list(args.remote)
    if remote and remote[0] == "--":
        remote = remote[1:]
    cmd = ssh_command(settings, host, accept_new=args.accept_new_host_key, remote=remote)
    if shutil.which("ssh") is None:
        raise OperationError(
            "the `ssh` client is not installed",
            hint="install openssh-client (apt-get install openssh-client)",
        )
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvp(cmd[0], cmd)
    return EXIT_OK  # not reached
