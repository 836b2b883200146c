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
from npa_sop_tui.sandbox.standin_graph import module_tf
from npa_sop_tui.spec.model import spec_from_mapping
from npa_sop_tui.terraform.standin_addresses import real_address

from testkit.lifecycle import Recorder, make_spec, options

SLURM = "module.slurm"
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
    # the recipe's order: the slurm-cluster release's wait after the bootstrap release, then
    # the two waits that follow it
    seen = [(e.kind, e.addr) for e in events.events if e.kind.startswith("resource_")]
    hr_done = seen.index(("resource_finished", f"{SLURM}.terraform_data.wait_for_slurm_cluster_hr"))
    assert seen.index(("resource_finished", f"{SLURM}.helm_release.soperator_fluxcd_bootstrap")) < (
        seen.index(("resource_started", f"{SLURM}.terraform_data.wait_for_slurm_cluster_hr"))
    )
    for wait in ("wait_for_slurm_cluster_available", "wait_for_soperator_activechecks_hr"):
        assert seen.index(("resource_started", f"{SLURM}.terraform_data.{wait}")) > hr_done

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


def test_the_standin_runs_the_waits_side_by_side_as_the_recipe_does() -> None:
    """The generated slurm module makes the SlurmCluster-Available wait and the active-checks
    wait depend on the slurm-cluster release's wait alone (never on each other), so
    Terraform starts them together and the deploy's deadlines for both count from then."""
    graph = graph_for(version="4.1.6")
    assert graph is not None
    text = module_tf(graph, "module.slurm")
    block = r'resource "null_resource" "(?P<name>[^"]+)" \{(?P<body>.*?)\n\}\n'
    blocks = {m["name"]: m["body"] for m in re.finditer(block, text, re.S)}
    hr = "null_resource.terraform_data__wait_for_slurm_cluster_hr"
    bootstrap = "null_resource.helm_release__soperator_fluxcd_bootstrap__update"
    assert f"depends_on = [{hr}]" in blocks["terraform_data__wait_for_slurm_cluster_available"]
    assert (
        f"depends_on = [{bootstrap}, {hr}]"
        in (blocks["terraform_data__wait_for_soperator_activechecks_hr"])
    )
    assert f"depends_on = [{bootstrap}]" in blocks["terraform_data__wait_for_slurm_cluster_hr"]
