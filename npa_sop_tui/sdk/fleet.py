"""Python SDK for fleets: `from npa.sdk import fleet` (npa's `plan`, `deploy`, `destroy`,
`status`). Each takes a fleet file path, its YAML text as a mapping, or a `LoadedFleet`, and
returns the typed report (`FleetReport`; `FleetStatusTable` for status), whose JSON carries
npa's aggregate (`clusters`, `deployed`, `failed`, `backend_counts`) beside ours.

    from npa.sdk import fleet
    report = fleet.deploy("fleet.yaml", sandbox=True, only_projects=["alpha"])
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.loader import FleetError, LoadedFleet, load_fleet, parse_fleet_text
from npa_sop_tui.fleet.outcomes import FleetReport
from npa_sop_tui.fleet.runner import FleetRunner, FleetRunOptions
from npa_sop_tui.fleet.select import select_targets
from npa_sop_tui.fleet.status import FleetStatusTable

FleetLike = LoadedFleet | Mapping[str, Any] | str | os.PathLike[str]


def load_spec(path: str | os.PathLike[str]) -> LoadedFleet:
    """Read and check a fleet file; `FleetError` lists every problem with file:line."""
    return load_fleet(path)


def spec_from_mapping(data: Mapping[str, Any]) -> LoadedFleet:
    import yaml

    return parse_fleet_text(yaml.safe_dump(dict(data), sort_keys=False), source="<mapping>")


def _loaded(spec: FleetLike) -> LoadedFleet:
    if isinstance(spec, LoadedFleet):
        return spec
    if isinstance(spec, Mapping):
        return spec_from_mapping(spec)
    if isinstance(spec, str | os.PathLike):
        return load_fleet(spec)
    raise UsageError(f"fleet spec must be a path, a mapping or a LoadedFleet, not {type(spec)}")


def _targets(
    loaded: LoadedFleet, only_projects: Iterable[str] | None, only_clusters: Iterable[str] | None
) -> list[Any]:
    select = []
    if only_projects:
        select.append("project=" + ",".join(only_projects))
    if only_clusters:
        select.append("name=" + ",".join(only_clusters))
    return select_targets(loaded.targets, select) if select else loaded.targets


def _runner(
    spec: FleetLike,
    only_projects: Iterable[str] | None,
    only_clusters: Iterable[str] | None,
    options: dict[str, Any],
) -> FleetRunner:
    loaded = _loaded(spec)
    return FleetRunner(
        loaded, _targets(loaded, only_projects, only_clusters), FleetRunOptions(**options)
    )


def _options(kw: dict[str, Any]) -> dict[str, Any]:
    if "timeout" in kw:  # npa's CLI name
        kw["timeout_minutes"] = kw.pop("timeout")
    return kw


def plan(
    spec: FleetLike,
    *,
    only_projects: Iterable[str] | None = None,
    only_clusters: Iterable[str] | None = None,
    **options: Any,
) -> FleetReport:
    """Plan every selected target (Terraform plans; nothing changes). `options` are
    `FleetRunOptions` fields: sandbox, concurrency, terraform_dir, timeout_minutes, profile."""
    runner = _runner(spec, only_projects, only_clusters, _options(options))
    return asyncio.run(runner.plan())


def deploy(
    spec: FleetLike,
    *,
    only_projects: Iterable[str] | None = None,
    only_clusters: Iterable[str] | None = None,
    **options: Any,
) -> FleetReport:
    """Deploy every selected target; one target's failure is its entry, the rest go on."""
    runner = _runner(spec, only_projects, only_clusters, _options(options))
    return asyncio.run(runner.deploy())


def destroy(
    spec: FleetLike,
    *,
    only_projects: Iterable[str] | None = None,
    only_clusters: Iterable[str] | None = None,
    **options: Any,
) -> FleetReport:
    """Destroy every selected target; a project's network goes once nothing is deployed."""
    runner = _runner(spec, only_projects, only_clusters, _options(options))
    return asyncio.run(runner.destroy())


def status(
    spec: FleetLike, *, sandbox: bool = False, live: bool = True, timeout: float = 10.0
) -> FleetStatusTable:
    """Recorded and live status of every target (`status-error` for one that cannot be read)."""
    from npa_sop_tui.fleet.live import add_live_status
    from npa_sop_tui.fleet.status import fleet_status
    from npa_sop_tui.home import files as home_files

    loaded = _loaded(spec)
    guard = home_files.SandboxHomeEntered() if sandbox else None
    try:
        table = fleet_status(loaded, loaded.targets)
        if live:
            table = asyncio.run(add_live_status(table, sandbox=sandbox, timeout=timeout))
        return table
    finally:
        if guard is not None:
            guard.leave()


__all__ = [
    "FleetError",
    "FleetReport",
    "FleetStatusTable",
    "LoadedFleet",
    "deploy",
    "destroy",
    "load_spec",
    "plan",
    "spec_from_mapping",
    "status",
]
