"""`npa soperator state init | migrate` and `npa soperator unlock`: the team's state bucket."""

from __future__ import annotations

import argparse
import time
from typing import Any

from npa_sop_tui.cli.cloud_cmds import _positive as _positive_seconds
from npa_sop_tui.cli.common import (
    add_output_flag,
    add_state_bucket_flag,
    emit_json,
    identifier_arg,
    open_environment,
    say,
    wants_json,
)
from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.safe_text import safe_text


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    state = subparsers.add_parser(
        "state",
        help="the team's state bucket: create it, move clusters into or out of it",
        description="Terraform state, records and locks in an Object Storage bucket, so a "
        "cluster outlives one laptop (docs/lifecycle.md, 'Working as a team').",
    )
    actions = state.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    p = actions.add_parser(
        "init",
        help="create the state bucket (versioning on) and print the config lines",
        description="Create an Object Storage bucket in the project (project_id) through the "
        "Nebius API, with versioning on, and print the `state:` lines for the npa config. "
        "An existing bucket is kept (versioning is turned on if it was off).",
    )
    p.add_argument("--bucket", required=True, metavar="NAME", help="bucket name")
    p.add_argument(
        "--project",
        metavar="ID",
        type=identifier_arg("project"),
        help="project ID (or npa project alias) to create it in (default project_id)",
    )
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="Nebius CLI profile in ~/.nebius/config.yaml (default: NEBIUS_PROFILE, then the "
        "config's default)",
    )
    p.add_argument(
        "--cloud-timeout",
        type=_positive_seconds,
        default=None,
        metavar="S",
        help="seconds the bucket setup may take, and again for a versioning change to apply "
        "(default 120)",
    )
    add_output_flag(p)
    p.set_defaults(handler=cmd_init)

    p = actions.add_parser(
        "migrate",
        help="move a cluster's Terraform state and records to the bucket or back",
        description="Copy the state to the other backend, verify it through Terraform "
        "(lineage, serial and resource count), and only then retire the source.",
    )
    p.add_argument("--name", "-n", required=True, help="cluster name")
    p.add_argument("--to", required=True, choices=("s3", "local"), help="where to move it")
    _shared_args(p)
    p.set_defaults(handler=cmd_migrate)

    p = subparsers.add_parser(
        "unlock",
        help="break a cluster's lock left by a run that died (after you type its name)",
        description="Show who holds the cluster's lock in the state bucket and remove it "
        "after you type the cluster name. Only for a holder that is gone: a lock whose "
        "lease ran out is taken over by the next operation anyway.",
    )
    p.add_argument("--name", "-n", required=True, help="cluster name")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask (scripts)")
    _shared_args(p)
    p.set_defaults(handler=cmd_unlock)


def _shared_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sandbox", action="store_true", help="the sandbox's clusters")
    add_state_bucket_flag(p)
    add_output_flag(p)


def _holder_text(holder: dict[str, Any]) -> str:
    from npa_sop_tui.home.locks import ClusterBusy

    text = ClusterBusy("", holder).message.split(": ", 1)[-1]
    expires = holder.get("expires")
    if isinstance(expires, int | float):
        left = expires - time.time()
        text += (
            f"; lease runs out in {left:.0f}s" if left > 0 else f"; lease ran out {-left:.0f}s ago"
        )
    return text


