"""`npa soperator preflight` and `npa soperator catalog refresh`, and the cloud flags that
`plan`, `deploy` and `destroy` share (`--profile`, `--no-preflight`, the existing npa's
`--timeout`, `--gpu-creation-check-timeout`, `--apply-fixes/--skip-fixes`,
`--source-preflight-only`, `--project`).

Nothing heavy is imported at module level: the SDK loads only when a handler reaches the
cloud, so `npa soperator validate` never pays for it.
"""

from __future__ import annotations

import argparse
from typing import Any

from npa_sop_tui.cli.common import add_output_flag, emit_json, identifier_arg, say, wants_json
from npa_sop_tui.errors import EXIT_BAD_INPUT, EXIT_OK, UsageError


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "preflight",
        help="check quotas, reserved capacity, availability and price in Nebius",
        description=(
            "Check a spec against the cloud before deploying: quota needed/limit/usage per "
            "resource, the platforms and presets the region offers, reserved pools (group "
            "resolved, active, region/platform/fabric, free GPUs and nodes), availability "
            "and the hourly price. Exit 0 when deployable (warnings allowed), 2 when reserved "
            "capacity is missing or wrong or a quota cannot be judged (its limit hidden, its "
            "unit foreign), 1 when the cloud did not answer for a quota; --allow-unknown "
            "lets unjudged quotas pass."
        ),
    )
    p.add_argument("--spec", "-f", required=True, metavar="FILE", help="cluster spec YAML")
    _allow_unknown_flag(p)
    p.add_argument(
        "--capacity-block-group",
        action="append",
        default=[],
        metavar="POOL=ID",
        help="reserved capacity for a GPU pool (repeatable; also NPA_CAPACITY_BLOCK_GROUPS)",
    )
    _cloud_flags(p)
    _project_flag(p, PROJECT_HELP)
    _sandbox_flag(p)
    add_output_flag(p)
    p.set_defaults(handler=cmd_preflight)

    catalog = subparsers.add_parser(
        "catalog",
        help="the platforms and presets regions offer",
        description="Platforms and presets: refresh the offline copy from the cloud.",
    )
    sub = catalog.add_subparsers(dest="catalog_command", metavar="COMMAND")
    sub.required = True
    r = sub.add_parser(
        "refresh",
        help="store what the project's region offers now (offline fallback for preflight)",
        description=(
            "Read PlatformService for your project and store its platforms and presets in "
            "<npa home>/catalog/platforms-<region>.json. Preflight and the wizard use it when "
            "the cloud does not answer; without it they use the packaged catalog."
        ),
    )
    r.add_argument(
        "--region",
        type=identifier_arg("region"),
        help="region (default: the identity's, from env or config)",
    )
    _project_flag(r, PROJECT_HELP)
    _cloud_flags(r)
    _sandbox_flag(r)
    add_output_flag(r)
    r.set_defaults(handler=cmd_catalog_refresh)


PROJECT_HELP = (
    "project ID (project-…), or the alias of a `projects:` section of config.yaml (the "
    "existing npa's): overrides the environment and the config's other keys"
)


def _project_flag(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--project", metavar="ID", type=identifier_arg("project"), help=help_text)


def _sandbox_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sandbox",
        action="store_true",
        help="ask the sandbox's simulated cloud (local gRPC server) instead of Nebius",
    )


def _allow_unknown_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-unknown",
        action="store_true",
        help="go on when the preflight cannot judge a quota (the cloud did not answer, the "
        "limit is hidden from these credentials, a unit npa cannot compare)",
    )


def _cloud_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        metavar="NAME",
        help="Nebius CLI profile in ~/.nebius/config.yaml (default: NEBIUS_PROFILE, then the "
        "file's default); NEBIUS_IAM_TOKEN wins when set",
    )
    p.add_argument(
        "--cloud-timeout",
        type=_positive,
        default=None,
        metavar="S",
        help="seconds each cloud read may take before it counts as unknown (default 120)",
    )


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


