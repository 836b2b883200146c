"""`npa soperator report --name N --out FILE.html`: the last operation of a cluster as one
self-contained HTML page (summary, timeline, active checks, GPU gate, verdict).

The operation comes from the inventory and its NDJSON event log; the active checks and the
verdict from one live status snapshot (the same collectors and login resolver as `status`),
unless `--no-status` or the cluster cannot be reached: the page then says so and the verdict
is the operation's own result.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from npa_sop_tui.cli.common import say
from npa_sop_tui.errors import UsageError
from npa_sop_tui.safe_text import safe_text

STATUS_TIMEOUT = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from npa_sop_tui.cli.cluster_connection import add_connection_flags

    parser = subparsers.add_parser(
        "report",
        help="write one cluster's last operation as a self-contained HTML page",
        description=__doc__.split("\n\n", 1)[0] if __doc__ else None,
    )
    add_connection_flags(parser)
    parser.add_argument(
        "--out", type=Path, required=True, metavar="FILE.html", help="where to write"
    )
    parser.add_argument("--operation", metavar="ID", help="this operation instead of the last one")
    parser.add_argument(
        "--no-status", action="store_true", help="do not collect live status (offline report)"
    )
    parser.add_argument(
        "--sandbox", action="store_true", help="a sandbox cluster (state under NPA_HOME/sandbox)"
    )
    parser.set_defaults(handler=handle_report, no_kube=False, no_slurm=False)


def handle_report(args: argparse.Namespace) -> int:
    from npa_sop_tui.events import GpuCheckReported
    from npa_sop_tui.history.oplog import read_events
    from npa_sop_tui.history.timeline import TimelineBuilder
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home.fsutil import atomic_write_text
    from npa_sop_tui.home.paths import check_cluster_name
    from npa_sop_tui.report.html import ReportData, render_report, verdict_of

    name = check_cluster_name(args.name)
    out: Path = args.out
    if out.is_dir() or not out.parent.is_dir():
        raise UsageError(
            f"--out {out}: not a file in an existing folder", hint="give a path like ./demo.html"
        )
    entry = inventory.require(name)
    records = [op for op in entry.operations if op.log_file]
    if args.operation:
        records = [op for op in records if op.id == args.operation]
    if not records:
        which = f"operation {args.operation}" if args.operation else "an operation with a log"
        raise UsageError(
            f"{name}: no {which} in the inventory",
            hint=f"`npa soperator list` shows {name}'s operations; deploy it first",
        )
    record = records[-1]
    log = record.log_file
    assert log is not None  # kept above: a log inside this npa home
    builder = TimelineBuilder()
    gpu_checks: list[GpuCheckReported] = []
    try:
        for event in read_events(log):
            builder.add(event)
            if isinstance(event, GpuCheckReported):
                gpu_checks.append(event)
    except OSError as exc:
        raise UsageError(
            f"{record.log}: cannot read the operation log ({exc.strerror or exc})",
            hint="the log lives under the npa home (logs/); check it was not removed",
        ) from None
    status, problem = (None, "not collected (--no-status)") if args.no_status else _snapshot(args)
    data = ReportData(
        cluster=name,
        operation=record.model_dump(mode="json"),
        timeline=builder.build(),
        gpu_checks=gpu_checks,
        validation=entry.validation,
        status=status,
        status_problem=problem,
    )
    atomic_write_text(out, render_report(data))
    state, sentence = verdict_of(data)
    say(f"{out}: {name}, {record.kind} {record.id}: {state.upper()} ({safe_text(sentence)})")
    return 0


def _snapshot(args: argparse.Namespace) -> tuple[object | None, str | None]:
    """One live status snapshot, or (None, why not)."""
    import asyncio

    from npa_sop_tui.cli.cluster_connection import build_settings, connection_environment
    from npa_sop_tui.errors import NpaError

    async def first() -> object | None:
        environment = connection_environment(args)
        try:
            settings = build_settings(args, environment)
            async for snap in environment.status_feed(settings):
                return snap
            return None
        finally:
            await environment.aclose()

    try:
        snap = asyncio.run(asyncio.wait_for(first(), STATUS_TIMEOUT))
    except TimeoutError:
        return None, f"no status within {STATUS_TIMEOUT:g}s"
    except NpaError as exc:
        return None, exc.message
    return (snap, None) if snap is not None else (None, "status collection ended early")
