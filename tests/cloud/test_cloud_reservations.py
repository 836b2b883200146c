"""Reserved pools against their capacity block groups (cloud/reservations.py): through the
preflight on the local server speaking Nebius's gRPC protocol, and each verdict of
`check_reservations` / `resolve_names` with its message and hint directly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from npa_sop_tui.cloud.client import CloudClient
from npa_sop_tui.cloud.model import Availability, CapacityBlockGroup, ResourceAdvice
from npa_sop_tui.cloud.preflight import run_preflight
from npa_sop_tui.cloud.reservations import check_reservations, resolve_names
from npa_sop_tui.errors import UsageError
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping

from .conftest import PROJECT, REGION, TENANT

GROUP_ID = "capacityblockgroup-e2e0000000007"


def _spec() -> SoperatorSpec:
    gpu = {"name": "gpu", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb",
           "fabric": "fabric-3", "size": 2, "capacity_block_group": GROUP_ID}  # fmt: skip
    return spec_from_mapping(
        {"apiVersion": "npa.soperator/v0.0.1", "name": "held", "region": REGION,
         "workers": [gpu, {"name": "cpu", "size": 1}]}
    )  # fmt: skip


def _full_group(cloud_state: FakeCloudState) -> None:
    """A 16-GPU group whose 16 GPUs are in use, with a fresh availability entry that
    still shows the two nodes (they are this cluster's own)."""
    cloud_state.groups = [
        CapacityBlockGroup(
            id=GROUP_ID,
            name="h100-res",
            region=REGION,
            platform="gpu-h100-sxm",
            fabric="fabric-3",
            state="active",
            limit=16,
            usage=16,
        )
    ]
    held = Availability("fresh", 2, 8, "high")
    cloud_state.advice = [
        a.__class__(**{**a.__dict__, "reserved": held}) if a.platform == "gpu-h100-sxm" else a
        for a in cloud_state.advice
    ]


async def _preflight(cloud: CloudClient, **kw: Any) -> Any:
    return await run_preflight(
        _spec(), cloud, tenant_id=TENANT, project_id=PROJECT, region=REGION, **kw
    )


async def test_a_full_group_is_short_for_a_new_cluster(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    _full_group(cloud_state)
    report = (await _preflight(cloud)).report
    assert report.reservations[0].verdict == "short"
    assert any("0 free GPU(s)" in p.message for p in report.problems)


async def test_redeploy_credits_the_gpus_the_cluster_already_holds(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    """Protects the `in_use` credit: re-deploying a cluster whose own nodes fill its group
    must not be refused for lack of the GPUs it already has."""
    _full_group(cloud_state)
    report = (await _preflight(cloud, in_use={"gpu": 16})).report
    assert report.reservations[0].verdict == "ok", report.problems
    assert not report.problems
    # the credit is the cluster's own holding, no more: growing the pool is still short
    partly = (await _preflight(cloud, in_use={"gpu": 8})).report
    assert partly.reservations[0].verdict == "short"


# -- check_reservations / resolve_names directly: every verdict, its message and hint -------


@dataclass
class Pool:
    name: str
    size: int = 2
    gpus_per_node: int = 8
    platform: str = "gpu-h100-sxm"
    preset: str = "8gpu-128vcpu-1600gb"
    fabric: str | None = "fabric-3"
    capacity_block_group_id: str | None = None
    capacity_block_group_name: str | None = None


def _group(gid: str = "cbg-1", name: str = "res", **kw: Any) -> CapacityBlockGroup:
    base = {
        "region": "eu-north1",
        "platform": "gpu-h100-sxm",
        "fabric": "fabric-3",
        "state": "active",
        "limit": 64,
        "usage": 0,
    }
    return CapacityBlockGroup(id=gid, name=name, **{**base, **kw})


def _advice(available: int = 8, state: str = "fresh", **kw: Any) -> ResourceAdvice:
    base = {
        "region": "eu-north1",
        "fabric": "fabric-3",
        "platform": "gpu-h100-sxm",
        "preset": "8gpu-128vcpu-1600gb",
        "gpus": 8,
    }
    return ResourceAdvice(**{**base, **kw}, reserved=Availability(state, available, 8, "high"))


def _check(pools: list[Pool], **kw: Any) -> Any:
    args: dict[str, Any] = {
        "groups": [_group()],
        "advice": [_advice()],
        "tenant_id": "tenant-e",
        "region": "eu-north1",
    }
    return check_reservations(pools, kw.pop("capacity", {}), **{**args, **kw})


def test_a_pool_whose_group_fits_is_ok_with_its_numbers() -> None:
    rows, problems, resolved = _check([Pool("gpu", capacity_block_group_id="cbg-1")])
    assert problems == [] and resolved == {}
    (row,) = rows
    assert (row.pool, row.selector, row.group, row.state, row.verdict) == (
        "gpu",
        "id",
        "res",
        "active",
        "ok",
    )
    assert (row.gpus_needed, row.gpus_free, row.nodes_needed, row.nodes_free) == (16, 64, 2, 8)


def test_the_run_time_id_wins_over_the_spec_and_a_name_is_resolved_to_its_id() -> None:
    groups = [_group("cbg-1", "one"), _group("cbg-2", "two")]
    pools = [Pool("a", capacity_block_group_id="cbg-1"), Pool("b", capacity_block_group_name="two")]
    rows, problems, resolved = _check(pools, groups=groups, capacity={"a": "cbg-2"})
    assert problems == [] and [r.group for r in rows] == ["two", "two"]
    assert [r.selector for r in rows] == ["id", "name"] and resolved == {"b": "cbg-2"}


def test_no_answer_from_the_capacity_service_fails_closed() -> None:
    rows, problems, _ = _check(
        [Pool("gpu", capacity_block_group_id="x")], groups=None, read_error="timed out"
    )
    assert rows[0].verdict == "unknown"
    assert problems == [
        (
            "worker pool gpu: could not verify its reserved capacity (timed out)",
            "re-run when the capacity service answers; --no-preflight skips the check "
            "(Terraform may then fail half-way)",
        )
    ]
    _, problems, _ = _check([Pool("gpu", capacity_block_group_id="x")], groups=None)
    assert "(no tenant to ask)" in problems[0][0]


def test_a_missing_group_names_the_pool_the_selector_and_how_to_list_groups() -> None:
    rows, problems, _ = _check([Pool("gpu", capacity_block_group_name="nope")], tenant_id=None)
    assert rows[0].verdict == "missing"
    assert problems == [
        (
            "worker pool gpu: the capacity block group named 'nope' does not exist in tenant "
            "<tenant>",
            "check the group and pass its ID with --capacity-block-group gpu=<ID> (or "
            "NPA_CAPACITY_BLOCK_GROUPS); see them with `nebius capacity capacity-block-group "
            "list --parent-id <tenant>`",
        )
    ]
    _, problems, _ = _check([Pool("gpu", capacity_block_group_id="cbg-secret-9")])
    assert "group given by ID does not exist in tenant tenant-e" in problems[0][0]
    assert "cbg-secret-9" not in str(problems)


def test_two_groups_with_one_name_are_ambiguous() -> None:
    groups = [_group("cbg-1", "twin"), _group("cbg-2", "twin")]
    rows, problems, resolved = _check(
        [Pool("gpu", capacity_block_group_name="twin")], groups=groups
    )
    assert rows[0].verdict == "ambiguous" and resolved == {}
    assert problems == [
        (
            "worker pool gpu: 2 capacity block groups are named 'twin' in tenant tenant-e",
            "pass the one you mean by ID: --capacity-block-group gpu=<ID> (or "
            "NPA_CAPACITY_BLOCK_GROUPS); see them with `nebius capacity capacity-block-group "
            "list --parent-id tenant-e`",
        )
    ]


def test_an_inactive_group_is_named_with_its_state() -> None:
    rows, problems, resolved = _check(
        [Pool("gpu", capacity_block_group_name="res")], groups=[_group(state="allocating")]
    )
    assert (rows[0].verdict, rows[0].state) == ("inactive", "allocating")
    assert resolved == {"gpu": "cbg-1"}  # resolved even so: the name exists
    assert problems == [
        (
            "worker pool gpu: capacity block group 'res' is allocating, not active",
            "wait until its capacity interval starts, or reserve with another group",
        )
    ]


def test_a_group_for_another_region_platform_or_fabric_says_which() -> None:
    group = _group(region="us-central1", platform="gpu-b200", fabric="fabric-9")
    rows, problems, _ = _check([Pool("gpu", capacity_block_group_id="cbg-1")], groups=[group])
    assert rows[0].verdict == "mismatch"
    assert problems == [
        (
            "worker pool gpu: capacity block group 'res' is for region 'us-central1' (the pool "
            "wants 'eu-north1'), platform 'gpu-b200' (the pool wants 'gpu-h100-sxm'), fabric "
            "'fabric-9' (the pool wants 'fabric-3')",
            "use a group reserved for this pool's region, platform and fabric, or change the "
            "pool to match the group",
        )
    ]
    # what the pool does not ask for is not compared
    _, problems, _ = _check(
        [Pool("gpu", fabric=None, capacity_block_group_id="cbg-1")],
        groups=[_group(fabric="fabric-9")],
        region=None,
        advice=[_advice(fabric="fabric-1")],
    )
    assert problems == []


@pytest.mark.parametrize(
    ("advice", "state"),
    [
        (None, "no answer"),
        ([], "0 entries, none fresh"),
        ([_advice(state="stale")], "1 entry, none fresh"),
        ([_advice(state="stale"), _advice(state="unknown")], "2 entries, none fresh"),
        ([_advice(), _advice()], "2 fresh entries"),
        (
            [
                _advice(preset="other"),
                _advice(platform="other"),
                _advice(region="other"),
                _advice(fabric="other"),
            ],
            "0 entries, none fresh",
        ),
    ],
)
def test_reserved_availability_must_be_one_fresh_entry_for_the_pools_shape(
    advice: list[ResourceAdvice] | None, state: str
) -> None:
    rows, problems, _ = _check([Pool("gpu", capacity_block_group_id="cbg-1")], advice=advice)
    assert rows[0].verdict == "no fresh availability" and rows[0].nodes_free is None
    assert problems == [
        (
            "worker pool gpu: reserved availability of gpu-h100-sxm/8gpu-128vcpu-1600gb in "
            f"eu-north1, fabric fabric-3 cannot be confirmed ({state} in ResourceAdvice)",
            "re-run in a few minutes (availability data refreshes regularly); see `nebius "
            "capacity resource-advice list --parent-id tenant-e`; --no-preflight skips the "
            "check (Terraform may then fail half-way)",
        )
    ]


def test_without_a_region_or_fabric_the_shape_says_so() -> None:
    _, problems, _ = _check(
        [Pool("gpu", fabric=None, capacity_block_group_id="cbg-1")], advice=[], region=None
    )
    assert "of gpu-h100-sxm/8gpu-128vcpu-1600gb in the region cannot be confirmed" in problems[0][0]


def test_too_few_free_nodes_is_short_and_exactly_enough_is_ok() -> None:
    rows, problems, _ = _check(
        [Pool("gpu", size=3, capacity_block_group_id="cbg-1")], advice=[_advice(available=2)]
    )
    assert (rows[0].verdict, rows[0].nodes_free) == ("short", 2)
    assert problems == [
        (
            "worker pool gpu: capacity block group 'res' has 2 free node(s), the pool needs 3",
            "lower the pool's size or free nodes in the reservation",
        )
    ]
    rows, problems, _ = _check(
        [Pool("gpu", size=2, capacity_block_group_id="cbg-1")], advice=[_advice(available=2)]
    )
    assert rows[0].verdict == "ok" and problems == []


def test_pools_sharing_a_group_add_up_their_gpus_less_what_they_already_hold() -> None:
    """Protects the sum over one group's pools and the `in_use` credit (never below zero)."""
    pools = [Pool("a", capacity_block_group_id="cbg-1"), Pool("b", capacity_block_group_id="cbg-1")]
    group = _group(limit=40, usage=10)  # 30 free; the pools need 32
    rows, problems, _ = _check(pools, groups=[group])
    assert [r.verdict for r in rows] == ["short", "short"]
    assert problems == [
        (
            "worker pool(s) a, b: capacity block group 'res' has 30 free GPU(s) (40 reserved, "
            "10 in use), the pools need 32",
            "lower the pool sizes, free GPUs in the reservation, or use on-demand capacity for "
            "part of them",
        )
    ]
    rows, problems, _ = _check(pools, groups=[group], in_use={"a": 2})
    assert problems == [] and [r.verdict for r in rows] == ["ok", "ok"]  # 30 ≥ 30
    # a pool holding more than it needs now credits nothing to the other pool
    rows, problems, _ = _check(pools, groups=[group], in_use={"a": 100})
    assert problems == []
    _, problems, _ = _check(pools, groups=[_group(limit=40, usage=25)], in_use={"a": 100})
    assert "the pools need 16" in problems[0][0]


def test_a_pool_already_failing_keeps_its_own_verdict_when_its_group_is_short() -> None:
    pools = [
        Pool("a", capacity_block_group_id="cbg-1"),
        Pool("b", size=3, capacity_block_group_id="cbg-1"),
    ]
    rows, problems, _ = _check(pools, groups=[_group(limit=16)], advice=[_advice(available=2)])
    assert [r.verdict for r in rows] == ["short", "short"]
    assert len(problems) == 2 and "free node(s)" in problems[0][0]


def test_resolve_names_maps_only_named_pools_and_refuses_none_or_several() -> None:
    groups = [_group("cbg-1", "one"), _group("cbg-2", "two"), _group("cbg-3", "two")]
    pools = [
        Pool("a", capacity_block_group_name="one"),
        Pool("b"),
        Pool("c", capacity_block_group_id="cbg-2"),
        Pool("d", capacity_block_group_name="one"),
    ]
    assert resolve_names(pools, {"d": "cbg-3"}, groups, "tenant-e") == {"a": "cbg-1"}
    with pytest.raises(UsageError) as none:
        resolve_names([Pool("x", capacity_block_group_name="zero")], {}, groups, "tenant-e")
    assert none.value.message == (
        "worker pool x: no capacity block group(s) named 'zero' in tenant tenant-e"
    )
    assert none.value.hint == (
        "pass the group's ID with --capacity-block-group x=<ID>; see them with `nebius "
        "capacity capacity-block-group list --parent-id tenant-e`"
    )
    with pytest.raises(UsageError, match="worker pool y: 2 capacity block group"):
        resolve_names([Pool("y", capacity_block_group_name="two")], {}, groups, "tenant-e")


@pytest.mark.parametrize(
    ("first", "kw"),
    [
        (Pool("bad", capacity_block_group_name="nope"), {}),
        (Pool("bad", capacity_block_group_name="twin"), {}),
        (Pool("bad", capacity_block_group_id="cbg-off"), {}),
        (Pool("bad", capacity_block_group_id="cbg-far"), {}),
        (Pool("bad", preset="other", capacity_block_group_id="cbg-1"), {}),
        (Pool("bad", size=9, capacity_block_group_id="cbg-1"), {}),
    ],
    ids=["missing", "ambiguous", "inactive", "mismatch", "no-fresh", "short-nodes"],
)
def test_a_failing_pool_does_not_stop_the_check_of_the_next(first: Pool, kw: Any) -> None:
    """Protects each `continue`: every pool gets its row and verdict, whatever failed first."""
    groups = [_group(limit=256), _group("cbg-t1", "twin"), _group("cbg-t2", "twin"),
              _group("cbg-off", "off", state="inactive"),
              _group("cbg-far", "far", region="us-central1")]  # fmt: skip
    rows, problems, _ = _check(
        [first, Pool("good", capacity_block_group_id="cbg-1")], groups=groups, **kw
    )
    assert [r.pool for r in rows] == ["bad", "good"]
    assert rows[0].verdict != "ok" and (rows[1].verdict, rows[1].group) == ("ok", "res")
    assert len(problems) == 1


def test_a_short_group_marks_only_its_own_pools_short() -> None:
    groups = [_group("cbg-1", "small", limit=8), _group("cbg-2", "big")]
    pools = [Pool("a", capacity_block_group_id="cbg-1"), Pool("b", capacity_block_group_id="cbg-2")]
    rows, problems, _ = _check(pools, groups=groups)
    assert [r.verdict for r in rows] == ["short", "ok"] and len(problems) == 1


def test_resolve_names_goes_on_past_pools_it_does_not_resolve() -> None:
    groups = [_group("cbg-1", "one"), _group("cbg-2", "two")]
    pools = [Pool("od"), Pool("byid", capacity_block_group_name="two"),
             Pool("named", capacity_block_group_name="one")]  # fmt: skip
    assert resolve_names(pools, {"byid": "cbg-9"}, groups, "t") == {"named": "cbg-1"}
