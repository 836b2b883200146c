"""The lifecycle's cloud steps: preflight before render, destroy verification after destroy.

The operations in this package call these with their `Operation` (events, notes, redactor)
and the resolved identity; the cloud work itself is in `npa_sop_tui.cloud`. Which cloud:
`options.cloud` when the caller supplies a client (tests); otherwise the environment's
session (`Environment.cloud_session`): Nebius through the official SDK with the user's
credentials (`options.profile`, `NEBIUS_IAM_TOKEN`, a service-account file), or a simulated
cloud where there is no real one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.events import Diagnostic, PreflightReported

if TYPE_CHECKING:
    from npa_sop_tui.cloud.client import CloudClient, CloudReads
    from npa_sop_tui.cloud.preflight import PreflightReport
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.spec.model import SoperatorSpec


class PreflightBlocked(UsageError):
    """Reserved capacity is missing or wrong: deploying would fail in Terraform (exit 2)."""

    def __init__(self, report: PreflightReport) -> None:
        lines = [f"  - {p.message}\n    fix: {p.hint}" for p in report.problems]
        super().__init__(
            f"preflight refused {report.name!r}: reserved capacity is not usable:\n"
            + "\n".join(lines),
            hint="fix the reservations above and run it again; --no-preflight skips the "
            "check (Terraform would then fail part-way)",
        )
        self.report = report

    def json_extra(self) -> dict[str, Any]:
        return {"preflight": self.report.model_dump(mode="json")}


class PreflightUndecided(NpaError):
    """Quotas preflight could not judge (see `PreflightReport.undecided`): exit 1 when the
    cloud did not answer, 2 when its answer cannot judge the spec; --allow-unknown goes on."""

    def __init__(self, report: PreflightReport) -> None:
        from npa_sop_tui.cloud.report_text import undecided_text

        text = undecided_text(report).removeprefix("error: ")
        message, _, hint = text.partition("\n  hint: ")
        super().__init__(message, hint=hint)
        self.exit_code = report.undecided_exit()
        self.report = report

    def json_extra(self) -> dict[str, Any]:
        return {"preflight": self.report.model_dump(mode="json")}


@asynccontextmanager
async def cloud_client(
    options: Any, environment: Environment, reads: CloudReads, recipe: Any = None
) -> AsyncIterator[CloudClient]:
    """The cloud for one step: the caller's client (`options.cloud`), else the
    environment's session (Nebius, or the simulated cloud where there is no real one)."""
    supplied = getattr(options, "cloud", None)
    if supplied is not None:
        yield supplied
        return
    async with environment.cloud_session(reads, recipe) as client:
        yield client


def reads_for(options: Any, **fields: Any) -> CloudReads:
    from npa_sop_tui.cloud.client import CloudReads

    return CloudReads(
        profile=getattr(options, "profile", None),
        timeout=getattr(options, "cloud_timeout", None),
        **fields,
    )


def cluster_in_use(name: str, capacity: dict[str, str]) -> tuple[bool, dict[str, int]]:
    """Whether the cluster exists already, and the GPUs its reserved pools hold now."""
    from npa_sop_tui.home import inventory
    from npa_sop_tui.home.paths import cluster_dir

    entry = inventory.get(name)
    if entry is None or entry.state not in ("deployed", "failed", "interrupted", "deploying"):
        return False, {}
    held: dict[str, int] = {}
    try:
        from npa_sop_tui.spec.model import load_spec

        previous = load_spec(cluster_dir(name) / inventory.SPEC_FILE, capacity=capacity).spec
    except Exception:  # an unreadable old spec only costs the credit, never the deploy
        return True, held
    for pool in previous.workers:
        if pool.capacity_mode(capacity) == "reserved":
            held[pool.name] = pool.size * pool.gpus_per_node
    return True, held


def _needs_name_resolution(spec: SoperatorSpec, capacity: dict[str, str]) -> bool:
    return any(
        p.capacity_block_group_name and not p.capacity_block_group_id and p.name not in capacity
        for p in spec.workers
    )


