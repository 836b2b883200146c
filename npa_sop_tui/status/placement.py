"""Where a Slurm node lives in Kubernetes: its worker pod, the pod's node and node group.

On a Soperator cluster a worker pod and its Slurm node have the same name, `<nodeset>-<i>`
(the pod carries `app.kubernetes.io/component: nodeset` and `slurm.nebius.ai/nodeset:
<nodeset>`), so a Slurm node maps to the pod of exactly its name. The app's node detail and
`npa soperator nodes --node` both call `place_node`, so they always agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npa_sop_tui.status.jobs import NodeDetail
    from npa_sop_tui.status.model import KubeState, PodInfo


def worker_pod(kube: KubeState | None, node: str) -> PodInfo | None:
    """The pod named exactly like the Slurm node `node`, if Kubernetes reports one."""
    if kube is None:
        return None
    for component in kube.components:
        for pod in component.pods:
            if pod.name == node:
                return pod
    return None


def place_node(detail: NodeDetail, kube: KubeState | None) -> NodeDetail:
    """`detail` with its Kubernetes pod, that pod's node and the node's group filled in."""
    pod = worker_pod(kube, detail.name)
    if pod is None or kube is None:
        return detail.model_copy(update={"k8s_pod": None, "k8s_node": None, "node_group": None})
    group = next(
        (g.name for g in kube.node_groups if any(n.name == pod.node for n in g.nodes)), None
    )
    return detail.model_copy(
        update={"k8s_pod": pod.name, "k8s_node": pod.node, "node_group": group}
    )
