"""The SDK-backed client against the local server speaking Nebius's real gRPC protocol."""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path

import pytest

from npa_sop_tui.cloud.client import (
    CloudClient,
    CloudCredentialsMissing,
    CloudError,
    CloudSettings,
    CloudTimeout,
    connect,
)
from npa_sop_tui.cloud.model import CapacityBlockGroup, Mk8sCluster, PriceRequest, WhoAmI
from npa_sop_tui.cloud.signin import SignInFailed
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius

from .conftest import PROJECT, REGION, TENANT, TOKEN


async def test_quotas_round_trip_with_bearer_token(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    quotas = {q.name: q for q in await cloud.quotas(TENANT, REGION)}
    assert quotas["compute.instance.count"].limit == 500
    assert quotas["compute.instance.count"].usage == 0
    assert quotas["compute.instance.gpu.h100"].state == "active"
    methods = {m for m, _ in cloud_state.calls}
    assert "quotas.v1.QuotaAllowanceService/List" in methods
    assert all(auth == f"Bearer {TOKEN}" for _, auth in cloud_state.calls)


async def test_listings_follow_pages(cloud: CloudClient, cloud_state: FakeCloudState) -> None:
    cloud_state.max_page = 3
    quotas = await cloud.quotas(TENANT, REGION)
    assert len(quotas) == len(cloud_state.quotas)
    pages = [m for m, _ in cloud_state.calls if m.endswith("QuotaAllowanceService/List")]
    assert len(pages) == -(-len(cloud_state.quotas) // 3)


async def test_capacity_groups_and_advice(cloud: CloudClient, cloud_state: FakeCloudState) -> None:
    cloud_state.groups.append(
        CapacityBlockGroup(
            "capacityblockgroup-e2eaaa", "h200-res", REGION, "gpu-h200-sxm", "fabric-3",
            "inactive", 16, 8,
        )
    )  # fmt: skip
    (group,) = await cloud.capacity_block_groups(TENANT)
    assert (group.name, group.platform, group.fabric, group.state) == (
        "h200-res", "gpu-h200-sxm", "fabric-3", "inactive",
    )  # fmt: skip
    assert group.free == 8
    advice = await cloud.resource_advice(TENANT)
    h200 = [a for a in advice if a.platform == "gpu-h200-sxm" and a.gpus == 8]
    assert h200 and h200[0].reserved is not None and h200[0].reserved.data_state == "fresh"


async def test_platforms_presets_and_whoami(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    offers = {p.name: p for p in await cloud.platforms(PROJECT)}
    assert "gpu-h100-sxm" in offers and "gpu-b200-sxm" not in offers  # not in eu-north1
    preset = offers["gpu-h100-sxm"].preset("8gpu-128vcpu-1600gb")
    assert preset is not None and preset.gpus == 8 and preset.gpu_clustering
    cloud_state.profile = WhoAmI("service_account", "serviceaccount-e2e", "ci")
    assert await cloud.whoami() == WhoAmI("service_account", "serviceaccount-e2e", "ci")


async def test_price_estimate_per_request_and_total(cloud: CloudClient) -> None:
    quote = await cloud.estimate_hourly(
        [
            PriceRequest("gpu", "gpu-h100-sxm", "8gpu-128vcpu-1600gb", 2),
            PriceRequest("cpu", "cpu-d3", "8vcpu-32gb", 3, preemptible=True),
        ],
        PROJECT,
    )
    gpu = 2 * (128 * Decimal("0.012") + 8 * Decimal("2.95"))
    cpu = 3 * (8 * Decimal("0.012") * Decimal("0.45"))
    assert quote.hourly["gpu"] == gpu
    assert quote.hourly["cpu"] == cpu
    assert quote.total_hourly == gpu + cpu
    assert quote.currency == "usd"
    assert quote.total_daily == 24 * (gpu + cpu)


async def test_price_covers_disks_and_filesystems_in_the_project(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    quote = await cloud.estimate_hourly(
        [
            PriceRequest(
                "gpu/disks", "", "", 2, kind="disk", size_gib=1024, storage_type="NETWORK_SSD"
            ),
            PriceRequest(
                "filesystem/jail",
                "",
                "",
                1,
                kind="filesystem",
                size_gib=2048,
                storage_type="NETWORK_SSD",
            ),
        ],
        PROJECT,
    )
    assert quote.hourly["gpu/disks"] == 2 * cloud_state.storage_price(1024)
    assert quote.hourly["filesystem/jail"] == cloud_state.storage_price(2048)
    with pytest.raises(CloudError, match="not a project you can price in"):
        await cloud.estimate_hourly([PriceRequest("x", "cpu-d3", "8vcpu-32gb", 1)], "project-x")


async def test_a_price_not_per_hour_is_refused(
    cloud: CloudClient, cloud_state: FakeCloudState, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The calculator answers in the unit asked for; a quote in any other unit (here: the
    fake answering per month) must not be summed as hourly."""
    import nebius.api.nebius.billing.v1 as billing

    cloud_state.price_unit = "month"
    real = billing.EstimateBatchRequest

    def no_unit(*args: object, **kw: object) -> object:
        kw.pop("filter_aggregation_unit", None)
        return real(*args, **kw)

    monkeypatch.setattr(billing, "EstimateBatchRequest", no_unit)
    with pytest.raises(CloudError, match="has no hourly cost for cpu-d3/8vcpu-32gb"):
        await cloud.estimate_hourly([PriceRequest("x", "cpu-d3", "8vcpu-32gb", 1)], PROJECT)


async def test_prices_are_matched_by_resource_and_unit_not_by_position(
    cloud: CloudClient, cloud_state: FakeCloudState, caplog: pytest.LogCaptureFixture
) -> None:
    """Protects the price against an answer with more lines than asked (billing returns
    costs in other units too) and in another order: each request gets its own hourly cost,
    and the rest is left out with a debug note."""
    import logging

    cloud_state.price_extra_units = ("month", "gibibyte")
    cloud_state.price_reversed = True
    requests = [
        PriceRequest("gpu", "gpu-h100-sxm", "8gpu-128vcpu-1600gb", 2),
        PriceRequest("cpu", "cpu-d3", "8vcpu-32gb", 3, preemptible=True),
    ]
    with caplog.at_level(logging.DEBUG, logger="npa_sop_tui.cloud.nebius_price"):
        quote = await cloud.estimate_hourly(requests, PROJECT)
    gpu = 2 * (128 * Decimal("0.012") + 8 * Decimal("2.95"))
    cpu = 3 * (8 * Decimal("0.012") * Decimal("0.45"))
    assert (quote.hourly["gpu"], quote.hourly["cpu"]) == (gpu, cpu)
    notes = [r.getMessage() for r in caplog.records]
    assert "price estimate: left out a cost per month for npa-price-0" in notes
    assert "price estimate: left out a cost per gibibyte for npa-price-1" in notes


def test_an_answer_without_names_is_matched_in_order_only_when_it_fits() -> None:
    from nebius.api.nebius.billing import v1 as billing

    from npa_sop_tui.cloud.nebius_price import hourly_costs

    def cost(amount: str, unit: str = "hour") -> object:
        return billing.ResourceCost(
            aggregation_unit=billing.AggregationUnit(unit=unit),
            general=billing.GeneralResourceCost(total=billing.CostBreakdown(cost=amount)),
        )

    asked = [
        PriceRequest("a", "cpu-d3", "8vcpu-32gb", 1),
        PriceRequest("b", "cpu-d3", "4vcpu-16gb", 1),
    ]
    assert hourly_costs(asked, [cost("1.5"), cost("99", "month"), cost("2")]) == [
        Decimal("1.5"),
        Decimal("2"),
    ]
    with pytest.raises(CloudError, match="no hourly cost for cpu-d3/8vcpu-32gb"):
        hourly_costs(asked, [cost("1.5")])


async def test_mk8s_cluster_get_list_and_not_found(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    made = cloud_state.create_cluster("demo")
    assert await cloud.mk8s_cluster(made.id) == Mk8sCluster(
        made.id, "soperator-demo", PROJECT, "running"
    )
    assert [c.name for c in await cloud.mk8s_clusters(PROJECT)] == ["soperator-demo"]
    fs_id = next(iter(cloud_state.filesystems))
    assert (await cloud.filesystem(fs_id)) is not None
    cloud_state.delete_cluster("demo")
    assert await cloud.mk8s_cluster(made.id) is None
    assert await cloud.filesystem(fs_id) is None


async def test_a_stalled_read_times_out_quickly(
    cloud_state: FakeCloudState, fake_nebius: FakeNebius, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    cloud_state.delays["quotas.v1.QuotaAllowanceService/List"] = 30
    client = connect(CloudSettings(endpoint=fake_nebius.endpoint, timeout=0.5))
    started = time.monotonic()
    with pytest.raises(CloudTimeout, match=r"no answer within 0\.5s"):
        await client.quotas(TENANT, REGION)
    assert time.monotonic() - started < 5
    await client.close()


async def test_wrong_token_is_an_error_with_a_hint(
    cloud_settings: CloudSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", "wrong")
    client = connect(cloud_settings)
    with pytest.raises(SignInFailed, match="token in NEBIUS_IAM_TOKEN failed") as info:
        await client.quotas(TENANT, REGION)
    assert info.value.exit_code == 2
    assert info.value.hint and "nebius iam get-access-token" in info.value.hint
    await client.close()


async def test_no_credentials_says_how_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NEBIUS_IAM_TOKEN", raising=False)
    client = connect(CloudSettings(endpoint="127.0.0.1:9", cli_config=tmp_path / "none.yaml"))
    with pytest.raises(CloudCredentialsMissing, match=r"nebius profile create|NEBIUS_IAM_TOKEN"):
        await client.whoami()


async def test_cli_profile_token_file_is_used_and_nothing_is_written(
    tmp_path: Path, fake_nebius: FakeNebius, cloud_state: FakeCloudState,
    monkeypatch: pytest.MonkeyPatch, npa_home: Path,
) -> None:  # fmt: skip
    """A Nebius CLI profile with a token file authenticates; npa copies it nowhere."""
    monkeypatch.delenv("NEBIUS_IAM_TOKEN", raising=False)
    token_file = tmp_path / "token.txt"
    token_file.write_text(TOKEN)
    config = tmp_path / "nebius" / "config.yaml"
    config.parent.mkdir()
    config.write_text(
        "default: other\n"
        "profiles:\n"
        "  other: {endpoint: api.example.invalid, parent-id: project-x, token-file: /nonexistent}\n"
        f"  e2e: {{endpoint: {fake_nebius.endpoint}, parent-id: {PROJECT}, "
        f"token-file: {token_file}}}\n"
    )
    client = connect(CloudSettings(profile="e2e", endpoint=fake_nebius.endpoint, cli_config=config))
    assert (await client.whoami()).kind == "user"
    await client.close()
    assert cloud_state.calls[-1][1] == f"Bearer {TOKEN}"
    written = [p for p in npa_home.rglob("*") if p.is_file() and TOKEN in p.read_text()]
    assert written == []


def test_plaintext_only_for_loopback() -> None:
    assert CloudSettings(endpoint="127.0.0.1:5000").plaintext
    assert CloudSettings(endpoint="localhost:5000").plaintext
    assert not CloudSettings(endpoint="api.eu.nebius.cloud:443").plaintext
    assert not CloudSettings().plaintext
