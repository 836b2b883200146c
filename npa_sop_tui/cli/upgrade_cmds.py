"""`npa soperator upgrade`: another Soperator version for a deployed cluster.

Shows the plan before anything runs (the operator's releases updated in place; Kubernetes
one minor at a time, the control plane then every node group; the expected time; the workers
that will be drained), asks on a terminal, then runs each step as a deploy with live progress
and reads the active checks at the end. `--plan-only` stops after the plan. Nothing heavy is
imported at module level.
"""

from __future__ import annotations

import argparse
import sys

from npa_sop_tui.cli import cloud_cmds
from npa_sop_tui.cli.common import add_output_flag, add_state_bucket_flag, emit_json, wants_json
from npa_sop_tui.errors import EXIT_FAILED, EXIT_OK


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "upgrade",
        help="upgrade a cluster's Soperator (and Kubernetes, one minor at a time)",
        description="Upgrade a deployed cluster to another Soperator version: shows what "
        "changes first (operator releases in place, Kubernetes steps, node groups, time, "
        "drained workers), then runs each step as a deploy and checks the active checks.",
    )
    p.add_argument("--name", "-n", required=True, help="cluster name (see `npa soperator list`)")
    p.add_argument("--to", required=True, metavar="VERSION", help="Soperator version, e.g. 4.1.13")
    p.add_argument(
        "--k8s-version",
        metavar="MAJOR.MINOR",
        help="Kubernetes version to end on (default: the target recipe's, e.g. 1.36); "
        "reached one minor at a time",
    )
    p.add_argument("--plan-only", action="store_true", help="show the plan; change nothing")
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument(
        "--sandbox",
        action="store_true",
        help="a sandbox cluster (the stand-in recipe and the PyPI Terraform, offline)",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="also show Terraform's log lines")
    add_state_bucket_flag(p)
    add_output_flag(p, ndjson=True)
    cloud_cmds.add_lifecycle_flags(p, command="deploy")
    p.set_defaults(handler=cmd_upgrade)


def cmd_upgrade(args: argparse.Namespace) -> int:
    from npa_sop_tui.cli.lifecycle_cmds import _ask, _closing, _interactive, _options, _run
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home.paths import check_cluster_name
    from npa_sop_tui.lifecycle import upgrade as upgrading
    from npa_sop_tui.lifecycle.upgrade_plan import plan_lines

    name = check_cluster_name(args.name)
    options = _options(args)
    inventory.require(name, store=options.environment.state_store())
    plan = upgrading.plan_upgrade(upgrading.deployed_spec_of(name, options), args.to,
                                  args.k8s_version)  # fmt: skip
    if args.plan_only or not plan.steps:
        if wants_json(args):
            emit_json({"ok": True, "name": name, "status": "planned",
                       "plan": plan.model_dump(mode="json")})  # fmt: skip
        else:
            print("\n".join(plan_lines(plan)))
        return EXIT_OK
    if not wants_json(args):
        print("\n".join(plan_lines(plan)))
        if not args.yes:
            if not _interactive():
                from npa_sop_tui.errors import UsageError

                raise UsageError("upgrade changes a running cluster", hint="pass --yes to run it")
            if _ask(f"Upgrade {name!r}? [y/N] ").strip().lower() not in ("y", "yes"):
                print("Not upgraded.")
                return EXIT_FAILED
        sys.stdout.flush()
    result = _run(
        lambda sink: _closing(
            options,
            upgrading.upgrade(name, args.to, options=options, on_event=sink,
                              k8s_version=args.k8s_version),
        ),
        args,
    )  # fmt: skip
    if wants_json(args):
        emit_json({"ok": result.status == "upgraded", **result.model_dump(mode="json")})
        return EXIT_OK if result.status == "upgraded" else EXIT_FAILED
    checks = result.checks
    print(f"Upgraded {name!r} to Soperator {plan.to_operator}, Kubernetes {plan.to_k8s} "
          f"({result.steps_done} step(s))")  # fmt: skip
    if checks is not None and checks.read:
        print(f"  active checks: {checks.total} read, waiting on {len(checks.waiting)}"
              + (f" ({', '.join(checks.waiting)})" if checks.waiting else "")
              + (f"; failed: {', '.join(checks.failed)}" if checks.failed else ""))  # fmt: skip
    elif checks is not None and checks.note:
        print(f"  active checks: {checks.note}")
    return EXIT_OK if result.status == "upgraded" else EXIT_FAILED
