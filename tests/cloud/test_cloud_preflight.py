"""Preflight against the local server speaking Nebius's gRPC protocol: each verdict path."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cloud.client import CloudClient, CloudSettings, connect
from npa_sop_tui.cloud.model import Availability, CapacityBlockGroup, Quota
from npa_sop_tui.cloud.preflight import run_preflight
from npa_sop_tui.cloud.report_text import render_text
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping

from .conftest import PROJECT, REGION, TENANT, TOKEN

GIB_BYTES = 1024**3

GROUP_ID = "capacityblockgroup-e2e0000000001"


def gpu_spec(**pool: Any) -> SoperatorSpec:
    gpu = {
        "name": "gpu",
        "platform": "gpu-h100-sxm",
        "preset": "8gpu-128vcpu-1600gb",
        "fabric": "fabric-3",
        "size": 2,
        **pool,
    }
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "pf", "region": REGION,
         "workers": [gpu, {"name": "cpu", "size": 1}]}
    )  # fmt: skip


def group(**fields: Any) -> CapacityBlockGroup:
    base = dict(id=GROUP_ID, name="h100-res", region=REGION, platform="gpu-h100-sxm",
                fabric="fabric-3", state="active", limit=32, usage=0)  # fmt: skip
    return CapacityBlockGroup(**{**base, **fields})


async def preflight(client: CloudClient, spec: SoperatorSpec, **kw: Any) -> Any:
    return await run_preflight(
        spec, client, tenant_id=TENANT, project_id=PROJECT, region=REGION, **kw
    )


async def test_everything_ok_by_default(cloud: CloudClient) -> None:
    outcome = await preflight(cloud, gpu_spec())
    report = outcome.report
    assert not report.blocked and report.warnings == []
    rows = {r.resource: r for r in report.rows}
    assert rows["compute.instance.gpu.h100"].needed == 16
    assert rows["compute.instance.count"].needed == 3 + 1 + 1 + 2 + 1  # system, ctl, login, pools
    assert all(r.verdict == "ok" for r in report.rows)
    assert report.platforms is not None and report.platforms.source == "live"
    assert {a.mode for a in report.availability} == {"on-demand"}


async def test_quota_short_is_a_warning_with_the_shortfall(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.quotas = [
        Quota("compute.instance.gpu.h100", REGION, 24, 16, "active") if q.name.endswith("h100")
        else q
        for q in cloud_state.quotas
    ]  # fmt: skip
    report = (await preflight(cloud, gpu_spec())).report
    row = next(r for r in report.rows if r.resource == "compute.instance.gpu.h100")
    assert (row.needed, row.limit, row.usage, row.verdict) == (16, 24, 16, "short by 8")
    assert not report.blocked
    assert any(
        "tenant quota compute.instance.gpu.h100 in eu-north1 is short by 8" in w
        for w in report.warnings
    )


async def test_reserved_group_by_name_is_resolved_and_never_shown(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.groups = [group(), group(id="capacityblockgroup-other", name="else")]
    outcome = await preflight(cloud, gpu_spec(capacity_block_group_name="h100-res"))
    assert not outcome.report.blocked
    assert outcome.capacity == {"gpu": GROUP_ID}
    (row,) = outcome.report.reservations
    assert (row.group, row.state, row.gpus_needed, row.gpus_free, row.verdict) == (
        "h100-res", "active", 16, 32, "ok",
    )  # fmt: skip
    # reserved GPUs come from the group, not from the ordinary GPU quota
    assert not any(r.resource == "compute.instance.gpu.h100" for r in outcome.report.rows)
    dumped = json.dumps(outcome.report.model_dump(mode="json")) + render_text(outcome.report)
    assert GROUP_ID not in dumped


BY_NAME = {"capacity_block_group_name": "h100-res"}


@pytest.mark.parametrize(
    ("groups", "selector", "verdict", "expect", "fix"),
    [
        ([], BY_NAME, "missing", "does not exist", "capacity-block-group list --parent-id"),
        ([group(state="inactive")], BY_NAME, "inactive", "is inactive, not active",
         "wait until its capacity interval starts"),
        ([group(fabric="fabric-5")], BY_NAME, "mismatch",
         "fabric 'fabric-5' (the pool wants 'fabric-3')", "reserved for this pool's region"),
        ([group(), group(id="capacityblockgroup-twin")], BY_NAME, "ambiguous",
         "2 capacity block groups are named 'h100-res'", "--capacity-block-group gpu=<ID>"),
        ([group(limit=16, usage=8)], {"capacity_block_group": GROUP_ID}, "short",
         "has 8 free GPU(s) (16 reserved, 8 in use), the pools need 16", "lower the pool sizes"),
    ],
    ids=["missing", "inactive", "wrong-fabric", "two-groups", "too-few-gpus"],
)  # fmt: skip
async def test_reserved_problems_block_with_a_fix(
    cloud: CloudClient, cloud_state: FakeCloudState, groups: list[CapacityBlockGroup],
    selector: dict[str, str], verdict: str, expect: str, fix: str,
) -> None:  # fmt: skip
    cloud_state.groups = groups
    report = (await preflight(cloud, gpu_spec(**selector))).report
    assert report.blocked
    assert report.reservations[0].verdict == verdict
    (problem,) = report.problems
    assert expect in problem.message and problem.message.startswith("worker pool")
    assert fix in problem.hint
    assert GROUP_ID not in problem.message + problem.hint


async def test_free_nodes_from_resource_advice(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.groups = [group()]
    few = Availability("fresh", 1, 8, "low")
    cloud_state.advice = [
        a.__class__(**{**a.__dict__, "reserved": few}) if a.platform == "gpu-h100-sxm" else a
        for a in cloud_state.advice
    ]
    report = (await preflight(cloud, gpu_spec(capacity_block_group=GROUP_ID))).report
    assert report.reservations[0].nodes_free == 1
    assert "has 1 free node(s), the pool needs 2" in report.problems[0].message


async def test_a_timeout_is_unknown_not_a_hang_and_reserved_fails_closed(
    cloud_state: FakeCloudState, fake_nebius: FakeNebius, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    for method in ("quotas.v1.QuotaAllowanceService/List",
                   "capacity.v1.CapacityBlockGroupService/List"):  # fmt: skip
        cloud_state.delays[method] = 60
    # 4 s per read: the undelayed reads (price, advice, …) must answer within it, which a
    # loaded 2-core machine missed at 0.5 s; the delayed ones (60 s) must be cut off by it.
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, timeout=4))
    started = time.monotonic()
    outcome = await preflight(client, gpu_spec(capacity_block_group_name="h100-res"))
    await client.close()
    assert time.monotonic() - started < 30  # far below the 60 s the service would take
    report = outcome.report
    assert {r.verdict for r in report.rows} == {"unknown"}
    assert any("no answer within 4s" in w for w in report.warnings)
    assert report.blocked and "could not verify" in report.problems[0].message
    assert report.price is not None, report.warnings  # the other reads still answered


async def test_price_per_pool_and_total(cloud: CloudClient) -> None:
    report = (await preflight(cloud, gpu_spec(preemptible=True))).report
    assert report.price is not None
    prices = {p.key: Decimal(p.hourly) for p in report.price.pools}
    gpu_node = 128 * Decimal("0.012") + 8 * Decimal("2.95")
    assert prices["gpu"] == 2 * gpu_node * Decimal("0.45")  # preemptible
    nodes = {"gpu", "cpu", "control-plane/system", "control-plane/controller",
             "control-plane/login"}  # fmt: skip
    assert nodes <= set(prices)
    assert {f"{k}/disks" for k in nodes} <= set(prices)  # boot disks priced too
    assert "filesystem/jail" in set(prices) and prices["filesystem/jail"] > 0
    assert Decimal(report.price.total) == sum(prices.values())
    assert Decimal(report.price.daily) == 24 * Decimal(report.price.total)
    text = render_text(report)
    assert "Hourly price estimate" in text and "per day (24 h)" in text
    # The one-line summary shows cents, not the calculator's full decimal string.
    cents = f"{sum(prices.values()):.2f}"
    assert report.summary().endswith(f"≈ {cents} {report.price.currency}/hour")


async def test_platform_not_offered_warns_and_falls_back_offline(
    cloud_state: FakeCloudState, fake_nebius: FakeNebius, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    cloud_state.platforms = [p for p in cloud_state.platforms if p.name != "gpu-h100-sxm"]
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, timeout=5))
    report = (await preflight(client, gpu_spec())).report
    assert any("gpu-h100-sxm/8gpu-128vcpu-1600gb is not offered" in w for w in report.warnings)
    cloud_state.errors["compute.v1.PlatformService/List"] = "UNAVAILABLE"
    report = (await preflight(client, gpu_spec())).report
    await client.close()
    assert report.platforms is not None and report.platforms.source == "catalog"
    assert all(p.offered for p in report.platforms.pools)


def test_cli_preflight_json_rows_and_exit_codes(
    tmp_path: Path, cloud_settings: CloudSettings, cloud_state: FakeCloudState,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from npa_sop_tui.cli.entry import main

    assert cloud_settings.endpoint
    monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", cloud_settings.endpoint)
    for var, value in (("NPA_REGION", REGION), ("NPA_TENANT_ID", TENANT),
                       ("NPA_PROJECT_ID", PROJECT)):  # fmt: skip
        monkeypatch.setenv(var, value)
    spec = tmp_path / "c.yaml"
    spec.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: pf\nworkers:\n"
        "  - {name: gpu, platform: gpu-h100-sxm, preset: 8gpu-128vcpu-1600gb, fabric: fabric-3,"
        " size: 2, capacity_block_group_name: h100-res}\n"
    )
    cloud_state.groups = [group()]
    assert main(["soperator", "preflight", "--spec", str(spec), "--output", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True
    assert set(doc["rows"][0]) >= {"resource", "needed", "limit", "usage", "verdict"}
    assert doc["price"]["total"] and doc["price"]["pools"]
    assert GROUP_ID not in json.dumps(doc)

    cloud_state.groups = []
    assert main(["soperator", "preflight", "--spec", str(spec)]) == 2
    out = capsys.readouterr().out
    assert "RESOURCE" in out and "does not exist in tenant tenant-e2e" in out


# -- quota_rows directly: each verdict and its warning text, from the mutation run ---------


def _quota_rows(amount: int, unit: str = "count", existing: bool = False, **q: Any) -> Any:
    from npa_sop_tui.cloud.model import Quota
    from npa_sop_tui.cloud.needs import Need
    from npa_sop_tui.cloud.preflight import quota_rows

    quota = Quota(**{"name": "compute.x", "region": "eu-north1", "limit": 10, "usage": 4, **q})
    need = Need("compute.x", amount, unit, "2 nodes")
    # without `existing` a cluster is new (the default): its need comes on top of `usage`
    more = {"existing": True} if existing else {}
    return quota_rows([need], [quota], region="eu-north1", **more)


@pytest.mark.parametrize(
    ("amount", "q", "existing", "verdict"),
    [
        (6, {}, False, "ok"),  # exactly the free amount
        (7, {}, False, "short by 1"),
        (7, {}, True, "ok"),  # an existing cluster's own use is in `usage`
        (11, {}, True, "short by 1"),
        (1, {"limit": None}, False, "unknown"),  # hidden from these credentials
        (1, {"limit": None}, True, "unknown"),
        (1, {"usage": None}, False, "unknown"),
        (10, {"usage": None}, True, "ok"),
        (1, {"state": "frozen"}, False, "frozen"),
    ],
)
def test_a_quota_verdict_compares_the_need_with_what_is_free(
    amount: int, q: dict[str, Any], existing: bool, verdict: str
) -> None:
    rows, _ = _quota_rows(amount, existing=existing, **q)
    assert [r.verdict for r in rows] == [verdict]


def test_a_short_quota_warns_with_amounts_in_its_unit() -> None:
    gib = 1024**3
    _, warnings = _quota_rows(12 * gib, unit="bytes", limit=10 * gib, usage=gib + gib // 2)
    assert warnings == [
        "tenant quota compute.x in eu-north1 is short by 3.5 GiB: the spec needs 12 GiB "
        "(2 nodes); limit 10 GiB, in use 1.5 GiB"
    ]
    _, warnings = _quota_rows(7)
    assert warnings == [
        "tenant quota compute.x in eu-north1 is short by 1: the spec needs 7 (2 nodes); "
        "limit 10, in use 4"
    ]
    _, warnings = _quota_rows(1, state="deleted")
    assert warnings == ["tenant quota compute.x in eu-north1 is deleted: nothing new can use it"]


def test_quotas_count_in_their_region_or_everywhere_when_they_name_none() -> None:
    """Protects the allowance selection by region and the region each row shows."""
    from npa_sop_tui.cloud.model import Quota
    from npa_sop_tui.cloud.needs import Need
    from npa_sop_tui.cloud.preflight import quota_rows

    needs = [Need("missing", 1, "count", "x"), Need("far", 5, "count", "y"),
             Need("any", 5, "count", "z")]  # fmt: skip
    quotas = [Quota("far", "us-central1", 10, 0), Quota("far", "eu-north1", 3, 0),
              Quota("any", "", 4, 0)]  # fmt: skip
    rows, warnings = quota_rows(needs, quotas, region="eu-north1")
    got = [(r.resource, r.verdict, r.limit, r.region, r.level) for r in rows]
    assert got == [
        ("missing", "unknown", None, "eu-north1", "tenant"),
        ("far", "short by 2", 3, "eu-north1", "tenant"),
        ("any", "short by 1", 4, "eu-north1", "tenant"),  # no region: the asked one shown
    ]
    assert warnings[1] == (
        "tenant quota any is short by 1: the spec needs 5 (z); limit 4, in use 0"
    )
    rows, _ = quota_rows(needs[1:2], quotas[:1], region=None)  # no region asked: any counts
    assert (rows[0].verdict, rows[0].region) == ("ok", "us-central1")


def test_without_a_live_answer_the_regions_refreshed_list_is_used_then_the_catalog() -> None:
    """No live platform list: the region's refreshed list (`cache`), else the packaged
    catalog's platforms of that region only (`catalog`)."""
    from npa_sop_tui.cloud.catalog_cache import catalog_platforms, write_cache
    from npa_sop_tui.cloud.model import PlatformOffer, PresetOffer
    from npa_sop_tui.cloud.preflight import _platforms

    seen = _platforms(gpu_spec(), None, REGION)
    assert seen.source == "catalog"
    assert sorted(seen.offered) == sorted(p.name for p in catalog_platforms(REGION))
    assert len(seen.offered) < len(catalog_platforms(None))  # the region's, not every one
    offer = PlatformOffer("gpu-h100-sxm", (PresetOffer("8gpu-128vcpu-1600gb", 128, 1600, 8),))
    write_cache(REGION, [offer], source="test")
    seen = _platforms(gpu_spec(), None, REGION)
    assert (seen.source, seen.offered) == ("cache", {"gpu-h100-sxm": ["8gpu-128vcpu-1600gb"]})
    assert [(p.pool, p.offered) for p in seen.pools] == [("gpu", True), ("cpu", False)]


