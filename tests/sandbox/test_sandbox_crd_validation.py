"""The fake Kubernetes API server refuses what the real CRDs refuse: an invalid SlurmCluster,
NodeSet or ActiveCheck is never stored, from Python (InvalidObject) or over HTTP through the
official client (422 Invalid), in each Soperator release's schema."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.sandbox import crd_validation
from npa_sop_tui.sandbox.active_checks import k8s_job_status, sandbox_active_checks
from npa_sop_tui.sandbox.crd_validation import InvalidObject
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import make_nodeset, make_slurmcluster
from npa_sop_tui.spec.model import spec_from_mapping

from testkit.crd_schema import schema_errors

MAIN = "5.0.0-main-c238d993"
GPU_SPEC = spec_from_mapping(
    {"apiVersion": "npa.soperator/v0.0.1", "name": "val", "workers": [
        {"name": "gpu", "platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb",
         "fabric": "fabric-3", "size": 2}]}
)  # fmt: skip


def broken_check() -> dict[str, Any]:
    """The ActiveCheck older tests served: no slurmClusterRefName, no lastJobName."""
    (check,) = [c for c in sandbox_active_checks(GPU_SPEC) if c["spec"]["name"] == "ssh-check"]
    del check["spec"]["slurmClusterRefName"]
    del check["status"]["k8sJobsStatus"]["lastJobName"]
    return check


def test_storing_an_invalid_object_fails_and_nothing_is_stored() -> None:
    with FakeKubeServer() as srv:
        with pytest.raises(InvalidObject) as caught:
            srv.add("activechecks", broken_check())
        assert caught.value.errors == [
            "spec.slurmClusterRefName: Required value",
            "status.k8sJobsStatus.lastJobName: Required value",
        ]
        assert str(caught.value).startswith('ActiveCheck "ssh-check" is invalid: ')
        assert srv.get("activechecks", "ssh-check") is None
        srv.add("nodesets", make_nodeset("w", replicas=1, ready=1))
        with pytest.raises(InvalidObject, match=r"spec\.replicas: 'two' is not of type integer"):
            srv.patch("nodesets", "w", lambda o: o["spec"].update(replicas="two"))
        stored = srv.get("nodesets", "w")
        assert stored is not None and stored["spec"]["replicas"] == 1  # the valid one stays


def test_the_official_client_gets_422_invalid(kubeconfig: Path, fake_kube: FakeKubeServer) -> None:
    from kubernetes import client, config
    from kubernetes.client.exceptions import ApiException

    api = config.new_client_from_config(config_file=str(kubeconfig), context="nebius-demo-slurm")
    with api:
        custom = client.CustomObjectsApi(api)
        with pytest.raises(ApiException) as caught:
            custom.create_namespaced_custom_object(
                "slurm.nebius.ai", "v1alpha1", "soperator", "activechecks", broken_check()
            )
        assert caught.value.status == 422
        assert "spec.slurmClusterRefName: Required value" in str(caught.value.body)
        valid = copy.deepcopy(broken_check())
        valid["spec"]["slurmClusterRefName"] = "soperator"
        valid["status"] = k8s_job_status("ssh-check")
        created = custom.create_namespaced_custom_object(
            "slurm.nebius.ai", "v1alpha1", "soperator", "activechecks", valid
        )
        assert created["metadata"]["name"] == "ssh-check"


def test_each_release_checks_its_own_schema() -> None:
    """5.0 dropped the reservation reactions: an ActiveCheck 4.1.6 takes, 5.0 refuses."""
    (check,) = [c for c in sandbox_active_checks(GPU_SPEC) if c["spec"]["name"] == "cuda-samples"]
    check["spec"]["failureReactions"]["addReservation"] = {"prefix": "bad-node"}
    assert crd_validation.errors(check, "4.1.6") == []
    assert crd_validation.errors(check, MAIN) == [
        "spec.failureReactions.addReservation: field not declared in the schema"
    ]
    with FakeKubeServer(crd_release=MAIN) as srv, pytest.raises(InvalidObject):
        srv.add("activechecks", check)
    assert crd_validation.releases() == ["4.1.6", MAIN]


def test_defaults_are_filled_in_before_the_check_as_the_api_server_does() -> None:
    """5.0's NodeSet requires `updateStrategy`, which its schema defaults: a NodeSet written
    without one is stored with `rollingUpdate`."""
    nodeset = make_nodeset("w", replicas=1, ready=1)
    assert "updateStrategy" not in nodeset["spec"]
    assert crd_validation.errors(nodeset, MAIN) == []
    with FakeKubeServer(crd_release=MAIN) as srv:
        stored = srv.add("nodesets", nodeset)
    assert stored["spec"]["updateStrategy"] == "rollingUpdate"
    bare = copy.deepcopy(nodeset)
    bare["spec"]["updateStrategy"] = "sideways"
    assert crd_validation.errors(bare, MAIN) == [
        "spec.updateStrategy: 'sideways' is not one of ['rollingUpdate', 'slurmAwareRollingUpdate']"
    ]


@pytest.mark.parametrize(
    "mutate,expected",
    [
        (lambda o: o["spec"].update(replicas=True), "spec.replicas: True is not of type integer"),
        (lambda o: o["spec"].update(surprise=1), "spec.surprise: field not declared in the schema"),
        (lambda o: o["status"].update(phase=None),
         "status.phase: null is not allowed (type string)"),
        (lambda o: o["metadata"].pop("name"), "metadata.name: Required value"),
        (lambda o: o["status"]["conditions"][0].update(status="Maybe"),
         "status.conditions[0].status: 'Maybe' is not one of ['True', 'False', 'Unknown']"),
    ],
)  # fmt: skip
def test_what_the_validator_refuses_word_for_word(mutate: Any, expected: str) -> None:
    obj = make_nodeset("w", replicas=1, ready=1)
    mutate(obj)
    assert crd_validation.errors(obj) == [expected]


def test_it_agrees_with_a_json_schema_validator_on_the_same_crds() -> None:
    """The product's structural check and jsonschema over the CRD files (tests/testkit) find
    the same objects valid and the same ones invalid."""
    good = [make_slurmcluster(), make_nodeset("w", replicas=2, ready=1),
            *sandbox_active_checks(GPU_SPEC)]  # fmt: skip
    bad = [broken_check()]
    for mutate in (lambda o: o["spec"].update(replicas="x"), lambda o: o["spec"].pop("munge"),
                   lambda o: o["spec"].update(extra=1)):  # fmt: skip
        obj = make_nodeset("w", replicas=1, ready=1)
        mutate(obj)
        bad.append(obj)
    for obj in good:
        assert crd_validation.errors(obj) == [] and schema_errors(obj) == [], obj["kind"]
    for obj in bad:
        assert crd_validation.errors(obj) != [] and schema_errors(obj) != [], obj["kind"]
