"""The 4.1.x repairs with the official client against the fake API server (real HTTP)."""

from __future__ import annotations

from pathlib import Path

from npa_sop_tui.postdeploy.repairs import repair_4_1
from npa_sop_tui.sandbox.cluster_api import CRD, SCRIPTS
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer

CONTEXT = "nebius-fix-slurm"


async def test_crd_and_configmap_are_repaired_once(tmp_path: Path) -> None:
    with FakeKubeServer() as server:
        server.add("customresourcedefinitions", CRD)
        server.add("configmaps", SCRIPTS)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig", CONTEXT)
        first = {o.repair: o.result for o in await repair_4_1(kubeconfig, CONTEXT)}
        assert first == {"crd-plugstack-config": "applied", "slurm-scripts-configmap": "applied"}
        crd = server.get("customresourcedefinitions", "slurmclusters.slurm.nebius.ai")
        assert crd is not None
        plug = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"
        ]["plugStackConfig"]
        assert plug["x-kubernetes-preserve-unknown-fields"] is True
        copy = server.get("configmaps", "soperator-slurm-scripts")
        assert copy is not None and copy["data"] == SCRIPTS["data"]
        second = {o.repair: o.result for o in await repair_4_1(kubeconfig, CONTEXT)}
        assert set(second.values()) == {"not-needed"}


async def test_unreachable_cluster_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    outcomes = await repair_4_1(tmp_path / "missing-kubeconfig", CONTEXT)
    assert [o.result for o in outcomes] == ["failed", "failed"]
    assert all(o.message for o in outcomes)
