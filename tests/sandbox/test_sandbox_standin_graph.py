"""The stand-in generated from the real recipe's graph, under real Terraform: its resources,
read back, are the real recipe's addresses; resizing a pool and adding one deploy without
`allow_destructive` (the rendered nodesets file and the wait steps the recipe replaces on
purpose); deleting a pool's node group is refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle.results import DestructivePlanError
from npa_sop_tui.recipe.graph import graph_for
from npa_sop_tui.spec.model import spec_from_mapping
from npa_sop_tui.terraform.standin_addresses import real_address

from testkit.lifecycle import Recorder, make_spec, options

GPU = {"name": "gpu", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb",
       "fabric": "fabric-3", "size": 1}  # fmt: skip


def with_workers(spec: Any, workers: list[dict[str, Any]]) -> Any:
    data = spec.model_dump(mode="json", exclude_none=True)
    data["workers"] = workers
    return spec_from_mapping(data)


@pytest.mark.terraform
@pytest.mark.slow
async def test_day_two_changes_on_the_derived_standin(sandbox_in_home: Path) -> None:
    spec = make_spec("daytwo", workers=[GPU, {"name": "cpu", "size": 2}])
    opts, events = options(), Recorder()
    await lifecycle.deploy(spec, options=opts, on_event=events)

    # What Terraform holds are the real recipe's resources, at its addresses
    state = await lifecycle.cluster_resources("daytwo", opts)
    real = {real_address(a)[0] for a in state}
    bases = {re.sub(r"\[[^\]]*\]$", "", a) for a in real}
    graph = graph_for(version="4.1.6")
    assert graph is not None
    absent = {"module.k8s.nebius_mk8s_v1_node_group.accounting",  # accounting off
              "module.k8s.nebius_mk8s_v1_node_group.nfs"}  # no NFS node group  # fmt: skip
    assert bases == set(graph.addresses()) - absent
    assert {a for a in real if "worker_v2" in a} == {
        "module.k8s.nebius_mk8s_v1_node_group.worker_v2[0]",  # gpu-0
        "module.k8s.nebius_mk8s_v1_node_group.worker_v2[1]",  # cpu-0
    }
    assert 'module.k8s.nebius_compute_v1_gpu_cluster.this_v2["fabric-3"]' in real

    # Resize a pool: the node group in place, the rendered nodesets file replaced (safe)
    resized = with_workers(spec, [GPU, {"name": "cpu", "size": 3}])
    planned = await lifecycle.plan(resized, options=opts, on_event=events)
    assert planned.changes.destructive == []
    assert [(p.pool, p.change, p.size_before, p.size_after) for p in planned.changes.pools] == [
        ("cpu", "resize", 2, 3)]  # fmt: skip
    replaced = [e for e in events.kinds("plan_summary") if e.phase == "plan"][-1]
    assert replaced.by_module["module.slurm"].get("replace") == 1  # the rendered file
    await lifecycle.deploy(resized, options=opts, on_event=events)

    # Add a pool: a new node group at the next index, nothing refused
    added = with_workers(spec, [GPU, {"name": "cpu", "size": 3}, {"name": "cpu2", "size": 1}])
    await lifecycle.deploy(added, options=opts, on_event=events)
    created = [p for e in events.kinds("plan_summary") for p in e.pools if p.pool == "cpu2"]
    assert created and created[-1].change == "create"

    # Delete a pool: its node group goes away, which the guard refuses
    with pytest.raises(DestructivePlanError) as refused:
        await lifecycle.deploy(resized, options=opts, on_event=events)
    assert refused.value.addresses == ["module.k8s.nebius_mk8s_v1_node_group.worker_v2[2]"]
