"""A Slurm node maps to the worker pod of exactly its name (`<nodeset>-<i>` on Soperator),
one function for the app and the CLI."""

from __future__ import annotations

from npa_sop_tui.status.jobs import NodeDetail
from npa_sop_tui.status.model import ComponentPods, KubeNode, KubeState, NodeGroup, PodInfo
from npa_sop_tui.status.placement import place_node, worker_pod


def _group(name: str, *nodes: str) -> NodeGroup:
    return NodeGroup(name=name, nodes=[KubeNode(name=n, ready=True) for n in nodes])


def _kube() -> KubeState:
    pods = [
        PodInfo(name="cpu-0", component="nodeset", phase="Running", node="w0"),
        PodInfo(name="gpu-0", component="nodeset", phase="Running", node="w1"),
    ]
    # a pod whose name merely ends in the node's name, on the system group: not it
    exporter = PodInfo(name="exporter-cpu-0", component="exporter", phase="Running", node="s0")
    return KubeState(
        context="nebius-demo-slurm",
        node_groups=[_group("system", "s0"), _group("cpu", "w0"), _group("gpu", "w1")],
        components=[
            ComponentPods(component="exporter", pods=[exporter]),
            ComponentPods(component="nodeset", pods=pods),
        ],
    )


def test_app_and_cli_agree_on_a_node() -> None:
    kube = _kube()
    placed = place_node(NodeDetail(name="cpu-0", state="IDLE"), kube)
    assert (placed.k8s_pod, placed.k8s_node, placed.node_group) == ("cpu-0", "w0", "cpu")
    gpu = place_node(NodeDetail(name="gpu-0", state="IDLE"), kube)
    assert (gpu.k8s_pod, gpu.k8s_node, gpu.node_group) == ("gpu-0", "w1", "gpu")
    # no pod of that name: nothing is guessed
    assert worker_pod(kube, "cpu-1") is None
    alone = place_node(NodeDetail(name="cpu-1", state="IDLE", k8s_pod="stale"), kube)
    assert (alone.k8s_pod, alone.k8s_node, alone.node_group) == (None, None, None)
    assert place_node(NodeDetail(name="cpu-0", state="IDLE"), None).k8s_pod is None


def test_both_surfaces_call_the_one_mapping() -> None:
    """The node detail screen and `nodes --node` import place_node; no second rule exists."""
    from pathlib import Path

    import npa_sop_tui

    root = Path(npa_sop_tui.__file__).resolve().parent
    users = sorted(
        p.relative_to(root).as_posix()
        for p in [*root.rglob("*.py"), *(root / "screens").rglob("*.py")]
        if "place_node(" in p.read_text() and p.name != "placement.py"
    )
    assert users == ["cli/slurm_cmds.py", "screens/node_detail.py"]