@pytest.mark.parametrize(
    ("value", "shown"), [(3 * GIB_BYTES, "3 GiB"), (int(1.33 * GIB_BYTES), "1.3 GiB")]
)
def test_byte_amounts_are_whole_gib_or_one_decimal(value: int, shown: str) -> None:
    from npa_sop_tui.cloud.quota_check import _amount

    assert _amount(value, "bytes") == shown
    assert _amount(value, "count") == str(value)


def test_availability_skips_reserved_pools_and_still_reads_the_pools_after_them() -> None:
    """A reserved pool is judged against its capacity block group, never against on-demand
    availability; the pools listed after it still get their row."""
    from npa_sop_tui.cloud.model import Availability, ResourceAdvice
    from npa_sop_tui.cloud.preflight import _availability

    shape = {"platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb", "fabric": "fabric-3"}
    spec = spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "pf", "region": REGION,
         "workers": [{"name": "res", "size": 2, "capacity_block_group": "h100-res", **shape},
                     {"name": "od", "size": 3, **shape}]}
    )  # fmt: skip
    low = Availability(data_state="fresh", available=1, limit=10, level="low")
    advice = [ResourceAdvice(REGION, "fabric-3", shape["platform"], shape["preset"], 8,
                             reserved=low, on_demand=low)]  # fmt: skip
    rows, warnings = _availability(spec, advice, REGION)
    assert [(r.pool, r.mode, r.needed) for r in rows] == [("od", "on-demand", 3)]
    assert [w.split(":")[0] for w in warnings] == ["pool od"]


