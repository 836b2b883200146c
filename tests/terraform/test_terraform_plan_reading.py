"""Reading a Terraform plan: what each worker pool's change means (resize, replace, create)."""

from __future__ import annotations

from typing import Any

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
