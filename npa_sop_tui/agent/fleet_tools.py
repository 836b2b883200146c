"""The `infra.fleet.deploy` agent tool (the existing npa's catalog entry: `npa fleet deploy
--spec {{config.fleet_spec}} --yes --output json`). Registered in `tools.py`.

The fleet file is read like a tool's `spec_path`: only inside the workspace root.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class FleetDeployInput(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    spec_path: str = Field(
        description="the fleet file (npa.fleet/v0.0.1) inside the workspace root",
    )
    sandbox: bool = Field(default=False, description="run every target in the sandbox")
    only_projects: list[str] | None = Field(default=None, description="only these projects")
    only_clusters: list[str] | None = Field(default=None, description="only these clusters")
    concurrency: int = Field(default=1, ge=1, description="targets deployed at once")
    timeout_minutes: float | None = Field(
        default=None, gt=0, description="bound on each Terraform plan/apply (default 90)"
    )


def output_model() -> type[BaseModel]:
    from npa_sop_tui.fleet.outcomes import FleetReport

    return FleetReport


async def deploy(args: FleetDeployInput, on_event: Any) -> BaseModel:
    from npa_sop_tui.agent.confinement import resolve_in_root
    from npa_sop_tui.fleet.loader import FleetError, parse_fleet_text
    from npa_sop_tui.fleet.runner import FleetRunner, FleetRunOptions
    from npa_sop_tui.fleet.select import select_targets
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
    from npa_sop_tui.spec.yaml_positions import MAX_BYTES

    path = resolve_in_root(args.spec_path, None)
    try:  # bounded, like every file a tool reads: a sparse giant is not read to the end
        text = read_regular_text(path, limit=MAX_BYTES, what="fleet file")
        loaded = parse_fleet_text(text, source=args.spec_path)
    except (Unreadable, FleetError):
        from npa_sop_tui.errors import UsageError

        # never echo a file that is not a fleet file back to the agent
        raise UsageError(
            f"{args.spec_path} is not a valid fleet file (npa.fleet/v0.0.1)",
            hint="`npa fleet plan --spec FILE` shows every problem with file:line",
        ) from None
    select = []
    if args.only_projects:
        select.append("project=" + ",".join(args.only_projects))
    if args.only_clusters:
        select.append("name=" + ",".join(args.only_clusters))
    targets = select_targets(loaded.targets, select) if select else loaded.targets
    options = FleetRunOptions(
        concurrency=args.concurrency, sandbox=args.sandbox, timeout_minutes=args.timeout_minutes
    )
    sink = (lambda _target, event: on_event(event)) if on_event is not None else None
    runner = FleetRunner(loaded, targets, options, sink)
    return await runner.deploy()
