"""`npa soperator tui [--sandbox] [--spec F] [--name N] [--read-only]` (and `npa-sop`): start
the Textual app.

Textual is imported only when the command runs, so other `npa` commands stay light.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from npa_sop_tui.cli.common import add_output_flag, wants_json
from npa_sop_tui.errors import UsageError

DESCRIPTION = (
    "Open the npa-sop terminal app. With --sandbox everything runs on this machine: "
    "the stand-in recipe through real Terraform, a simulated Kubernetes API and Slurm."
)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "tui",
        help="the interactive app: wizard, deploy with live progress, status, destroy",
        description=DESCRIPTION,
    )
    configure(parser)


def configure(parser: argparse.ArgumentParser) -> None:
    """The app's arguments, shared by `npa soperator tui` and `npa-sop`."""
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="run the whole flow locally (no cloud account needed); state under NPA_HOME/sandbox",
    )
    parser.add_argument(
        "--spec", type=Path, metavar="FILE", help="open this cluster.yaml in the wizard"
    )
    parser.add_argument(
        "--name", metavar="CLUSTER", help="open this cluster's live dashboard at once"
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="watch only: no action that changes a cluster or a file is offered",
    )
    # accepted like on every command, so `--output json` gets a clear answer, not "unrecognized"
    add_output_flag(parser)
    parser.set_defaults(handler=run_tui)


def run_tui(args: argparse.Namespace) -> int:
    if wants_json(args):
        raise UsageError(
            "the app is interactive: it has no JSON output",
            hint="for JSON use the headless commands, e.g. `npa soperator status --name NAME "
            "--output json` or `npa soperator list --output json`",
        )
    spec: Path | None = args.spec
    if spec is not None and not spec.is_file():
        raise UsageError(
            f"{spec}: no such file", hint="give the path of an existing cluster.yaml to --spec"
        )
    from npa_sop_tui.tui.app import run_app

    name: str | None = args.name
    if name is not None:
        from npa_sop_tui.home.paths import check_cluster_name

        check_cluster_name(name)
    return run_app(
        sandbox=bool(args.sandbox),
        spec_path=spec,
        read_only=bool(args.read_only),
        open_cluster=name,
    )
