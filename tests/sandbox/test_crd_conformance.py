"""Every SlurmCluster, NodeSet and ActiveCheck the fake API server and the sandbox serve
validates against Soperator's real CRD schemas (nebius/soperator tag 4.1.6,
config/crd/bases/, copied unchanged into this repository's tests/data folder), read back
over HTTP with the official client; phases, conditions and names as the controllers set them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.sandbox.cluster import SimulatedCluster
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import (
    SLURMCLUSTER_CONDITIONS,
    make_nodeset,
    make_slurmcluster,
)
from npa_sop_tui.spec.model import spec_from_mapping
from npa_sop_tui.status.crd_contract import crd_contract

from testkit.crd_schema import schema_errors

KINDS = ("SlurmCluster", "NodeSet", "ActiveCheck")
STANDIN = Path(__file__).resolve().parents[2] / "npa_sop_tui/sandbox/recipe/soperator"


GB300_POOL = {"name": "nvl", "platform": "gpu-gb300", "preset": "4gpu-112vcpu-800gb",
              "size": 36, "fabric": "fabric-3", "local_nvme_device_count": 4,
              "local_nvme_device_gb": 3840}  # fmt: skip


def sandbox_spec(*, accounting: bool, gb300: bool = False) -> Any:
    workers: list[dict[str, Any]] = [
        {"name": "cpu", "size": 2},
        {"name": "gpu", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb",
         "fabric": "fabric-3", "size": 2},
    ]  # fmt: skip
    data: dict[str, Any] = {"apiVersion": "npa.soperator/v0.0.1", "name": "crd",
                            "workers": workers, "accounting": accounting}  # fmt: skip
    if gb300:  # one CPU architecture per cluster: GB300 (arm64) alone, on a 4.1.12+ recipe
        data.update(workers=[GB300_POOL], slurm_operator_version="4.1.13")
    return spec_from_mapping(data)


def served(srv: FakeKubeServer, kubeconfig: Path, plural: str) -> list[dict[str, Any]]:
    """The objects as the official client reads them from the fake API server."""
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=str(kubeconfig), context="nebius-demo-slurm")
    with api:
        found = client.CustomObjectsApi(api).list_namespaced_custom_object(
            "slurm.nebius.ai", crd_contract()["kinds"][_kind(plural)]["storage_version"],
            "soperator", plural,
        )  # fmt: skip
    return list(found["items"])


def _kind(plural: str) -> str:
    return next(k for k, v in crd_contract()["kinds"].items() if v["plural"] == plural)


def addresses(spec: Any) -> list[str]:
    """The stand-in's resource addresses a full deploy of `spec` creates."""
    from npa_sop_tui.recipe.nodesets import spec_nodesets

    slurm = ["release_operator", "release_slurm_cluster", "release_activechecks",
             "wait_for_slurm_cluster"]  # fmt: skip
    if spec.accounting:
        slurm.append("release_accounting")
    nodesets = [f'module.slurm.null_resource.release_nodeset["{n.name}"]'
                for n in spec_nodesets(spec)]  # fmt: skip
    return [*(f"module.slurm.null_resource.{r}" for r in slurm), *nodesets,
            "module.login_script.null_resource.lb_service_ip"]  # fmt: skip


@pytest.mark.parametrize("accounting", [True, False])
def test_sandbox_objects_validate_against_the_real_crds(
    fake_kube: FakeKubeServer, kubeconfig: Path, accounting: bool
) -> None:
    spec = sandbox_spec(accounting=accounting, gb300=not accounting)
    cluster = SimulatedCluster("crd", spec, fake_kube)
    cluster.apply("module.slurm.null_resource.release_slurm_cluster", deleting=False)
    pending = served(fake_kube, kubeconfig, "slurmclusters")
    cluster.restore(addresses(spec))
    seen: dict[str, int] = {}
    for plural in ("slurmclusters", "nodesets", "activechecks"):
        objects = served(fake_kube, kubeconfig, plural) + (
            pending if plural == "slurmclusters" else []
        )
        for obj in objects:
            assert schema_errors(obj) == [], (obj["kind"], obj["metadata"]["name"])
            seen[obj["kind"]] = seen.get(obj["kind"], 0) + 1
    assert set(seen) == set(KINDS)
    (cluster_obj,) = served(fake_kube, kubeconfig, "slurmclusters")
    conds = {c["type"]: c for c in cluster_obj["status"]["conditions"]}
    assert cluster_obj["status"]["phase"] == "Available"
    assert pending[0]["status"]["phase"] == "Pending"
    assert {c["reason"] for c in pending[0]["status"]["conditions"]
            if c["type"] != "PopulateJailMode"} <= {"SetUpCondition", "NotAvailable"}  # fmt: skip
    assert "PopulateJailMode" in conds
    acct = conds["AccountingAvailable"]
    if accounting:
        assert (acct["status"], acct["reason"]) == ("True", "Available")
    else:
        assert (acct["status"], acct["reason"], acct["message"]) == (
            "False", "NotAvailable", "Slurm accounting is disabled",
        )  # fmt: skip
    assert {c["reason"] for c in conds.values()} <= {"Available", "NotAvailable", "none"}


