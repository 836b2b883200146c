"""`npa` console entry: argument parsing and dispatch only.

Each command group lives in its own module with a `register(subparsers)` function. Those
modules import nothing heavy at import time (no Textual, kubernetes or asyncssh), so
`npa soperator validate` stays fast; handlers import what they need when they run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from npa_sop_tui import __version__
from npa_sop_tui.cli import (
    agent_cmds,
    config_cmds,
    fleet_cmds,
    lifecycle_cmds,
    set_cmd,
    slurm_cmds,
    spec_cmds,
    status_cmds,
    tui_cmds,
    workflow_cmds,
)
from npa_sop_tui.cli.common import run_handler


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="npa",
        description="Nebius Physical AI tools: Soperator (Slurm on Kubernetes) clusters.",
    )
    parser.add_argument("--version", action="version", version=f"npa-sop-tui {__version__}")
    groups = parser.add_subparsers(dest="group", metavar="GROUP")
    groups.required = True

    soperator = groups.add_parser(
        "soperator",
        help="Soperator clusters: validate, render, plan, deploy, status, destroy",
        description="Stand up and watch Slurm clusters on Kubernetes (Nebius Soperator).",
    )
    commands = soperator.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for module in (
        spec_cmds,
        set_cmd,
        lifecycle_cmds,
        status_cmds,
        slurm_cmds,
        config_cmds,
        tui_cmds,
        agent_cmds,
    ):
        module.register(commands)

    fleet_cmds.register(groups)
    workflow_cmds.register(groups)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    return run_handler(args)


def tui_main(argv: Sequence[str] | None = None) -> int:
    """`npa-sop`: the Textual app (same as `npa soperator tui`)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    return main(["soperator", "tui", *args])