async def preflight(
    op: Any,
    spec: SoperatorSpec,
    identity: Any,
    capacity: dict[str, str],
    options: Any,
    environment: Environment,
    recipe: Any = None,
) -> tuple[dict[str, str], PreflightReport | None]:
    """Run the preflight (unless `options.preflight` is False) and resolve reservation names.

    Returns the capacity with every reserved pool's group ID (names resolved) and the report.
    Raises `PreflightBlocked` when reserved capacity is not usable.
    """
    from npa_sop_tui.cloud.preflight import run_preflight

    enabled = getattr(options, "preflight", True)
    if not enabled and not _needs_name_resolution(spec, capacity):
        op.note("cloud preflight skipped (--no-preflight)")
        return capacity, None
    tenant = getattr(identity, "tenant_id", None)
    project = getattr(identity, "project_id", None)
    region = getattr(identity, "region", None)
    reads = reads_for(options, spec=spec, capacity=capacity, identity=identity)
    async with cloud_client(options, environment, reads, recipe) as client:
        if not enabled:
            from npa_sop_tui.cloud.reservations import resolve_names

            op.note("cloud preflight skipped (--no-preflight); resolving reservation names only")
            groups = await client.capacity_block_groups(tenant or "")
            resolved = resolve_names(spec.workers, capacity, groups, tenant or "")
            op.redactor.add(*resolved.values())
            return {**capacity, **resolved}, None
        op.phase("preflight", "Checking quotas, reservations and price")
        existing, in_use = cluster_in_use(spec.name, capacity)
        outcome = await run_preflight(
            spec,
            client,
            tenant_id=tenant,
            project_id=project,
            region=region,
            capacity=capacity,
            existing=existing,
            in_use=in_use,
        )
    report = outcome.report
    op.redactor.add(*outcome.capacity.values())  # resolved IDs are as secret as given ones
    undecided = bool(report.undecided()) and not getattr(options, "allow_unknown", False)
    op.emit(
        PreflightReported(
            operation_id=op.id,
            report=report.model_dump(mode="json"),
            blocked=report.blocked or undecided,  # the operation stops here
        )
    )
    for warning in report.warnings:
        op.emit(Diagnostic(operation_id=op.id, severity="warning", summary=warning))
    if report.blocked:
        raise PreflightBlocked(report)
    if undecided:
        raise PreflightUndecided(report)
    return outcome.capacity, report


# --- destroy verification -------------------------------------------------------------------


@dataclass
class Owned:
    """What a cluster owned in Nebius, read from its Terraform state before destroy."""

    cluster_ids: list[str] = field(default_factory=list)
    filesystem_ids: list[str] = field(default_factory=list)
    allocation_ids: list[str] = field(default_factory=list)
    gpu_cluster_ids: list[str] = field(default_factory=list)
    bucket_ids: list[str] = field(default_factory=list)


# The recipe's resource types whose IDs destroy verification checks, and where they go.
_OWNED = {
    "nebius_mk8s_v1_cluster": "cluster_ids",
    "nebius_compute_v1_filesystem": "filesystem_ids",
    "nebius_vpc_v1_allocation": "allocation_ids",
    "nebius_compute_v1_gpu_cluster": "gpu_cluster_ids",
    "nebius_storage_v1_bucket": "bucket_ids",
}


def owned_resources(store: Any, name: str, install_dir: Path) -> Owned:
    """The IDs of the Nebius resources in the cluster's Terraform state (mk8s cluster,
    filesystems, VPC allocations, GPU clusters, buckets), read through its state store (the
    local file, or the team's bucket with the S3 backend), before destroy removes them."""
    from npa_sop_tui.terraform.state import instances

    owned = Owned()
    try:
        state = store.read_tfstate(name, install_dir)
    except Exception:  # an unreachable bucket fails destroy itself, with its own message
        state = None
    for res, inst in instances(state or {}):
        if res.get("mode") != "managed":
            continue
        rid = (inst.get("attributes") or {}).get("id")
        field_name = _OWNED.get(str(res.get("type")))
        if field_name and isinstance(rid, str) and rid:
            getattr(owned, field_name).append(rid)
    return owned


async def verify_destroyed(
    op: Any,
    name: str,
    identity: Any,
    owned: Owned,
    options: Any,
    environment: Environment,
    recipe: Any = None,
) -> list[str]:
    """What is still in Nebius after Terraform's destroy ([] when all is gone)."""
    from npa_sop_tui.cloud.client import CloudError
    from npa_sop_tui.cloud.destroy_check import leftovers

    op.phase("verify", "Checking that the cluster is gone from Nebius")
    reads = reads_for(options, identity=identity, name=name)
    try:
        async with cloud_client(options, environment, reads, recipe) as client:
            remaining = await leftovers(
                client,
                project_id=getattr(identity, "project_id", None),
                name=name,
                cluster_ids=owned.cluster_ids,
                filesystem_ids=owned.filesystem_ids,
                allocation_ids=owned.allocation_ids,
                gpu_cluster_ids=owned.gpu_cluster_ids,
                bucket_ids=owned.bucket_ids,
            )
    except (CloudError, UsageError) as exc:
        op.emit(
            Diagnostic(
                operation_id=op.id,
                severity="warning",
                summary=f"could not confirm in Nebius that {name!r} is gone: {exc.message}",
            )
        )
        return []
    if not remaining:
        op.note("Nebius confirms: the mk8s cluster and everything else it owned are gone")
    return remaining


def identity_from_env(env: dict[str, str], options: Any) -> Any:
    """The identity an installation was deployed with (its saved TF_VAR_* environment)."""
    from npa_sop_tui.home.config import Identity

    if getattr(options, "identity", None) is not None:
        return options.identity
    return Identity(
        region=env.get("TF_VAR_region") or None,
        tenant_id=env.get("TF_VAR_iam_tenant_id") or None,
        project_id=env.get("TF_VAR_iam_project_id") or None,
        subnet_id=env.get("TF_VAR_vpc_subnet_id") or None,
    )