def test_sandbox_names_and_places_as_soperator(fake_kube: FakeKubeServer, kubeconfig: Path) -> None:
    from kubernetes import client, config

    spec = sandbox_spec(accounting=False, gb300=True)
    SimulatedCluster("crd", spec, fake_kube).restore(addresses(spec))
    nodesets = {o["metadata"]["name"]: o for o in served(fake_kube, kubeconfig, "nodesets")}
    assert set(nodesets) == {"nvl-rack0", "nvl-rack1"}
    assert [nodesets[n]["spec"]["replicas"] for n in sorted(nodesets)] == [18, 18]
    assert {o["status"]["phase"] for o in nodesets.values()} <= {
        "Pending", "Provisioning", "Ready", "Terminating"}  # fmt: skip
    api = config.new_client_from_config(config_file=str(kubeconfig), context="nebius-demo-slurm")
    with api:
        core = client.CoreV1Api(api)
        workers = core.list_namespaced_pod(
            "soperator", label_selector="app.kubernetes.io/component=nodeset"
        )
        operator = core.list_namespaced_pod("soperator-system")
    names = {p.metadata.name: p.metadata.labels for p in workers.items}
    assert sorted(names) == sorted(f"nvl-rack{r}-{i}" for r in (0, 1) for i in range(18))
    assert {lbl["app.kubernetes.io/component"] for lbl in names.values()} == {"nodeset"}
    assert names["nvl-rack1-3"]["slurm.nebius.ai/nodeset"] == "nvl-rack1"
    assert [p.metadata.name for p in operator.items] == ["soperator-controller-manager-0"]
    checks = {o["metadata"]["name"]: o for o in served(fake_kube, kubeconfig, "activechecks")}
    ssh = checks["ssh-check"]
    assert ssh["spec"]["suspend"] is True and "failureReactions" not in ssh["spec"]
    # no schedule of its own: stored with the CRD's default, as the API server fills it in
    assert ssh["spec"]["schedule"] == "0 0 1 1 *"
    assert ssh["status"]["k8sJobsStatus"]["lastJobName"] == "ssh-check-1"


@pytest.mark.parametrize(
    "obj",
    [
        make_slurmcluster(phase, conditions=dict.fromkeys(SLURMCLUSTER_CONDITIONS, state))
        for phase, state in (("Pending", "Unknown"), ("Not available", False), ("Available", True))
    ]
    + [
        make_nodeset("w", replicas=2, ready=r, phase=p)
        for p, r in (("Pending", 0), ("Provisioning", 1), ("Ready", 2), ("Terminating", 0))
    ],
)
def test_fake_builders_validate(obj: dict[str, Any]) -> None:
    assert schema_errors(obj) == []


@pytest.mark.parametrize("phase", ["Reconciling", "Degraded"])
def test_builders_refuse_phases_the_controllers_never_set(phase: str) -> None:
    with pytest.raises(ValueError, match="never sets"):
        (make_slurmcluster if phase == "Reconciling" else _nodeset)(phase)


def _nodeset(phase: str) -> Any:
    return make_nodeset("w", replicas=1, ready=0, phase=phase)