# --- flags shared with plan / deploy / destroy ------------------------------------------------


def add_lifecycle_flags(p: argparse.ArgumentParser, *, command: str) -> None:
    """The cloud and timing flags of `command` (plan, deploy or destroy)."""
    _cloud_flags(p)
    if command in ("plan", "deploy"):
        p.add_argument(
            "--no-preflight",
            dest="preflight",
            action="store_false",
            help="skip the cloud preflight (quotas, reservations, price) before Terraform",
        )
        _project_flag(p, PROJECT_HELP)
        _allow_unknown_flag(p)
    if command == "destroy":
        _project_flag(
            p,
            "the project ID or npa project alias the cluster is in: refused when it is "
            "not the cluster's (npa's flag; the cluster's own record decides where it is)",
        )
    if command in ("deploy", "destroy"):
        p.add_argument(
            "--timeout",
            type=_positive,
            default=90,
            metavar="MIN",
            help="minutes each Terraform plan or apply may take; then it is stopped "
            "gracefully and the error says where (default 90)",
        )
        p.add_argument(
            "--source-preflight-only",
            action="store_true",
            help="resolve and check the recipe source, then stop without changing anything",
        )
    if command == "deploy":
        p.add_argument(
            "--gpu-creation-check-timeout",
            type=_positive,
            default=1800,
            metavar="S",
            help="seconds for the GPU creation check on every GPU node (default 1800)",
        )
        fixes = p.add_mutually_exclusive_group()
        fixes.add_argument(
            "--apply-fixes",
            dest="apply_fixes",
            action="store_true",
            default=True,
            help="run the post-deploy repairs (default)",
        )
        fixes.add_argument(
            "--skip-fixes",
            dest="apply_fixes",
            action="store_false",
            help="skip the post-deploy repairs (the GPU creation check still runs)",
        )


def lifecycle_options(args: argparse.Namespace) -> dict[str, Any]:
    """LifecycleOptions fields from the flags above (only those the command has)."""
    out: dict[str, Any] = {
        "profile": getattr(args, "profile", None),
        "cloud_timeout": getattr(args, "cloud_timeout", None),
    }
    for flag, field in (
        ("preflight", "preflight"),
        ("allow_unknown", "allow_unknown"),
        ("project", "project"),
        ("timeout", "timeout_minutes"),
        ("source_preflight_only", "source_preflight_only"),
        ("gpu_creation_check_timeout", "gpu_check_timeout"),
        ("apply_fixes", "apply_fixes"),
    ):
        if hasattr(args, flag):
            out[field] = getattr(args, flag)
    return out


# --- handlers ---------------------------------------------------------------------------------


def _identity(
    environment: Any, spec: Any, project: str | None, cloud_timeout: float | None = None
) -> Any:
    """Region, tenant and project for the cloud reads (the sandbox's placeholders there);
    a lookup's reads are bounded by `cloud_timeout` like the others."""
    from npa_sop_tui.home.config import Identity
    from npa_sop_tui.lifecycle.flags import with_project

    if project and not project.startswith("project-"):
        project = None  # an npa project alias: the settings already read its section
    if environment.is_sandbox:
        identity = environment.identity(spec)
    else:
        identity = environment.settings.identity(spec)
        if project and not identity.project_id:
            identity = Identity(**{**identity.model_dump(), "project_id": project})
        if not identity.tenant_id or not identity.project_id:
            identity = environment.looked_up(identity, subnet=False, cloud_timeout=cloud_timeout)
        missing = [f for f in ("region", "tenant_id", "project_id") if not getattr(identity, f)]
        if project:
            missing = [f for f in missing if f != "project_id"]
        if missing:
            raise UsageError(
                f"the cloud reads need the cluster's {', '.join(missing)}",
                hint="set them in the spec, as NPA_REGION/NPA_TENANT_ID/NPA_PROJECT_ID, or in "
                "~/.npa/config.yaml",
            )
        if project and not identity.project_id:
            identity = Identity(**{**identity.model_dump(), "project_id": project})
    return with_project(identity, spec, project)


