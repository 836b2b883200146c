"""Which cloud reads the preflight makes with the IDs it has, what each carries (tenant,
project, region), and how a failed read is named in the warning the user sees: against the
local server speaking Nebius's gRPC protocol, through the real client."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import pytest

from npa_sop_tui.cloud.client import CloudClient
from npa_sop_tui.cloud.model import Availability, CapacityAllowance, CapacityBlockGroup, Quota
from npa_sop_tui.cloud.needs import gpu_quota_name
from npa_sop_tui.cloud.preflight import PreflightOutcome, run_preflight
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius, service_address
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping

from .conftest import PROJECT, REGION, TENANT

GROUP_ID = "capacityblockgroup-e2e0000000003"
H100 = "gpu-h100-sxm"


def _spec() -> SoperatorSpec:
    """A GPU pool without a reservation selector of its own (an ID may come at run time)."""
    gpu = {"name": "gpu", "platform": H100, "preset": "8gpu-128vcpu-1600gb",
           "fabric": "fabric-3", "size": 2}  # fmt: skip
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "reads", "region": REGION,
         "workers": [gpu, {"name": "cpu", "size": 1}]}
    )  # fmt: skip


def _group() -> CapacityBlockGroup:
    return CapacityBlockGroup(id=GROUP_ID, name="h100-res", region=REGION, platform=H100,
                              fabric="fabric-3", state="active", limit=32, usage=0)  # fmt: skip


class Recording:
    """The real client, with each read it is asked for written down as (read, IDs, region)."""

    def __init__(self, client: CloudClient) -> None:
        self._client = client
        self.reads: list[tuple[Any, ...]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any) -> Any:
            # estimate_hourly's first argument is the priced resources: keep the project only
            self.reads.append((name, *(a for a in args if a is None or isinstance(a, str))))
            return method(*args)

        return call


async def _run(
    client: CloudClient | Recording,
    *,
    tenant_id: str | None = TENANT,
    project_id: str | None = PROJECT,
    capacity: dict[str, str] | None = None,
    region: str | None = REGION,
    **kw: Any,
) -> PreflightOutcome:
    return await run_preflight(
        _spec(), cast(CloudClient, client), tenant_id=tenant_id, project_id=project_id,
        region=region, capacity=capacity, **kw,
    )  # fmt: skip


RESERVED = {"gpu": GROUP_ID}


@pytest.mark.parametrize(
    ("tenant", "project", "capacity", "reads"),
    [
        (TENANT, PROJECT, None,
         {("quotas", TENANT, REGION), ("quotas", PROJECT, REGION), ("platforms", PROJECT),
          ("resource_advice", TENANT), ("estimate_hourly", PROJECT)}),
        (TENANT, PROJECT, RESERVED,
         {("quotas", TENANT, REGION), ("quotas", PROJECT, REGION), ("platforms", PROJECT),
          ("capacity_block_groups", TENANT), ("capacity_allowances", PROJECT),
          ("resource_advice", TENANT), ("estimate_hourly", PROJECT)}),
        (TENANT, None, RESERVED,
         {("quotas", TENANT, REGION), ("capacity_block_groups", TENANT),
          ("resource_advice", TENANT), ("estimate_hourly", None)}),
        (None, PROJECT, RESERVED,
         {("quotas", PROJECT, REGION), ("platforms", PROJECT), ("capacity_allowances", PROJECT),
          ("estimate_hourly", PROJECT)}),
        (None, None, None, {("estimate_hourly", None)}),
    ],
    ids=["both-ids", "both-ids-reserved", "tenant-only-reserved", "project-only-reserved",
         "no-ids"],
)  # fmt: skip
async def test_each_read_is_made_only_with_the_id_it_needs(
    cloud: CloudClient, cloud_state: FakeCloudState, tenant: str | None, project: str | None,
    capacity: dict[str, str] | None, reads: set[tuple[Any, ...]],
) -> None:  # fmt: skip
    """Protects the read plan: quotas need the tenant (and are read for the deploy's region),
    the project's quotas, platforms and capacity allowances the project, capacity block
    groups a reserved pool and the tenant; a read without its ID would ask the cloud about
    nothing (or the wrong scope) and put a spurious error in front of the user."""
    cloud_state.groups = [_group()]
    recording = Recording(cloud)
    await _run(recording, tenant_id=tenant, project_id=project, capacity=capacity)
    assert len(recording.reads) == len(reads)
    assert set(recording.reads) == reads


FAILING = {
    "quotas": "quotas.v1.QuotaAllowanceService/List",
    "platforms": "compute.v1.PlatformService/List",
    "capacity block groups": "capacity.v1.CapacityBlockGroupService/List",
    "capacity allowances": "capacity.v1.CapacityAllowanceService/List",
    "resource advice": "capacity.v1.ResourceAdviceService/List",
    "price": "billing.v1.CalculatorService/EstimateBatch",
}


async def test_a_failed_read_is_named_in_its_warning_and_the_rest_goes_on(
    cloud: CloudClient, cloud_state: FakeCloudState, fake_nebius: FakeNebius
) -> None:
    """Protects the warning a user reads when the cloud does not answer: it names the read
    that failed (tenant quotas, project quotas, platforms, capacity block groups, capacity
    allowances, resource advice, price), the address it went to, the status and the
    credentials used, and says the value is shown as unknown; the reserved pool's problem
    quotes the capacity block groups' failure; every quota is undecided for want of an
    answer (exit 1 unless unknowns are allowed)."""
    for method in FAILING.values():
        cloud_state.errors[method] = "UNAVAILABLE"

    def warning(what: str, read: str, method: str) -> str:
        service = "nebius." + method.split("/")[0]
        address = fake_nebius.addresses[service_address(service)]
        return (f"{what}: {read} at {address} failed: UNAVAILABLE: {method} failed on "
                "purpose (test) (credentials: token in NEBIUS_IAM_TOKEN) (shown as "
                "unknown)")  # fmt: skip

    quotas, groups = FAILING["quotas"], FAILING["capacity block groups"]
    expected = [
        warning("quotas", f"quotas of {TENANT}", quotas),
        warning("project quotas", f"quotas of {PROJECT}", quotas),
        warning("platforms", f"platforms of {PROJECT}", FAILING["platforms"]),
        warning("capacity block groups", "capacity block groups", groups),
        warning("capacity allowances", f"capacity allowances of {PROJECT}",
                FAILING["capacity allowances"]),
        warning("resource advice", "resource advice", FAILING["resource advice"]),
        warning("price", "price estimate (billing CalculatorService.EstimateBatch)",
                FAILING["price"]),
    ]  # fmt: skip
    report = (await _run(cloud, capacity=RESERVED)).report
    assert sorted(report.warnings) == sorted(expected)
    assert report.price is None and {r.verdict for r in report.rows} == {"unknown"}
    assert {r.reason for r in report.rows} == {"no answer"}
    assert report.undecided() == report.rows and report.undecided_exit() == 1
    (problem,) = [p for p in report.problems if "could not verify" in p.message]
    assert expected[3] in problem.message


async def test_a_group_id_given_at_run_time_makes_the_pool_reserved(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects `--capacity-block-group pool=<ID>` (a secret, never in the spec): with it the
    pool is checked against its group and its GPUs are not counted against the GPU quota;
    without it the same pool is on-demand and uses the quota."""
    cloud_state.groups = [_group()]
    reserved = await _run(cloud, capacity=RESERVED)
    (row,) = reserved.report.reservations
    assert (row.pool, row.verdict, row.gpus_needed) == ("gpu", "ok", 16)
    assert reserved.capacity == RESERVED
    gpu_quota = gpu_quota_name(H100)
    assert gpu_quota not in {r.resource for r in reserved.report.rows}
    on_demand = (await _run(cloud)).report
    assert on_demand.reservations == []
    assert gpu_quota in {r.resource for r in on_demand.rows}


async def test_the_report_names_the_region_it_checked(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects the report's region: the user sees where quotas and platforms were read,
    also on the row of a quota the cloud does not list."""
    gpu_quota = gpu_quota_name(H100)
    cloud_state.quotas = [q for q in cloud_state.quotas if q.name != gpu_quota]
    report = (await _run(cloud)).report
    assert report.region == REGION
    (row,) = [r for r in report.rows if r.resource == gpu_quota and r.level == "tenant"]
    assert (row.verdict, row.region) == ("unknown", REGION)
    assert {r.region for r in report.rows} == {REGION}


async def test_an_existing_cluster_compares_its_need_with_the_limit_alone(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects re-deploys: a deployed cluster's own GPUs are already in the quota's usage,
    so counting them again would report a shortfall that is not there."""
    gpu_quota = gpu_quota_name(H100)
    cloud_state.quotas = [
        replace(q, limit=16, usage=16) if q.name == gpu_quota else q for q in cloud_state.quotas
    ]

    def verdict(report: Any) -> str:
        (row,) = [r for r in report.rows if r.resource == gpu_quota and r.level == "tenant"]
        return str(row.verdict)

    assert verdict((await _run(cloud, existing=True)).report) == "ok"
    assert verdict((await _run(cloud)).report) == "short by 16"


NOT_OFFERED = "pool gpu: gpu-h100-sxm/8gpu-128vcpu-1600gb is not offered in {where} (live list)"


@pytest.mark.parametrize(("region", "where"), [(REGION, REGION), (None, "this region")])
async def test_a_platform_the_region_does_not_offer_is_named_with_the_region(
    cloud: CloudClient, cloud_state: FakeCloudState, region: str | None, where: str
) -> None:
    """Protects the not-offered warning: it says where the shape is missing, or "this
    region" when no region is known."""
    cloud_state.platforms = [p for p in cloud_state.platforms if p.name != H100]
    report = (await _run(cloud, region=region)).report
    assert NOT_OFFERED.format(where=where) in report.warnings


async def test_without_a_live_platform_list_the_regions_catalog_is_shown(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects the offline fallback: the packaged catalog's platforms of the deploy's
    region, not every platform of every region, are what the user is told is offered."""
    from npa_sop_tui.cloud.catalog_cache import catalog_platforms

    cloud_state.errors[FAILING["platforms"]] = "UNAVAILABLE"
    report = (await _run(cloud)).report
    assert report.platforms is not None and report.platforms.source == "catalog"
    assert set(report.platforms.offered) == {p.name for p in catalog_platforms(REGION)}
    assert len(catalog_platforms(None)) > len(report.platforms.offered)


async def test_availability_is_read_for_the_deploy_region_only(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects on-demand availability: another region's scarcity (listed first by the
    cloud) must neither be shown nor warned about for this region's pool."""
    (here,) = [
        a for a in cloud_state.advice
        if (a.platform, a.preset, a.fabric) == (H100, "8gpu-128vcpu-1600gb", "fabric-3")
    ]  # fmt: skip
    assert here.on_demand is not None
    elsewhere = replace(here, region="eu-west1",
                        on_demand=Availability("fresh", 0, 8, "limit_reached"))  # fmt: skip
    cloud_state.advice = [elsewhere, *cloud_state.advice]
    report = (await _run(cloud)).report
    (row,) = [a for a in report.availability if a.pool == "gpu"]
    assert (row.level, row.available) == (here.on_demand.level, here.on_demand.available)
    assert not any("limit reached" in w for w in report.warnings)


async def test_a_group_in_another_region_blocks_the_reserved_pool(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects reserved capacity's region check: a group reserved in another region cannot
    hold this pool's nodes, so the deploy is refused with the two regions named."""
    cloud_state.groups = [replace(_group(), region="eu-west1")]
    report = (await _run(cloud, capacity=RESERVED)).report
    assert report.blocked
    (problem,) = report.problems
    assert "region 'eu-west1' (the pool wants 'eu-north1')" in problem.message


async def test_unreadable_capacity_allowances_block_and_name_the_project(
    cloud: CloudClient, cloud_state: FakeCloudState, fake_nebius: FakeNebius
) -> None:
    """Protects the project's share of a reservation: when it cannot be read the reserved
    pool is refused, the warning names the failed read and the problem names the project
    whose allowances to check."""
    method = FAILING["capacity allowances"]
    cloud_state.groups = [_group()]
    cloud_state.errors[method] = "UNAVAILABLE"
    report = (await _run(cloud, capacity=RESERVED)).report
    address = fake_nebius.addresses["capacity-blocks.billing-cpl"]
    assert report.warnings == [
        f"capacity allowances: capacity allowances of {PROJECT} at {address} failed: "
        f"UNAVAILABLE: {method} failed on purpose (test) (credentials: token in "
        "NEBIUS_IAM_TOKEN) (shown as unknown)"
    ]
    (problem,) = report.problems
    assert problem.message == (
        f"worker pool(s) gpu: could not read project {PROJECT}'s capacity allowances"
    )


def _short(quotas: list[Quota], name: str) -> list[Quota]:
    return [replace(q, limit=1, usage=1) if q.name == name else q for q in quotas]


async def test_a_short_project_quota_warns_even_when_the_tenant_has_room(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects the project level: a project's own allowance caps it below the tenant's, so
    a project out of GPUs must be reported though the tenant has plenty."""
    gpu_quota = gpu_quota_name(H100)
    cloud_state.project_quotas = _short(cloud_state.project_quotas, gpu_quota)
    report = (await _run(cloud)).report
    levels = {r.level: r.verdict for r in report.rows if r.resource == gpu_quota}
    assert levels == {"tenant": "ok", "project": "short by 16"}
    assert any(w.startswith(f"project quota {gpu_quota} in {REGION} is short by 16")
               for w in report.warnings)  # fmt: skip


async def test_without_a_tenant_the_projects_quotas_are_what_is_checked(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects a project-only deploy (no tenant ID known): the project's allowances are
    checked in place of the tenant's instead of every quota being unknown, and every row and
    warning says they are the project's."""
    gpu_quota = gpu_quota_name(H100)
    cloud_state.project_quotas = _short(cloud_state.project_quotas, gpu_quota)
    outcome = await _run(cloud, tenant_id=None)
    report = outcome.report
    rows = [r for r in report.rows if r.resource == gpu_quota]
    assert [(r.limit, r.usage, r.verdict) for r in rows] == [(1, 1, "short by 16")]
    limits = {q.name: q.limit for q in cloud_state.project_quotas}
    assert all(r.limit == limits[r.resource] for r in report.rows if r.limit is not None)
    assert {r.level for r in report.rows} == {"project"}
    quota_warnings = [w for w in report.warnings if " quota " in w]
    assert quota_warnings and all(w.startswith("project quota ") for w in quota_warnings)


async def test_gpus_count_against_the_quota_the_platform_publishes(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects the live GPU quota name: PlatformService says which quota a platform's GPUs
    count against; the preflight must check that one, not the name guessed from the
    platform."""
    published = "compute.instance.gpu.h100-published"
    cloud_state.platforms = [
        replace(p, gpu_quota=published) if p.name == H100 else p for p in cloud_state.platforms
    ]
    cloud_state.quotas = [*cloud_state.quotas, Quota(published, REGION, 8, 0, "active")]
    report = (await _run(cloud)).report
    resources = {r.resource for r in report.rows}
    assert report.rows and gpu_quota_name(H100) not in resources
    (row,) = [r for r in report.rows if r.resource == published]  # the project lists none
    assert (row.needed, row.verdict) == (16, "short by 8")


async def test_a_redeploy_credits_its_gpus_against_the_projects_allowance(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects re-deploys into a reservation: the GPUs the cluster already holds are in the
    project allowance's usage, so they are credited back instead of blocking the deploy."""
    cloud_state.groups = [replace(_group(), usage=16)]
    cloud_state.allowances = [
        CapacityAllowance(id="capacityallowance-e2e", project_id=PROJECT, group_id=GROUP_ID,
                          limit=16, usage=16, state="active")
    ]  # fmt: skip
    again = (await _run(cloud, capacity=RESERVED, in_use={"gpu": 16})).report
    assert not again.blocked and [a.verdict for a in again.allowances] == ["ok"]
    new = (await _run(cloud, capacity=RESERVED)).report
    assert [a.verdict for a in new.allowances] == ["short"]
    (problem,) = new.problems
    assert problem.message.startswith(f"worker pool(s) gpu: project {PROJECT} may use 0 GPU(s)")


def test_a_quota_with_no_room_at_all_shows_its_limit_as_zero() -> None:
    """Protects the short-quota warning's numbers: a zero allowance is shown as `limit 0`,
    so the user knows to request the quota rather than raise it by one."""
    from npa_sop_tui.cloud.needs import Need
    from npa_sop_tui.cloud.preflight import quota_rows

    need = Need("compute.x", 2, "count", "2 nodes")
    _, warnings = quota_rows([need], [Quota("compute.x", REGION, 0, 0, "active")], region=REGION)
    assert warnings == [
        "tenant quota compute.x in eu-north1 is short by 2: the spec needs 2 (2 nodes); "
        "limit 0, in use 0"
    ]


def test_a_quota_the_deciding_project_does_not_list_is_unknown_at_the_project_level() -> None:
    """Protects the level named on an unknown row: when the project's allowances decide (no
    tenant known), a need they do not list is unknown, and the row says whose list lacked it;
    under a tenant, the project not listing a quota means no separate cap (no row)."""
    from npa_sop_tui.cloud.needs import Need
    from npa_sop_tui.cloud.preflight import quota_rows

    need = Need("compute.x", 2, "count", "2 nodes")
    rows, warnings = quota_rows([need], [], region=REGION, level="project")
    assert [(r.level, r.verdict, r.limit) for r in rows] == [("project", "unknown", None)]
    assert warnings == []
    listed = [Quota("compute.x", REGION, 8, 0, "active")]
    rows, _ = quota_rows([need], listed, project=[], region=REGION)
    assert [(r.level, r.verdict) for r in rows] == [("tenant", "ok")]
