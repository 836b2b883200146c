"""`npa soperator list` and `npa soperator adopt`: the clusters npa knows, and taking over the
ones it did not deploy (the existing npa's, and ones made with the recipe directly).

Nothing heavy is imported at module level.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from npa_sop_tui.cli.common import (
    add_output_flag,
    add_state_bucket_flag,
    emit_json,
    open_environment,
    say,
    text_table,
    wants_json,
)
from npa_sop_tui.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "list",
        help="clusters in the inventory (this machine's, or the team's state bucket)",
        description="List clusters with region, context and the last operation: what, when, "
        "its result and who ran it. With a state bucket (state.backend: s3), the team's. "
        "Clusters the existing npa deployed in this npa home are listed too (adopted on "
        "first use).",
    )
    p.add_argument("--sandbox", action="store_true", help="list the sandbox's clusters")
    add_state_bucket_flag(p)
    add_output_flag(p)
    p.set_defaults(handler=cmd_list)

    p = subparsers.add_parser(
        "adopt",
        help="take over a cluster npa did not deploy: the existing npa's, or a recipe's",
        description="Register a cluster in the inventory where it is: one the existing npa "
        "deployed (--name), or one made with the recipe directly (--install-dir: the "
        "soperator/installations/<name> folder it was applied in). Its variables are read "
        "back through Terraform into a cluster.yaml (--spec-out), with comments on what was "
        "defaulted and what is kept as deployed; its state stays where it is (`npa soperator "
        "state migrate` moves it). Plan, deploy and destroy then work on it.",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--name", "-n", help="a cluster the existing npa deployed here")
    which.add_argument("--install-dir", metavar="DIR", type=Path, help="the applied folder")
    p.add_argument(
        "--spec-out",
        metavar="FILE",
        type=Path,
        help="write the cluster.yaml here (default: <name>.yaml in this folder)",
    )
    p.add_argument("--force", action="store_true", help="overwrite --spec-out if it exists")
    for field, flag in (
        ("region", "--region"),
        ("tenant_id", "--tenant-id"),
        ("project_id", "--project-id"),
        ("subnet_id", "--subnet-id"),
    ):
        p.add_argument(
            flag,
            dest=field,
            metavar="ID" if field != "region" else "REGION",
            help=f"the cluster's {field} (a recipe's cluster; default: its variables, "
            "TF_VAR_*, its state, then the settings)",
        )
    p.add_argument("--sandbox", action="store_true", help="adopt into the sandbox's home")
    add_state_bucket_flag(p)
    add_output_flag(p)
    p.set_defaults(handler=cmd_adopt)


def cmd_list(args: argparse.Namespace) -> int:
    from npa_sop_tui.home import inventory
    from npa_sop_tui.lifecycle.adopt import listed

    store = open_environment(args).state_store()
    # A damaged record must not make a cluster silently vanish from the list: name it.
    listing = listed(store=store)
    entries, damaged, found = listing.entries, listing.damaged, listing.found
    if wants_json(args):
        emit_json(
            {
                "store": store.describe(),
                "clusters": [e.model_dump(mode="json") for e in entries],
                "damaged": [{"path": str(d.path), "problems": d.problems} for d in damaged],
                "found": [e.model_dump(mode="json") for e in found],
                "unusable": listing.unusable,
            }
        )
        return 0
    for problem in damaged:
        say(f"warning: {problem.message}", err=True)
    for text in listing.unusable:
        say(f"warning: {text}", err=True)
    if not entries and not found:
        print(f"No clusters in the inventory ({store.describe()}).")
        return 0
    rows = [("NAME", "STATE", "REGION", "CONTEXT", "LAST OPERATION", "RESULT", "WHEN", "BY")]
    rows += [_row(e) for e in entries]
    rows += [(e.name, e.state, e.region or "-", e.kube_context, *"---", "npa") for e in found]
    print(text_table(rows))  # a record's fields are a file's text: each cell shown safely
    unsettled = [e for e in entries if e.state in ("interrupted", "failed", "destroy-incomplete")]
    for e in unsettled:
        say(f"next for {e.name}: {inventory.next_step(e)}")
    for e in found:
        say(
            f"found {e.name}: deployed by the existing npa in {e.install_dir}; status, "
            f"plan, deploy and destroy adopt it on first use (`npa soperator adopt --name "
            f"{e.name}`)"
        )
    return 0


def _row(e: Any) -> tuple[str, ...]:
    last = e.last_operation
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last.started)) if last else "-"
    by = f"{last.user}@{last.host}" if last is not None and last.user else "-"
    if last is None and e.adoption is not None:
        by = "npa" if e.adoption.origin == "npa" else "adopted"
    return (
        e.name,
        e.state,
        e.region or "-",
        e.kube_context,
        last.kind if last else "-",
        last.result if last else "-",
        when,
        by,
    )


def cmd_adopt(args: argparse.Namespace) -> int:
    import asyncio

    from npa_sop_tui.home import npa_installs
    from npa_sop_tui.home.paths import check_cluster_name
    from npa_sop_tui.lifecycle.adopt import adopt
    from npa_sop_tui.lifecycle.results import LifecycleOptions

    install_dir = args.install_dir
    if args.name is not None:
        found = npa_installs.find(check_cluster_name(args.name))
        if found is None:
            raise UsageError(
                f"the existing npa has no cluster named {args.name!r} in this npa home",
                hint="a cluster made with the recipe directly: pass --install-dir DIR",
            )
        install_dir = found.install_dir
    identity = {k: getattr(args, k) for k in ("region", "tenant_id", "project_id", "subnet_id")}
    identity = {k: v for k, v in identity.items() if v}
    environment = open_environment(args)
    options = LifecycleOptions(environment=environment)

    async def run() -> Any:
        try:
            return await adopt(
                install_dir,
                identity=identity,
                spec_out=args.spec_out or Path(f"{install_dir.name}.yaml"),
                force=args.force,
                options=options,
            )
        finally:
            await environment.aclose()

    result = asyncio.run(run())
    if wants_json(args):
        emit_json({"ok": True, **result.to_dict()})
        return 0
    origin = "the existing npa's" if result.entry.adoption.origin == "npa" else "a recipe's"
    lines = [
        f"Adopted {result.entry.name!r} ({origin} cluster, {result.entry.state}) where it is:",
        f"  installation: {result.entry.install_dir} (its state stays there)",
        f"  spec: {result.spec_path}",
    ]
    if result.kept:
        lines.append(f"  kept as deployed (the spec cannot say them): {', '.join(result.kept)}")
    if result.kept_variables:
        lines.append(f"  recipe settings kept as deployed: {', '.join(result.kept_variables)}")
    if result.defaulted:
        lines.append(f"  defaulted (the installation does not say): {', '.join(result.defaulted)}")
    lines += [f"  fix before the next deploy: {finding.render()}" for finding in result.findings]
    lines.append(f"Next: `npa soperator plan --spec {result.spec_path}` (no changes expected).")
    for line in lines:  # names, paths and findings come from someone else's files
        say(line)
    return 0
