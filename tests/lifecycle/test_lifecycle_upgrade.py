"""`upgrade` 4.1.6 → 4.1.13 on a sandbox cluster with a GPU and a CPU pool, real Terraform on
the stand-ins derived from the real recipe's graphs: the plan shown first (the operator's
releases in place, Kubernetes 1.34 → 1.35 → 1.36 with the control plane and every node
group, the drained workers) is what Terraform then does at the real recipe's addresses, and
nothing the recipe does on purpose is refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle import upgrade as upgrading
from npa_sop_tui.recipe.graph import graph_for

from testkit.lifecycle import Recorder, make_spec, options

NODE_GROUPS = [
    "module.k8s.nebius_mk8s_v1_node_group.system",
    "module.k8s.nebius_mk8s_v1_node_group.controller",
    "module.k8s.nebius_mk8s_v1_node_group.login[0]",
    "module.k8s.nebius_mk8s_v1_node_group.worker_v2[0]",  # gpu-0 (GPU pools first)
    "module.k8s.nebius_mk8s_v1_node_group.worker_v2[1]",  # cpu-0
]


def base(address: str) -> str:
    return re.sub(r"\[[^\]]*\]$", "", address)


@pytest.mark.terraform
@pytest.mark.slow
async def test_upgrade_4_1_6_to_4_1_13_plans_and_does_what_the_recipe_does(
    sandbox_in_home: Path,
) -> None:
    spec = make_spec("upg", slurm_operator_version="4.1.6", k8s_version="1.34")
    opts, events = options(), Recorder()
    await lifecycle.deploy(spec, options=opts, on_event=events)

    plan = await upgrading.plan("upg", "4.1.13", options=opts)
    assert [s.title for s in plan.steps] == [
        "Kubernetes 1.34 → 1.35 (operator 4.1.6)",
        "operator 4.1.6 → 4.1.13 (Kubernetes 1.35)",
        "Kubernetes 1.35 → 1.36 (operator 4.1.13)",
    ]
    first, operator, last = plan.steps
    assert [u.address for u in last.updates] == [u.address for u in first.updates]
    assert [u.address for u in first.updates] == [
        "module.k8s.nebius_mk8s_v1_cluster.this", *NODE_GROUPS]  # fmt: skip
    assert first.updates[4].change == "1.34-nebius-node.72 → 1.35-nebius-node.72"
    assert {u.address: u.action for u in operator.updates if u.action == "update"} == {
        "module.slurm.helm_release.soperator_fluxcd_bootstrap": "update",
        "module.slurm.helm_release.soperator_fluxcd_cm": "update",
    }
    assert plan.drained_workers == ["cpu-0", "cpu-1", "gpu-0"]
    # every planned address is one of the real recipe's (the target layout's graph)
    real = set(graph_for(version="4.1.13").addresses())  # type: ignore[union-attr]
    assert {base(u.address) for s in plan.steps for u in s.updates} <= real

    events.events.clear()
    result = await upgrading.upgrade("upg", "4.1.13", options=opts, on_event=events)
    assert (result.status, result.steps_done) == ("upgraded", 3)
    assert result.checks is not None and result.checks.read and result.checks.failed == []
    # nothing refused: every plan of every step was applied without allow_destructive
    applied = [e for e in events.kinds("resource_started")]
    updated = [e.addr for e in applied if e.action == "update"]
    # Terraform updated exactly the planned resources of each Kubernetes step, at the real
    # recipe's addresses: the control plane and every node group, twice
    for address in ("module.k8s.nebius_mk8s_v1_cluster.this", *NODE_GROUPS):
        assert updated.count(address) == 2, address
    assert updated.count("module.slurm.helm_release.soperator_fluxcd_bootstrap") >= 1
    # what the plans replaced is the recipe's bookkeeping only (Terraform applies a
    # replacement as a delete and a create)
    assert all(e.destructive == [] for e in events.kinds("plan_summary"))
    assert sum(e.by_module.get("module.slurm", {}).get("replace", 0)
               for e in events.kinds("plan_summary")) >= 1  # fmt: skip
    recreated = {e.addr for e in applied if e.action == "create"}
    assert "module.slurm.local_file.flux_release_rendered_nodesets" in recreated
    entry = await lifecycle.cluster_resources("upg", opts)
    assert any("wait_for_bootstrap_releases" in a for a in entry)  # the 4.1.13 layout's


def test_a_plan_never_jumps_two_minor_versions(sandbox_in_home: Path) -> None:
    from npa_sop_tui.lifecycle.upgrade_plan import minor_steps, plan_upgrade

    assert minor_steps("1.34", "1.36") == ["1.35", "1.36"]
    assert minor_steps("1.35", "1.35") == []
    spec = make_spec("hop", slurm_operator_version="4.1.6", k8s_version="1.34")
    plan = plan_upgrade(spec, "4.1.13", "1.35")
    assert [(s.kind, s.k8s_version) for s in plan.steps] == [
        ("kubernetes", "1.35"), ("operator", "1.35")]  # fmt: skip
    assert plan.expected_minutes == sum(s.minutes for s in plan.steps) > 0


@pytest.mark.parametrize(
    ("to", "k8s", "message"),
    [
        ("5.0.0", None, "Soperator 5.0.0 has no recipe release npa can deploy"),
        ("4.1.13", "1.33", "Kubernetes cannot go back from 1.34 to 1.33"),
        ("4.1.13", "2.0", "Kubernetes 1.34 → 2.0: only minor upgrades within 1.x"),
    ],
)
def test_what_an_upgrade_refuses(to: str, k8s: Any, message: str) -> None:
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.lifecycle.upgrade_plan import plan_upgrade

    spec = make_spec("no", slurm_operator_version="4.1.6", k8s_version="1.34")
    with pytest.raises(UsageError) as refused:
        plan_upgrade(spec, to, k8s)
    assert refused.value.message == message
    if to.startswith("5."):
        assert "no recipe release deploys it yet" in (refused.value.hint or "")


class _Store:
    def __init__(self, path: Path | None) -> None:
        self.path = path

    def spec_file(self, name: str) -> Path | None:
        return self.path


def test_an_unpinned_spec_never_moves_kubernetes_silently(tmp_path: Path) -> None:
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.lifecycle.upgrade_plan import check_kubernetes_kept
    from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

    deployed = tmp_path / "spec.yaml"
    deployed.write_text(dump_spec_yaml(make_spec("keep", slurm_operator_version="4.1.6")))
    unpinned = make_spec("keep", slurm_operator_version="4.1.13")  # its recipe says 1.36
    with pytest.raises(UsageError) as refused:
        check_kubernetes_kept(unpinned, _Store(deployed))
    assert refused.value.message == (
        "k8s_version is not set, so Soperator 4.1.13's recipe would move 'keep' from "
        "Kubernetes 1.34 to 1.36"
    )
    assert 'pin k8s_version: "1.34"' in (refused.value.hint or "")
    assert "npa soperator upgrade --name keep --to 4.1.13" in (refused.value.hint or "")
    check_kubernetes_kept(make_spec("keep", slurm_operator_version="4.1.13",
                                    k8s_version="1.35"), _Store(deployed))  # fmt: skip
    check_kubernetes_kept(make_spec("keep", slurm_operator_version="4.1.7"), _Store(deployed))
    check_kubernetes_kept(unpinned, _Store(None))  # a new cluster: nothing to keep