def cmd_unlock(args: argparse.Namespace) -> int:
    from npa_sop_tui.cli.lifecycle_cmds import _ask, _interactive
    from npa_sop_tui.home.paths import check_cluster_name

    name = check_cluster_name(args.name)
    store = open_environment(args).state_store()
    holder = store.lock_holder(name)
    if holder is None:
        if wants_json(args):
            emit_json({"ok": True, "name": name, "broken": None})
        else:
            print(f"Cluster {name!r} is not locked; nothing to unlock.")
        return 0
    if not store.shared:
        store.break_lock(name)  # explains why a local lock cannot be broken
    if not args.yes:
        if not _interactive():
            raise UsageError(
                f"refusing to unlock {name!r} without confirmation (not a terminal)",
                hint="pass --yes to unlock from a script",
            )
        answer = _ask(
            f"Cluster {name!r} is locked by {safe_text(_holder_text(holder))}.\n"
            "Breaking it lets another operation start while that one may still be running.\n"
            "Type the cluster name to break the lock: "
        )
        if answer.strip() != name:
            raise OperationError(
                "the name did not match; the lock is unchanged",
                hint=f"type {name!r} exactly, or pass --yes from a script",
            )
    broken = store.break_lock(name, expected=holder)
    if wants_json(args):
        emit_json({"ok": True, "name": name, "broken": broken})
        return 0
    say(f"Broke the lock on {name!r}: it was held by {safe_text(_holder_text(broken))}.")
    print(
        "If that operation is still running somewhere, stop it: its Terraform state may be "
        "written by two runs."
    )
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    import asyncio

    from npa_sop_tui.home.paths import check_cluster_name
    from npa_sop_tui.state.location import location_from_settings
    from npa_sop_tui.state.migrate import migrate
    from npa_sop_tui.state.s3 import S3Store
    from npa_sop_tui.state.stores import store_at

    name = check_cluster_name(args.name)
    environment = open_environment(args)
    location = location_from_settings(environment.settings)
    if not location.shared:
        raise UsageError(
            "no state bucket is configured to migrate to or from",
            hint="pass --state-bucket, export NPA_STATE_BUCKET, or set state.bucket in the "
            "npa config",
        )
    bucket_store = store_at(location)
    assert isinstance(bucket_store, S3Store)

    def note(text: str) -> None:
        if not wants_json(args):
            say(text, err=True)

    async def run() -> Any:
        try:
            return await migrate(
                name, args.to, environment=environment, bucket_store=bucket_store, note=note
            )
        finally:
            await environment.aclose()

    done = asyncio.run(run())
    if wants_json(args):
        emit_json({"ok": True, "result": done.__dict__})
        return 0
    print(
        f"Moved the state of {name!r} to {done.where}: serial {done.serial}, "
        f"{done.resources} resources, lineage {done.lineage} (verified through Terraform)."
    )
    if args.to == "s3":
        print(
            f"Use the bucket from now on: add to the npa config\n"
            f"state:\n  backend: s3\n  bucket: {location.bucket}"
        )
    else:
        print("Use local state for it from now on (state.backend: local, no --state-bucket).")
    return 0


def cmd_init(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses

    from npa_sop_tui.state.bucket_setup import TIMEOUT, config_lines, ensure_bucket
    from npa_sop_tui.state.location import _BUCKET_RE, default_endpoint

    if not _BUCKET_RE.fullmatch(args.bucket) or ".." in args.bucket:
        raise UsageError(
            f"--bucket {args.bucket!r} is not a valid bucket name",
            hint="3-63 lowercase letters, digits, dots and dashes",
        )
    settings = open_environment(args).settings
    project = settings["project_id"]  # --project (an ID or an npa alias) is in the settings
    if not project:
        raise UsageError(
            "no project to create the bucket in",
            hint="pass --project, export NPA_PROJECT_ID, or set project_id in the npa config",
        )
    timeout = args.cloud_timeout or TIMEOUT
    ready = asyncio.run(
        ensure_bucket(args.bucket, project, profile=settings["profile"], timeout=timeout)
    )
    region = settings["state.region"] or settings["region"]
    endpoint = settings["state.endpoint"]
    from npa_sop_tui.state import bucket_checks
    from npa_sop_tui.state.conditional import named_bucket

    bucket = named_bucket(args.bucket, settings)
    if ready.versioning_switched:
        bucket_checks.remember(bucket, versioning_changed_at=time.time())
    # While a versioning change applies, the caveat is said every time and no test object is
    # written; afterwards team locking's conditional writes are probed (refused: exit 2).
    settles = bucket_checks.versioning_settles_at(bucket)
    if settles is None:
        bucket_checks.probe_and_remember(bucket)
    else:
        ready = dataclasses.replace(ready, note=bucket_checks.settling_note(settles))
    if ready.versioning_switched:
        from npa_sop_tui.state.versioning_wait import wait_for_versioning

        def progress(line: str) -> None:
            say(line, err=True)

        if not wait_for_versioning(bucket, timeout, progress):
            ready = dataclasses.replace(ready, versioning="pending")
    if endpoint and region and endpoint == default_endpoint(region):
        endpoint = None
    lines = config_lines(args.bucket, region, endpoint)
    checked = "enforced" if settles is None else "not checked yet"
    if wants_json(args):
        doc = {**ready.__dict__, "conditional_writes": checked}
        emit_json({"ok": True, "bucket": doc, "config": lines})
        return 0
    what = "Created" if ready.created else "Found"
    say(f"{what} bucket {ready.name!r} ({ready.id}) with versioning {ready.versioning}.")
    if ready.note:
        late = ready.versioning == "pending"
        say(ready.note + (f" It had not applied after {timeout:g}s." if late else ""))
    if settles is None:
        print("The bucket enforces conditional writes (If-None-Match, If-Match): locks are safe.")
    print("Add to the npa config (~/.npa/config.yaml) of everyone on the team:\n")
    print(lines)
    print(
        "\nThe bucket's access key comes from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, else "
        "AWS_PROFILE, else it is minted from your Nebius profile for a service account "
        "(state.service_account_id, default: the profile's own) and kept in memory only; "
        "npa never writes a key to a file."
    )
    return 0
