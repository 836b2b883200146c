"""recipe/graph.py and scripts/gen_recipe_graph.py: the recipe's resource graph per layout.

The addresses below are the `resource` blocks of nebius/nebius-solutions-library `soperator/`
as read at the commits each layout records (its `files`); the test carries them, so a graph
regenerated from other files than those is caught here, without the network. The script's
own rules (instances, what replaces, what is bookkeeping) are checked on small HCL the test
writes itself.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.recipe.graph import graph_for, layouts, load_graph, safe_replacements

ROOT = Path(__file__).resolve().parents[2]
L531 = "531a6061d735bac04cbf36f4ede317d59309e322"
L1861 = "c1861f98299669b44b71643f837062904b544f39"

K8S = [
    "module.k8s.nebius_compute_v1_gpu_cluster.this_v2",  # k8s_ng_workers_v2.tf @ c1861f98
    "module.k8s.nebius_mk8s_v1_cluster.this",  # k8s_cluster.tf @ 0616445b
    "module.k8s.nebius_mk8s_v1_node_group.accounting",  # k8s_ng_accounting.tf @ c1861f98
    "module.k8s.nebius_mk8s_v1_node_group.controller",  # k8s_ng_controller.tf @ 942fc19c
    "module.k8s.nebius_mk8s_v1_node_group.login",  # k8s_ng_login.tf @ 17f10b34
    "module.k8s.nebius_mk8s_v1_node_group.nfs",  # k8s_ng_nfs.tf @ 81fec705
    "module.k8s.nebius_mk8s_v1_node_group.system",  # k8s_ng_system.tf @ c1861f98
    "module.k8s.nebius_mk8s_v1_node_group.worker_v2",  # k8s_ng_workers_v2.tf @ c1861f98
    "module.k8s.nebius_vpc_v1_allocation.this",  # k8s_ng_login.tf @ 17f10b34
    "module.k8s.terraform_data.check_resource_preset_sufficiency",  # sufficiency.tf @ 0616445b
    "module.k8s.terraform_data.kubectl_cluster_context",  # k8s_cluster.tf @ 0616445b
]
SLURM = [
    "module.slurm.helm_release.soperator_fluxcd_ad_hoc_cm",  # main.tf @ 531a6061
    "module.slurm.helm_release.soperator_fluxcd_bootstrap",
    "module.slurm.helm_release.soperator_fluxcd_cm",
    "module.slurm.local_file.flux_release_rendered_nodesets",  # flux_release_nodesets.tf @ 8219976b
    "module.slurm.terraform_data.wait_for_slurm_cluster_available",
    "module.slurm.terraform_data.wait_for_slurm_cluster_hr",
    "module.slurm.terraform_data.wait_for_soperator_activechecks_hr",
]
LOGIN = [  # modules/login/main.tf @ 0616445b
    "module.login_script.local_file.this",
    "module.login_script.terraform_data.lb_service_ip",
    "module.login_script.terraform_data.wait_for_slurm_login_service",
]
BOOTSTRAP = [  # modules/k8s/bootstrap.tf and modules/slurm/bootstrap.tf @ c1861f98
    "module.k8s.terraform_data.before_node_groups",
    "module.slurm.terraform_data.external_bootstrap",
    "module.slurm.terraform_data.wait_for_bootstrap_releases",
]
EXPECTED = {L531: sorted(K8S + SLURM + LOGIN), L1861: sorted(K8S + SLURM + LOGIN + BOOTSTRAP)}


def script() -> Any:
    path = ROOT / "scripts" / "gen_recipe_graph.py"
    spec = importlib.util.spec_from_file_location("gen_recipe_graph", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("layout", [L531, L1861])
def test_each_layout_has_the_recipes_addresses(layout: str) -> None:
    graph = load_graph(layout)
    assert graph.addresses() == EXPECTED[layout]
    assert layouts() == [L531, L1861]
    # every file is recorded with the commit it was read at, as the script's manifest says
    assert {p: f["commit"] for p, f in graph.files.items()} == script().LAYOUTS[layout].files
    assert graph.files["modules/slurm/flux_release_nodesets.tf"]["commit"].startswith("8219976b")
    assert graph.files["modules/slurm/main.tf"]["commit"].startswith("531a6061")


def test_the_layouts_serve_the_supported_versions_and_commits() -> None:
    assert graph_for(version="4.1.6") is graph_for(version="4.1.12") is load_graph(L531)
    assert graph_for(version="4.1.13") is load_graph(L1861)
    assert graph_for("01e8c67a6182305bf2751a931fc5ee2f642f51a1") is load_graph(L531)
    assert graph_for("c1e21829") is load_graph(L1861)
    assert graph_for("0123456789abcdef0123456789abcdef01234567") is None
    assert safe_replacements("0123456789abcdef0123456789abcdef01234567") == {}
    assert load_graph(L1861).root_inputs == {"bootstrap_managed_externally": True}


def test_what_the_recipe_replaces_on_purpose_is_derived() -> None:
    """Rendered files and local waits are bookkeeping; node groups, the cluster, the Helm
    releases and the public IP are not."""
    safe = safe_replacements(version="4.1.13")
    assert (
        "replaced on every apply" in safe["module.slurm.terraform_data.wait_for_bootstrap_releases"]
    )
    assert "renders" in safe["module.slurm.local_file.flux_release_rendered_nodesets"]
    assert "replaced on every apply" in safe["module.k8s.terraform_data.kubectl_cluster_context"]
    for cloud in ("module.k8s.nebius_mk8s_v1_node_group.worker_v2",
                  "module.k8s.nebius_mk8s_v1_cluster.this",
                  "module.slurm.helm_release.soperator_fluxcd_bootstrap",
                  "module.k8s.nebius_vpc_v1_allocation.this"):  # fmt: skip
        assert cloud not in safe
    assert "module.slurm.terraform_data.wait_for_bootstrap_releases" not in safe_replacements(
        version="4.1.6"
    )


def test_what_replaces_and_what_updates_a_resource() -> None:
    graph = load_graph(L1861)
    workers = graph.resource("module.k8s.nebius_mk8s_v1_node_group.worker_v2")
    assert workers is not None
    assert workers["instances"] == {"kind": "count", "over": "worker_node_groups"}
    assert workers["inputs"] == {
        "replace": ["cluster_id", "worker_boot_disk", "worker_capacity", "worker_fabric",
                    "worker_shape"],
        "update": ["k8s_version", "node_group_version", "worker_name", "worker_size"],
    }  # fmt: skip
    rendered = graph.resource("module.slurm.local_file.flux_release_rendered_nodesets")
    assert rendered is not None and "operator_version" in rendered["inputs"]["replace"]
    assert "nodesets" in rendered["inputs"]["replace"]
    bootstrap = graph.resource("module.slurm.helm_release.soperator_fluxcd_bootstrap")
    assert bootstrap is not None and bootstrap["inputs"]["update"] == [
        "operator_stable", "operator_version"]  # fmt: skip
    allocation = graph.resource("module.k8s.nebius_vpc_v1_allocation.this")
    assert allocation is not None and allocation["create_before_destroy"] is True


def test_the_script_reads_blocks_and_refuses_what_it_does_not_know(tmp_path: Path) -> None:
    gen = script()
    doc = gen._hcl(
        'resource "terraform_data" "w" {\n  count = var.bootstrap_managed_externally ? 1 : 0\n'
        "  triggers_replace = [timestamp()]\n}\n"
        'resource "nebius_vpc_v1_allocation" "ip" {\n  lifecycle {\n'
        "    create_before_destroy = true\n  }\n  parent_id = var.iam_project_id\n}\n"
        'resource "local_file" "f" {\n  count = length(var.something_new)\n  content = "x"\n}\n'
    )
    blocks = {name: (kind, body) for b in doc["resource"] for kind, named in b.items()
              for name, body in named.items()}  # fmt: skip
    wait = gen.resource_entry("module.slurm", *blocks["w"][:1], "w", blocks["w"][1], "x.tf")
    assert wait["instances"] == {"kind": "flag", "flag": "bootstrap_managed_externally"}
    assert wait["always_replaced"] is True and wait["inputs"]["replace"] == ["every_apply"]
    assert wait["safe_replace"] == "replaced on every apply (triggers_replace holds timestamp())"
    ip = gen.resource_entry("module.k8s", "nebius_vpc_v1_allocation", "ip", blocks["ip"][1], "x")
    assert ip["create_before_destroy"] is True and "safe_replace" not in ip
    with pytest.raises(
        SystemExit, match=r"no rule for the instances of 'length\(var.something_new\)'"
    ):
        gen.resource_entry("module.slurm", "local_file", "f", blocks["f"][1], "x.tf")


@pytest.mark.parametrize("layout", [L531, L1861])
def test_the_apply_waits_after_the_slurm_cluster_release_run_side_by_side(layout: str) -> None:
    """In the recipe's slurm module the SlurmCluster-Available wait and the active-checks
    wait each depend only on the slurm-cluster release's wait, which follows the bootstrap
    release: the graph keeps that order (and no order between the two)."""
    graph = load_graph(layout)

    def after(name: str) -> list[str]:
        resource = graph.resource(f"module.slurm.{name}")
        assert resource is not None
        return list(resource["after"])

    assert after("terraform_data.wait_for_slurm_cluster_hr") == [
        "helm_release.soperator_fluxcd_bootstrap"]  # fmt: skip
    assert after("terraform_data.wait_for_slurm_cluster_available") == [
        "terraform_data.wait_for_slurm_cluster_hr"]  # fmt: skip
    assert after("terraform_data.wait_for_soperator_activechecks_hr") == [
        "helm_release.soperator_fluxcd_bootstrap",
        "terraform_data.wait_for_slurm_cluster_hr",
    ]
    # the releases: the values after the rendered nodesets file they carry, then the bootstrap
    assert after("helm_release.soperator_fluxcd_cm") == [
        "local_file.flux_release_rendered_nodesets"
    ]
    assert after("helm_release.soperator_fluxcd_bootstrap") == ["helm_release.soperator_fluxcd_cm"]


def test_the_script_orders_by_depends_on_and_by_reference() -> None:
    gen = script()
    text = (
        'resource "terraform_data" "a" {\n  input = "x"\n}\n'
        'resource "terraform_data" "ab" {\n  input = "y"\n}\n'
        'resource "terraform_data" "b" {\n  depends_on = [terraform_data.a]\n}\n'
        'resource "local_file" "c" {\n  content = terraform_data.ab.output\n}\n'
    )
    modules: dict[str, Any] = {"module.slurm": {"resources": [
        {"type": t, "name": n, "file": "m.tf"}
        for t, n in (("terraform_data", "a"), ("terraform_data", "ab"),
                     ("terraform_data", "b"), ("local_file", "c"))]}}  # fmt: skip
    gen._record_order(modules, "m.tf", gen._hcl(text))
    order = {r["name"]: r["after"] for r in modules["module.slurm"]["resources"]}
    # `terraform_data.a` is no reference inside `terraform_data.ab`
    assert order == {"a": [], "ab": [], "b": ["terraform_data.a"], "c": ["terraform_data.ab"]}
