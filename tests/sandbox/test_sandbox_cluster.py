"""The simulated cluster follows what Terraform does to the stand-in: a pool resized in place
scales its NodeSet and worker pods at once, as the operator would (the dashboard showed the
old `nodeset 1/1` until the app restarted)."""

from __future__ import annotations

from npa_sop_tui.events import ResourceFinished
from npa_sop_tui.sandbox.cluster import SimulatedCluster
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.spec.model import SoperatorSpec

SPEC = {
    "apiVersion": "npa.soperator/v0.0.1",
    "name": "rs",
    "workers": [{"name": "cpu", "size": 1}],
}


def _spec(size: int) -> SoperatorSpec:
    return SoperatorSpec.model_validate({**SPEC, "workers": [{"name": "cpu", "size": size}]})


def _finished(addr: str, action: str = "create") -> ResourceFinished:
    module = addr.split(".null_resource")[0]
    return ResourceFinished(operation_id="op", addr=addr, module=module, action=action, elapsed=1)


def test_an_in_place_resize_scales_the_nodeset_and_its_pods() -> None:
    with FakeKubeServer() as kube:
        cluster = SimulatedCluster("rs", _spec(1), kube)
        for addr in (
            'module.k8s.null_resource.worker_v2["cpu-0"]',
            'module.k8s.null_resource.worker_v2_size["cpu-0"]',
            "module.slurm.null_resource.release_slurm_cluster",
            'module.slurm.null_resource.release_nodeset["cpu"]',
        ):
            cluster.on_event(_finished(addr))
        nodeset = kube.get("nodesets", "cpu")
        assert nodeset is not None and nodeset["spec"]["replicas"] == 1
        assert kube.get("pods", "cpu-0") and kube.get("pods", "cpu-1") is None

        cluster.spec = _spec(2)  # deploy of the resized spec: two updates in place
        cluster.on_event(_finished('module.k8s.null_resource.worker_v2_size["cpu-0"]', "update"))
        cluster.on_event(
            _finished("module.slurm.null_resource.release_slurm_cluster_values", "update")
        )
        nodeset = kube.get("nodesets", "cpu")
        assert nodeset is not None and nodeset["spec"]["replicas"] == 2
        assert nodeset["status"]["replicas"] == 2
        assert kube.get("pods", "cpu-1") is not None
        assert kube.get("nodes", "rs-cpu-1", namespace="") is not None
        # a worker pod runs on its own worker node (node detail named system-0 and the
        # system node group for it)
        assert kube.get("pods", "cpu-1")["spec"]["nodeName"] == "rs-cpu-1"  # type: ignore[index]

        cluster.spec = _spec(1)  # and back: the extra worker pod goes
        cluster.on_event(
            _finished("module.slurm.null_resource.release_slurm_cluster_values", "update")
        )
        assert kube.get("pods", "cpu-1") is None
        assert kube.get("nodesets", "cpu")["spec"]["replicas"] == 1  # type: ignore[index]
