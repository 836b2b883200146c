"""The post-deploy step finds the login node through the one resolver: a sandbox GPU deploy on
a stand-in recipe without root outputs reaches `ready` with the address of the login Service;
without a Service address and without `login.host`, the result names what to set."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle.post_deploy_step import DeploymentDegraded
from npa_sop_tui.sandbox.cluster import SimulatedCluster
from npa_sop_tui.sandbox.fake_kube_objects import make_login_service


@pytest.mark.terraform
@pytest.mark.slow
async def test_gpu_deploy_reads_the_login_service(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    result = await lifecycle.deploy(make_spec("svc"), options=sandbox_options(), on_event=recorder)
    assert result.outputs == {}  # the stand-in has the real root module's outputs: none
    assert result.status == "ready"
    assert result.validation is not None and result.validation["status"] == "passed"
    notes = [e.text for e in recorder.kinds("log_line") if e.stream == "npa"]
    assert "login node 127.0.0.1 (from soperator-login-svc), simulated" in notes
    waits = [n for n in notes if n.startswith("apply waits for ")]  # said live, with deadlines
    # the slurm-cluster release's wait first; after it, the Available and active-checks
    # waits run side by side, as in the recipe, so either may be said first
    assert len(waits) == 3 and "slurm-cluster" in waits[0], waits
    assert any("SlurmCluster soperator to be Available: up to 60 min" in w for w in waits[1:])
    assert [c["pool"] for c in result.gpu_creation_checks] == ["gpu"]


@pytest.mark.terraform
@pytest.mark.slow
async def test_no_service_address_and_no_config_names_what_to_set(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pending_lb(self: SimulatedCluster, key: str | None, deleting: bool) -> None:
        if not deleting:  # the LoadBalancer never got its address
            self.kube.upsert("services", make_login_service(None))

    monkeypatch.setattr(SimulatedCluster, "_login_script_lb_service_ip", pending_lb)
    with pytest.raises(DeploymentDegraded) as caught:
        await lifecycle.deploy(make_spec("nosvc"), options=sandbox_options(), on_event=recorder)
    result = caught.value.result
    assert result.status == "degraded-validation"
    message = result.validation["message"]
    assert "soperator/soperator-login-svc (kube context nebius-nosvc-slurm) has no external IP" in (
        message
    )
    assert "set login.host in the npa config" in message and "--login-host" in message
    recovery = [e for e in recorder.kinds("repair") if e.repair == "worker-recovery"]
    assert recovery[0].result == "failed" and "--login-host" in recovery[0].message