def test_availability_reads_the_first_advice_of_the_pools_shape_region_and_fabric() -> None:
    """Each pool reads the first ResourceAdvice entry of its platform AND preset, in the
    project's region, of its fabric (or of no fabric), in its own mode; another platform,
    preset, region or fabric is never taken for it."""
    from npa_sop_tui.cloud.model import Availability, ResourceAdvice
    from npa_sop_tui.cloud.preflight import _availability

    plat, preset = "gpu-h100-sxm", "8gpu-128vcpu-1600gb"
    shape = {"platform": plat, "preset": preset, "fabric": "fabric-3"}
    spec = spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "pf", "region": REGION,
         "workers": [{"name": "od", "size": 3, **shape},
                     {"name": "pre", "size": 1, "preemptible": True, **shape}]}
    )  # fmt: skip

    def avail(level: str, available: int) -> Availability:
        return Availability(data_state="fresh", available=available, limit=10, level=level)

    wrong = avail("wrong", 99)

    def advice(region: str, fabric: str, platform: str, preset_: str, **modes: Any) -> Any:
        return ResourceAdvice(region, fabric, platform, preset_, 8, **modes)

    entries = [
        advice(REGION, "", "gpu-other", preset, on_demand=wrong, preemptible=wrong),
        advice(REGION, "", plat, "other-preset", on_demand=wrong, preemptible=wrong),
        advice("eu-west9", "", plat, preset, on_demand=wrong, preemptible=wrong),
        advice(REGION, "fabric-9", plat, preset, on_demand=wrong, preemptible=wrong),
        advice(
            REGION,
            "",
            plat,
            preset,
            on_demand=avail("high", 5),
            preemptible=avail("limit_reached", 0),
        ),
        advice(REGION, "fabric-3", plat, preset, on_demand=wrong, preemptible=wrong),
    ]
    rows, warnings = _availability(spec, entries, REGION)
    assert [(r.pool, r.mode, r.level, r.available, r.needed) for r in rows] == [
        ("od", "on-demand", "high", 5, 3),
        ("pre", "preemptible", "limit_reached", 0, 1),
    ]
    assert [w.split(":")[0] for w in warnings] == ["pool pre"]


