"""How a command reaches a cluster: the connection flags (`--name`, `--kubeconfig`,
`--context`, `--login-host`, …) that status, ssh, the Slurm commands, run and report share,
and the status settings built from them and the config.

Nothing heavy is imported at module level.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.errors import UsageError

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.status.watch_settings import StatusSettings


def add_connection_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--name", "-n", required=True, help="cluster name")
    p.add_argument(
        "--kubeconfig",
        type=Path,
        default=None,
        help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)",
    )
    p.add_argument(
        "--context",
        default=None,
        help="kube context (default: the inventory's, else nebius-<name>-slurm)",
    )
    p.add_argument(
        "--login-host",
        default=None,
        help="login node address (default: config login.host, else the "
        "soperator-login-svc LoadBalancer address)",
    )
    p.add_argument("--login-port", type=int, default=None, help="SSH port (default 22)")
    p.add_argument("--login-user", default=None, help="SSH user (default root)")
    p.add_argument(
        "--identity-file",
        "-i",
        type=Path,
        default=None,
        help="private key (default: config ssh_private_key_path, else the SSH agent)",
    )
    p.add_argument(
        "--accept-new-host-key",
        action="store_true",
        help="trust and record the login node's host key if it is not known yet "
        "(a changed key is always refused)",
    )


def connection_environment(args: argparse.Namespace) -> Environment:
    """The command's environment; its settings take the connection flags first."""
    from npa_sop_tui.cli.common import open_environment

    if not getattr(args, "sandbox", False):
        _refuse_sandbox_only(args)
    identity_file = getattr(args, "identity_file", None)
    return open_environment(
        args,
        **{
            "login.host": args.login_host or None,
            "login.port": args.login_port,
            "login.user": args.login_user,
            "ssh_private_key_path": str(identity_file) if identity_file else None,
            "status.interval_seconds": getattr(args, "interval", None),
        },
    )


def _refuse_sandbox_only(args: argparse.Namespace) -> None:
    """A name only the sandbox knows, asked for without `--sandbox`: say so (exit 2) rather
    than fail on a kube context that cannot exist. A real cluster of the same name is still
    reached by naming its connection (--context, --kubeconfig or --login-host)."""
    name = (getattr(args, "name", None) or "").strip()
    if not name or args.context or args.kubeconfig or args.login_host:
        return
    from npa_sop_tui.home.paths import CLUSTER_NAME_RE, sandbox_home, soperator_root

    if not CLUSTER_NAME_RE.fullmatch(name) or (soperator_root() / name).exists():
        return
    if (sandbox_home() / "soperator" / name).is_dir():
        command = getattr(args, "command", None) or "status"
        raise UsageError(
            f"{name!r} is a sandbox cluster, and this command looked for a real one",
            hint=f"add --sandbox: npa soperator {command} --name {name} --sandbox (or pass "
            "--context for a real cluster of the same name)",
        )


def build_settings(
    args: argparse.Namespace, environment: Environment | None = None
) -> StatusSettings:
    name = (args.name or "").strip()
    if not name:
        raise UsageError("--name must not be empty", hint="pass the cluster name: --name demo")
    from npa_sop_tui.home.paths import check_cluster_name

    check_cluster_name(name)
    interval = getattr(args, "interval", None)
    if interval is not None:  # nan, inf or 1e-9 would make a watch spin
        from npa_sop_tui.home.config import STATUS_INTERVAL_RANGE, seconds_in

        seconds_in(str(interval), "--interval", STATUS_INTERVAL_RANGE)
    if args.kubeconfig is not None and not args.kubeconfig.is_file():
        raise UsageError(
            f"--kubeconfig {args.kubeconfig}: file not found",
            hint="pass an existing kubeconfig or drop the flag to use ~/.kube/config",
        )
    if args.login_port is not None and not 0 < args.login_port < 65536:
        raise UsageError(f"--login-port {args.login_port} is not a TCP port")
    environment = environment or connection_environment(args)
    settings = environment.settings
    identity = settings["ssh_private_key_path"]
    if identity is not None and not Path(str(identity)).expanduser().is_file():
        where = (
            "--identity-file"
            if settings.source("ssh_private_key_path") == "flag"
            else f"ssh_private_key_path ({settings.source('ssh_private_key_path')})"
        )
        raise UsageError(
            f"{where} {identity}: file not found",
            hint="pass the private key matching the cluster's root public key (-i)",
        )
    return environment.status_settings(
        name,
        context=args.context,
        kubeconfig=args.kubeconfig,
        kube_enabled=not getattr(args, "no_kube", False),
        slurm_enabled=not getattr(args, "no_slurm", False),
        slurm_format=getattr(args, "slurm_format", None),
        terraform_dir=getattr(args, "terraform_dir", None),
    )
