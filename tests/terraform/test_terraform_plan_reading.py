"""Reading a Terraform plan: what each worker pool's change means (resize, replace, create)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from npa_sop_tui.terraform.plan_reading import summarize_plan


def _change(addr: str, name: str, actions: list[str], before: dict | None, after: dict | None):
    return {
        "address": addr,
        "module_address": "module.k8s",
        "mode": "managed",
        "type": "null_resource",
        "name": name,
        "change": {"actions": actions, "before": before, "after": after},
    }


def test_plan_summary_tells_resize_from_replace() -> None:
    def trig(name: str, size: int | None = None) -> dict:
        t = {"name": name} if size is None else {"name": name, "size": str(size)}
        return {"triggers": t}

    plan = {
        "resource_changes": [
            # cpu: resized in place (only the size resource is replaced)
            _change(
                'module.k8s.null_resource.worker_v2["cpu-0"]',
                "worker_v2",
                ["no-op"],
                trig("cpu-0"),
                trig("cpu-0"),
            ),
            _change(
                'module.k8s.null_resource.worker_v2_size["cpu-0"]',
                "worker_v2_size",
                ["delete", "create"],
                trig("cpu-0", 2),
                trig("cpu-0", 3),
            ),
            # gpu: the group itself is replaced
            _change(
                'module.k8s.null_resource.worker_v2["gpu-0"]',
                "worker_v2",
                ["delete", "create"],
                trig("gpu-0"),
                trig("gpu-0"),
            ),
            _change(
                'module.k8s.null_resource.worker_v2_size["gpu-0"]',
                "worker_v2_size",
                ["delete", "create"],
                trig("gpu-0", 1),
                trig("gpu-0", 1),
            ),
            # new pool
            _change(
                'module.k8s.null_resource.worker_v2["new-0"]',
                "worker_v2",
                ["create"],
                None,
                trig("new-0"),
            ),
            _change(
                'module.k8s.null_resource.worker_v2_size["new-0"]',
                "worker_v2_size",
                ["create"],
                None,
                trig("new-0", 4),
            ),
        ]
    }
    changes = summarize_plan(plan)
    pools = {p.pool: p for p in changes.pools}
    assert pools["cpu"].change == "resize"
    assert (pools["cpu"].size_before, pools["cpu"].size_after) == (2, 3)
    assert pools["gpu"].change == "replace"
    assert pools["new"].change == "create" and pools["new"].size_after == 4
    # the resize is safe; the gpu group replacement is destructive
    assert changes.destructive == ['module.k8s.null_resource.worker_v2["gpu-0"]']
    # size resources stand for in-place updates: counted as changes, not add+remove
    assert (changes.add, changes.change, changes.remove) == (3, 2, 1)
    assert changes.by_module == {"module.k8s": {"update": 2, "replace": 1, "create": 2}}


def test_plan_summary_unknown_size_is_not_zero() -> None:
    """A pool whose node group is replaced while its size resource is untouched has unknown
    sizes in the plan; they must not be reported as `0 → 0` (a pool of no nodes)."""
    group = {"triggers": {"name": "gpu-0", "capacity": "x"}}
    plan = {
        "resource_changes": [
            {
                "address": 'module.k8s.null_resource.worker_v2["gpu-0"]',
                "module_address": "module.k8s",
                "mode": "managed",
                "type": "null_resource",
                "name": "worker_v2",
                "index": "gpu-0",
                "change": {"actions": ["delete", "create"], "before": group, "after": group},
            }
        ]
    }
    (pool,) = summarize_plan(plan).pools
    assert pool.pool == "gpu" and pool.change == "replace"
    assert (pool.size_before, pool.size_after) == (None, None)


def _planned(address: str, actions: list[str], module: str = "module.k8s", **values: Any) -> dict:
    return {"address": address, "module_address": module, "mode": "managed",
            "type": address.split(".")[2], "name": address.split(".")[3].split("[")[0],
            "change": {"actions": actions, "before": values.get("before"),
                       "after": values.get("after")}}  # fmt: skip


def test_only_the_recipes_own_bookkeeping_is_safe_to_replace() -> None:
    """The safe list comes from the caller (the recipe's graph); a create_before_destroy
    replacement is a replacement; a stand-in's in-place part is an update of its resource."""
    plan = {"resource_changes": [
        _planned("module.slurm.null_resource.local_file__flux_release_rendered_nodesets",
                ["delete", "create"], "module.slurm"),
        _planned("module.k8s.null_resource.nebius_vpc_v1_allocation__this", ["create", "delete"]),
        _planned("module.k8s.null_resource.nebius_mk8s_v1_node_group__worker_v2__update[0]",
                ["delete", "create"],
                before={"triggers": {"name": "cpu-0", "size": "2"}},
                after={"triggers": {"name": "cpu-0", "size": "3"}}),
    ]}  # fmt: skip
    safe = ["module.slurm.local_file.flux_release_rendered_nodesets"]
    changes = summarize_plan(plan, safe=safe)
    assert changes.destructive == ["module.k8s.nebius_vpc_v1_allocation.this"]
    assert (changes.add, changes.change, changes.remove) == (2, 1, 2)
    assert [(p.pool, p.change, p.size_before, p.size_after) for p in changes.pools] == [
        ("cpu", "resize", 2, 3)]  # fmt: skip
    assert summarize_plan(plan).destructive == [
        "module.k8s.nebius_vpc_v1_allocation.this",
        "module.slurm.local_file.flux_release_rendered_nodesets",
    ]  # nothing is safe for a recipe without a graph


def _resource(
    addr: str,
    actions: list[str],
    *,
    module: str | None = None,
    name: str = "x",
    mode: str = "managed",
    before: dict | None = None,
    after: dict | None = None,
    index: object = None,
) -> dict:
    change: dict = {
        "address": addr,
        "mode": mode,
        "name": name,
        "change": {"actions": actions, "before": before, "after": after},
    }
    parts = re.sub(r"\[[^\]]*\]", "", addr).split(".")
    while parts[:1] == ["module"]:  # module.<name> pairs lead the resource's own part
        parts = parts[2:]
    if len(parts) >= 2:
        change["type"] = parts[-2]
    if module is not None:
        change["module_address"] = module
    if index is not None:
        change["index"] = index
    return change


def test_a_create_before_destroy_replacement_is_a_replacement() -> None:
    """`["create", "delete"]` is how Terraform plans a `create_before_destroy` replacement:
    the old resource is deleted all the same, so the destructive guard must stop it."""
    addr = "module.slurm.nebius_compute_v1_filesystem.jail"
    changes = summarize_plan({"resource_changes": [_resource(addr, ["create", "delete"],
                                                             module="module.slurm")]})  # fmt: skip
    assert changes.destructive == [addr]
    assert (changes.add, changes.change, changes.remove) == (1, 0, 1)
    assert changes.by_module == {"module.slurm": {"replace": 1}}


@pytest.mark.parametrize("order", [["delete", "create"], ["create", "delete"]])
def test_a_modelled_in_place_update_is_an_update_in_either_order(order: list[str]) -> None:
    addr = 'module.k8s.null_resource.worker_v2_size["cpu-0"]'
    values = "module.helm.null_resource.soperator_values"
    changes = summarize_plan({"resource_changes": [
        _resource(addr, order, module="module.k8s"),
        _resource(values, order, module="module.helm"),
    ]})  # fmt: skip
    assert changes.destructive == []
    assert (changes.add, changes.change, changes.remove) == (0, 2, 0)


@pytest.mark.parametrize(
    "addr",
    [
        "module.k8s.terraform_data.kubectl_cluster_context",
        "module.k8s.terraform_data.kubectl_cluster_context[0]",
        "module.login_script.terraform_data.lb_service_ip",
        'module.login_script.terraform_data.lb_service_ip["a"]',
        "module.login_script.local_file.this",
        "module.login_script.local_file.this[0]",
    ],
)
def test_the_recipes_own_bookkeeping_is_replaced_without_asking(addr: str) -> None:
    """What the caller names safe (the recipe's graph: a kube context, a rendered file, a
    wait) is replaced without asking, whatever its instance key; unnamed, it is destructive."""
    plan = {"resource_changes": [_resource(addr, ["delete", "create"])]}
    safe = [re.sub(r"\[[^\]]*\]$", "", addr)]
    changes = summarize_plan(plan, safe=safe)
    assert changes.destructive == [] and (changes.add, changes.remove) == (1, 1)
    assert summarize_plan(plan).destructive == [addr]


@pytest.mark.parametrize(
    "addr",
    [
        "module.k8s.terraform_data.kubectl_cluster_context_x",  # a name that only starts alike
        "xmodule.login_script.local_file.this",
        "module.login_script.local_file.that",
        "module.k8s.null_resource.worker_v2_sizes",
        "module.k8s.nebius_mk8s_v1_node_group.worker_size",  # not a stand-in model
    ],
)
def test_anything_else_replaced_is_destructive(addr: str) -> None:
    changes = summarize_plan({"resource_changes": [_resource(addr, ["delete", "create"])]})
    assert changes.destructive == [addr]


def test_a_deletion_is_destructive_even_of_bookkeeping() -> None:
    addr = "module.login_script.local_file.this"
    changes = summarize_plan({"resource_changes": [_resource(addr, ["delete"])]})
    assert changes.destructive == [addr] and (changes.add, changes.remove) == (0, 1)
    assert changes.by_module == {"root": {"delete": 1}}


def test_replacing_what_never_finished_being_created_is_not_destructive() -> None:
    top, deep = "module.k8s.nebius_mk8s_v1_cluster.this", "module.k8s.module.gpu.null_resource.a"
    plan = {
        "prior_state": {"values": {"root_module": {
            "resources": [{"address": "root_thing", "tainted": False}],
            "child_modules": [{
                "resources": [{"address": top, "tainted": True}],
                "child_modules": [{"resources": [{"address": deep, "tainted": True},
                                                 {"address": "module.k8s.module.gpu.b"}]}],
            }],
        }}},
        "resource_changes": [
            _resource(top, ["delete", "create"]),
            _resource(deep, ["create", "delete"]),
            _resource("module.k8s.module.gpu.b", ["delete", "create"]),
            _resource("root_thing", ["delete", "create"]),
        ],
    }  # fmt: skip
    assert summarize_plan(plan).destructive == ["module.k8s.module.gpu.b", "root_thing"]
    # a plan without prior state, or with empty parts of it
    for prior in (None, {}, {"values": None}, {"values": {"root_module": None}}):
        plan["prior_state"] = prior
        assert len(summarize_plan(plan).destructive) == 4


def test_nothing_to_do_reads_and_data_sources_are_not_counted() -> None:
    plan = {"resource_changes": [
        _resource("a", ["no-op"]),
        _resource("b", ["read"]),
        _resource("data.x.y", ["create"], mode="data"),
        _resource("c", []),
        {"address": "d"},
    ]}  # fmt: skip
    changes = summarize_plan(plan)
    assert (changes.add, changes.change, changes.remove, changes.by_module) == (0, 0, 0, {})
    assert summarize_plan({"resource_changes": None}) == summarize_plan({})


def test_counts_are_per_top_level_module() -> None:
    plan = {"resource_changes": [
        _resource("a", ["create"], module="module.k8s"),
        _resource("b", ["create"], module="module.k8s.module.gpu[0]"),
        _resource("c", ["update"], module='module.nfs["x"]'),
        _resource("d", ["update"], module="module.nfs"),
        _resource("e", ["create"]),
        _resource("f", ["delete"], module="module.k8s"),
    ]}  # fmt: skip
    changes = summarize_plan(plan)
    assert changes.by_module == {
        "module.k8s": {"create": 2, "delete": 1},
        "module.nfs": {"update": 2},
        "root": {"create": 1},
    }
    assert (changes.add, changes.change, changes.remove) == (3, 2, 1)
    assert changes.destructive == ["f"]


def _group(pool: str, actions: list[str], before: dict | None, after: dict | None,
           name: str = "worker_v2", **extra: object) -> dict:  # fmt: skip
    addr = f'module.k8s.nebius_mk8s_v1_node_group.{name}["{pool}"]'
    return _resource(addr, actions, module="module.k8s", name=name, before=before, after=after,
                     **extra)  # fmt: skip


def test_the_real_recipes_node_groups_give_their_pool_and_size() -> None:
    plan = {"resource_changes": [
        _group("gpu-0", ["update"], {"name": "gpu-0", "fixed_node_count": 2},
               {"name": "gpu-0", "fixed_node_count": 4}),
        _group("gpu-1", ["update"], {"name": "gpu-1", "fixed_node_count": "1"},
               {"name": "gpu-1", "fixed_node_count": "1"}),
        _group("cpu-10", ["delete"], {"name": "cpu-10", "fixed_node_count": 3}, None),
        _group("new-0", ["create"], None, {"name": "new-0", "fixed_node_count": 5}),
    ]}  # fmt: skip
    pools = {p.pool: p for p in summarize_plan(plan).pools}
    assert [p for p in pools] == ["cpu", "gpu", "new"]  # sorted
    assert (pools["gpu"].change, pools["gpu"].size_before, pools["gpu"].size_after) == (
        "resize", 3, 5)  # fmt: skip
    assert (pools["cpu"].change, pools["cpu"].size_before, pools["cpu"].size_after) == (
        "delete", 3, None)  # fmt: skip
    assert (pools["new"].change, pools["new"].size_before, pools["new"].size_after) == (
        "create", None, 5)  # fmt: skip
    assert pools["gpu"].resources == sorted(
        f'module.k8s.nebius_mk8s_v1_node_group.worker_v2["gpu-{i}"]' for i in (0, 1)
    )


def test_a_pool_whose_group_is_deleted_and_created_is_replaced() -> None:
    plan = {"resource_changes": [
        _group("gpu-0", ["delete"], {"name": "gpu-0", "fixed_node_count": 2}, None),
        _group("gpu-1", ["create"], None, {"name": "gpu-1", "fixed_node_count": 2}),
    ]}  # fmt: skip
    (pool,) = summarize_plan(plan).pools
    assert (pool.change, pool.size_before, pool.size_after) == ("replace", 2, 2)


def test_a_pool_whose_size_stays_is_an_update() -> None:
    plan = {"resource_changes": [
        _group("gpu-0", ["update"], {"name": "gpu-0", "fixed_node_count": 2, "image": "a"},
               {"name": "gpu-0", "fixed_node_count": 2, "image": "b"}),
    ]}  # fmt: skip
    (pool,) = summarize_plan(plan).pools
    assert (pool.change, pool.size_before, pool.size_after) == ("update", 2, 2)


def test_hidden_attributes_fall_back_to_the_instance_key_and_unknown_sizes() -> None:
    plan = {"resource_changes": [
        _group("gpu-0", ["update"], {"fixed_node_count": "many"}, {}, index="gpu-0"),
        _group("odd", ["update"], None, None, index=3),  # no name anywhere: not a pool
        _resource("module.k8s.null_resource.other", ["update"], module="module.k8s",
                  name="other", before={"name": "x-0"}, after={"name": "x-0"}),
        _resource("module.nfs.null_resource.worker_v2", ["update"], module="module.nfs",
                  name="worker_v2", before={"name": "y-0"}, after={"name": "y-0"}),
    ]}  # fmt: skip
    (pool,) = summarize_plan(plan).pools
    assert (pool.pool, pool.change, pool.size_before, pool.size_after) == (
        "gpu", "update", None, None)  # fmt: skip


def test_the_group_names_its_pool_before_its_in_place_part() -> None:
    """The derived stand-in models a node group as its resource and an in-place part
    (`…__update`) carrying its size: one pool, created, at the part's size."""
    group = "module.k8s.null_resource.nebius_mk8s_v1_node_group__worker_v2"
    plan = {"resource_changes": [
        _resource(f"{group}[0]", ["create"], module="module.k8s",
                  name="nebius_mk8s_v1_node_group__worker_v2",
                  after={"triggers": {"name": "cpu-0"}}),
        _resource(f"{group}__update[0]", ["create"], module="module.k8s",
                  name="nebius_mk8s_v1_node_group__worker_v2__update",
                  after={"triggers": {"name": "cpu-0", "size": "2"}}),
    ]}  # fmt: skip
    changes = summarize_plan(plan)
    (pool,) = changes.pools
    assert (pool.pool, pool.change, pool.size_before, pool.size_after) == ("cpu", "create", None, 2)
    assert changes.add == 1  # the part is its resource's, not a resource of its own


def test_a_pool_name_keeps_everything_but_its_chunk_number() -> None:
    plan = {"resource_changes": [
        _group("a-b-12", ["create"], None, {"name": "a-b-12", "fixed_node_count": 1}),
        _group("plain", ["create"], None, {"name": "plain", "fixed_node_count": 1}),
        _group("x1", ["create"], None, {"name": "x1", "triggers": "not a mapping"}),
    ]}  # fmt: skip
    assert [p.pool for p in summarize_plan(plan).pools] == ["a-b", "plain", "x1"]


def test_the_destructive_addresses_are_sorted() -> None:
    plan = {"resource_changes": [_resource(a, ["delete"]) for a in ("c", "a", "b")]}
    assert summarize_plan(plan).destructive == ["a", "b", "c"]


def test_a_pool_that_gains_a_chunk_is_resized_not_replaced() -> None:
    plan = {"resource_changes": [
        _group("gpu-0", ["update"], {"name": "gpu-0", "fixed_node_count": 2},
               {"name": "gpu-0", "fixed_node_count": 2}),
        _group("gpu-1", ["create"], None, {"name": "gpu-1", "fixed_node_count": 1}),
    ]}  # fmt: skip
    (pool,) = summarize_plan(plan).pools
    assert (pool.change, pool.size_before, pool.size_after) == ("resize", 2, 3)


def test_every_removal_is_counted_and_one_without_a_pool_stops_nothing() -> None:
    plan = {"resource_changes": [
        _group("odd", ["delete"], None, None, index=3),  # no pool name anywhere
        _group("gpu-0", ["delete"], {"name": "gpu-0", "fixed_node_count": 2}, None),
        {"change": {"actions": ["delete"]}},  # no address: still counted and guarded
    ]}  # fmt: skip
    changes = summarize_plan(plan)
    assert changes.remove == 3 and len(changes.destructive) == 3 and "" in changes.destructive
    assert [(p.pool, p.change) for p in changes.pools] == [("gpu", "delete")]