@pytest.mark.parametrize(
    ("state", "level", "available", "said"),
    [
        ("fresh", "low", 5, "is low (5 free, 3 needed)"),
        ("fresh", "limit_reached", 9, "is limit reached (9 free, 3 needed)"),
        ("fresh", "high", 2, "is high (2 free, 3 needed)"),
        ("fresh", "high", 3, None),  # exactly enough
        ("stale", "low", 0, None),  # old data warns nobody
    ],
)
def test_availability_warns_on_fresh_data_that_is_short_or_low(
    state: str, level: str, available: int, said: str | None
) -> None:
    from npa_sop_tui.cloud.model import Availability, ResourceAdvice
    from npa_sop_tui.cloud.preflight import _availability

    shape = {"platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb", "fabric": "fabric-3"}
    spec = spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "pf", "region": REGION,
         "workers": [{"name": "od", "size": 3, **shape}]}
    )  # fmt: skip
    got = Availability(data_state=state, available=available, limit=10, level=level)
    entry = ResourceAdvice(REGION, "fabric-3", shape["platform"], shape["preset"], 8, on_demand=got)
    _, warnings = _availability(spec, [entry], REGION)
    assert warnings == (
        [f"pool od: on-demand availability of gpu-h100-sxm/8gpu-128vcpu-1600gb {said}; "
         "nodes may stay pending"] if said else []
    )  # fmt: skip
