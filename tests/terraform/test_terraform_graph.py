"""`terraform graph` reduced to resources: what each resource waits on, through variables,
locals, module outputs and `depends_on = [module.x]` (the module's close node)."""

from __future__ import annotations

from pathlib import Path

from npa_sop_tui.terraform.graph import resource_dependencies, resource_of

DOT = Path(__file__).parent / "data" / "standin-graph.dot"  # printed by Terraform 1.0.3


def test_the_stand_in_graph_reduced_to_resources() -> None:
    deps = resource_dependencies(DOT.read_text())
    assert deps["module.k8s.null_resource.cluster"] == []
    assert deps["module.k8s.null_resource.worker_v2"] == ["module.k8s.null_resource.gpu_cluster"]
    # through the module's close node: the slurm module waits on every k8s resource
    flux = deps["module.slurm.null_resource.flux"]
    assert "module.k8s.null_resource.worker_v2_size" in flux and len(flux) == 9
    # no variable, local, output, provider or module node is left
    names = set(deps) | {d for ds in deps.values() for d in ds}
    assert all(".null_resource." in n for n in names)
    assert deps["module.slurm.null_resource.release_slurm_cluster"] == [
        "module.slurm.null_resource.jail",
        "module.slurm.null_resource.release_operator",
    ]


def test_a_chain_through_locals_and_outputs_stops_at_the_first_resource() -> None:
    dot = "\n".join(
        [
            '"[root] module.b.null_resource.y (expand)" -> "[root] module.b.var.x (expand)"',
            '"[root] module.b.var.x (expand)" -> "[root] module.a.output.id (expand)"',
            '"[root] module.a.output.id (expand)" -> "[root] local.z (expand)"',
            '"[root] local.z (expand)" -> "[root] module.a.null_resource.x (expand)"',
            '"[root] module.a.null_resource.x (expand)" -> "[root] data.null_data_source.d"',
            '"[root] data.null_data_source.d (expand)" -> "[root] var.region"',
        ]
    )
    deps = resource_dependencies(dot)
    assert deps == {
        "data.null_data_source.d": [],
        "module.a.null_resource.x": ["data.null_data_source.d"],
        "module.b.null_resource.y": ["module.a.null_resource.x"],
    }


def test_instances_belong_to_their_resource() -> None:
    assert resource_of('module.k8s.null_resource.w["gpu-0"]') == "module.k8s.null_resource.w"
    assert resource_of('module.x["a"].null_resource.y[3]') == "module.x.null_resource.y"
