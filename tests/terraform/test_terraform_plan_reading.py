"""Reading a Terraform plan: what each worker pool's change means (resize, replace, create)."""

from __future__ import annotations

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