def test_the_validator_catches_what_the_schema_forbids() -> None:
    bad = make_nodeset("w", replicas=1, ready=1)
    bad["spec"]["replicas"] = "one"  # type
    bad["spec"]["surprise"] = True  # unknown field
    del bad["spec"]["munge"]  # required
    bad["status"]["conditions"][0]["status"] = "Maybe"  # enum
    errors = "\n".join(schema_errors(bad))
    assert "spec.replicas: 'one' is not of type 'integer'" in errors
    assert "'surprise' was unexpected" in errors
    assert "'munge' is a required property" in errors
    assert "'Maybe' is not one of ['True', 'False', 'Unknown']" in errors


def _gen_crd_contract() -> Any:
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "scripts" / "gen_crd_contract.py"
    loaded = importlib.util.spec_from_file_location("gen_crd_contract", script)
    assert loaded is not None and loaded.loader is not None
    module = importlib.util.module_from_spec(loaded)
    sys.modules[loaded.name] = module  # dataclasses look their module up while defining
    loaded.loader.exec_module(module)
    return module


@pytest.mark.parametrize("release,operator", [("4.1.6", "4.1.13"), ("main", "5.0.0")])
def test_derived_contract_and_schemas_are_current(release: str, operator: str) -> None:
    """The committed derived data is what scripts/gen_crd_contract.py makes of the CRDs of
    each release: the contract status reads by and the schemas the fake API server checks."""
    script = _gen_crd_contract()
    wanted = script.RELEASES[release]
    fresh = script.derive(wanted.dir, wanted.tag, wanted.commit)
    assert json.loads(json.dumps(fresh)) == crd_contract(operator)
    assert wanted.schemas_out.read_bytes() == script.schema_bytes(wanted.dir)
    assert wanted.schemas_out.name == f"{crd_contract(operator)['source']['tag']}.json.gz"
    assert crd_contract(operator)["kinds"]["ActiveCheck"]["required"]["status.k8sJobsStatus"] == [
        "lastJobName", "lastJobStatus"]  # fmt: skip


def test_the_5_0_crds_differ_where_the_release_notes_say() -> None:
    old, new = crd_contract("4.1.13")["kinds"], crd_contract("5.0.0")["kinds"]
    assert "updateStrategy" not in old["NodeSet"]["required"]["spec"]
    assert "updateStrategy" in new["NodeSet"]["required"]["spec"]
    assert {"JailedConfig", "NodeConfigurator", "NodeSetPowerState"} <= set(new) - set(old)
    assert crd_contract("5.0.0")["source"]["commit"].startswith("c238d993")
    assert crd_contract(None)["source"]["tag"] == "4.1.6"


def test_a_gb300_sandbox_cluster_reads_ready_with_its_rack_nodesets(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    """Rack NodeSets find their node groups (label `nodeset-name` = the NodeSet's name), so
    the verdict maps every rack and raises no "no nodes" hint."""
    from kubernetes import client, config

    from npa_sop_tui.status.kube import build_kube_state
    from npa_sop_tui.status.model import Freshness
    from npa_sop_tui.status.verdict import compute_verdict

    spec = sandbox_spec(accounting=False, gb300=True)
    groups = [f'module.k8s.null_resource.worker_v2_size["nvl-rack{r}"]' for r in (0, 1)]
    SimulatedCluster("crd", spec, fake_kube).restore([*groups, *addresses(spec)])
    api = config.new_client_from_config(config_file=str(kubeconfig), context="nebius-demo-slurm")
    with api:
        core = client.CoreV1Api(api)
        raw = api.sanitize_for_serialization
        nodes = [raw(n) for n in core.list_node().items]
        pods = [raw(p) for p in core.list_namespaced_pod("soperator").items]
        services = [raw(s) for s in core.list_namespaced_service("soperator").items]
    labels = {n["metadata"]["labels"]["slurm.nebius.ai/nodeset-name"] for n in nodes}
    assert labels == {"nvl-rack0", "nvl-rack1"} and len(nodes) == 36
    kube = build_kube_state(
        "nebius-demo-slurm", nodes=nodes, pods=pods, services=services,
        slurmclusters=served(fake_kube, kubeconfig, "slurmclusters"), slurmclusters_missing=False,
        nodesets=served(fake_kube, kubeconfig, "nodesets"), nodesets_missing=False,
    )  # fmt: skip
    fresh = {"kube": Freshness(state="fresh"), "slurm": Freshness(state="disabled")}
    verdict = compute_verdict(kube=kube, slurm=None, freshness=fresh)
    assert verdict.state == "ready", verdict.hints