def cmd_preflight(args: argparse.Namespace) -> int:
    from npa_sop_tui.cli.common import capacity_flag, open_environment
    from npa_sop_tui.cli.interrupts import run_interruptible
    from npa_sop_tui.cloud.client import warm_up
    from npa_sop_tui.spec.model import load_spec

    warm_up()  # the SDK's import overlaps with loading the spec and the settings
    capacity = capacity_flag(args)
    loaded = load_spec(args.spec, capacity=capacity)
    if not wants_json(args):
        for finding in loaded.findings:
            say(finding.render(), err=True)
    spec = loaded.spec

    async def run() -> Any:
        import asyncio

        from npa_sop_tui.cloud.preflight import run_preflight
        from npa_sop_tui.lifecycle.cloud_steps import cloud_client, cluster_in_use, reads_for

        environment = open_environment(args)
        try:
            identity = await asyncio.to_thread(
                _identity, environment, spec, args.project, args.cloud_timeout
            )
            existing, in_use = cluster_in_use(spec.name, capacity)
            options = argparse.Namespace(
                environment=environment, profile=args.profile, cloud_timeout=args.cloud_timeout
            )
            reads = reads_for(options, spec=spec, capacity=capacity, identity=identity)
            async with cloud_client(options, environment, reads) as client:
                outcome = await run_preflight(
                    spec,
                    client,
                    tenant_id=identity.tenant_id,
                    project_id=identity.project_id,
                    region=identity.region,
                    capacity=capacity,
                    existing=existing,
                    in_use=in_use,
                )
            return outcome.report
        finally:
            await environment.aclose()

    report = run_interruptible(run, interrupted="preflight interrupted")
    code = EXIT_BAD_INPUT if report.blocked else EXIT_OK
    undecided = 0 if args.allow_unknown else report.undecided_exit()
    code = code or undecided
    if wants_json(args):
        emit_json({"ok": code == EXIT_OK, **report.model_dump(mode="json")})
        return code
    from npa_sop_tui.cloud.report_text import render_text, undecided_text

    say(render_text(report))  # the cloud's own words (errors, names) among ours
    if undecided:
        say(undecided_text(report), err=True)
    return code


def cmd_catalog_refresh(args: argparse.Namespace) -> int:
    from npa_sop_tui.cli.common import open_environment
    from npa_sop_tui.cli.interrupts import run_interruptible
    from npa_sop_tui.cloud.catalog_cache import write_cache

    async def run() -> tuple[str, Any]:
        from npa_sop_tui.lifecycle.cloud_steps import cloud_client, reads_for

        environment = open_environment(args)
        try:
            identity = environment.settings.identity(None)
            if environment.is_sandbox:
                identity = environment.identity(None)
            region = args.region or identity.region
            project = identity.project_id  # --project (an ID or npa alias) is in the settings
            if not region or not project:
                raise UsageError(
                    "catalog refresh needs a region and a project",
                    hint="pass --region and --project, or set NPA_REGION/NPA_PROJECT_ID",
                )
            options = argparse.Namespace(
                environment=environment, profile=args.profile, cloud_timeout=args.cloud_timeout
            )
            async with cloud_client(
                options, environment, reads_for(options, identity=identity)
            ) as client:
                offers = await client.platforms(project)
            return region, offers
        finally:
            await environment.aclose()

    region, offers = run_interruptible(run, interrupted="catalog refresh interrupted")
    path = write_cache(region, offers, source="sandbox" if args.sandbox else "nebius")
    presets = sum(len(o.presets) for o in offers)
    if wants_json(args):
        emit_json(
            {"ok": True, "region": region, "platforms": len(offers), "presets": presets,
             "path": str(path)}
        )  # fmt: skip
        return EXIT_OK
    print(f"Stored {len(offers)} platforms ({presets} presets) offered in {region}: {path}")
    return EXIT_OK
