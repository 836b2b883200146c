"""The one login-address resolver: login.host > the login Service's LoadBalancer IP > an
error that names what to set."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer, make_login_service
from npa_sop_tui.status.login_address import resolve_login_address
from npa_sop_tui.status.watch import StatusSettings


def settings(kubeconfig: Path, **extra: object) -> StatusSettings:
    return StatusSettings(name="demo", kubeconfig=kubeconfig, **extra)  # type: ignore[arg-type]


def test_configured_host_wins_over_the_service(fake_kube: FakeKubeServer, kubeconfig: Path) -> None:
    fake_kube.add("services", make_login_service("203.0.113.9"))
    got = resolve_login_address(settings(kubeconfig, login_host="10.1.2.3", login_source="flag"))
    assert (got.host, got.source) == ("10.1.2.3", "flag")
    got = resolve_login_address(
        settings(kubeconfig, login_host="login.example", login_source="config")
    )
    assert (got.host, got.source) == ("login.example", "config")


def test_service_address_through_the_kube_context(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    fake_kube.add("services", make_login_service("203.0.113.9"))
    got = resolve_login_address(settings(kubeconfig))
    assert (got.host, got.source) == ("203.0.113.9", "service")


@pytest.mark.parametrize("service", [None, "pending"])
def test_neither_names_what_to_set(
    fake_kube: FakeKubeServer, kubeconfig: Path, service: str | None
) -> None:
    if service:
        fake_kube.add("services", make_login_service(None))
    with pytest.raises(OperationError) as caught:
        resolve_login_address(settings(kubeconfig))
    assert "no login address for cluster 'demo'" in str(caught.value)
    assert "nebius-demo-slurm" in str(caught.value)
    assert "login.host" in (caught.value.hint or "") and "--login-host" in (caught.value.hint or "")


def test_unreachable_api_says_which_context(tmp_path: Path) -> None:
    with pytest.raises(OperationError) as caught:
        resolve_login_address(settings(tmp_path / "missing-kubeconfig"))
    assert "kube context nebius-demo-slurm" in str(caught.value)
    assert "--login-host" in (caught.value.hint or "")


def test_a_service_address_that_is_an_option_is_refused(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    svc = make_login_service(None)
    svc["status"]["loadBalancer"]["ingress"] = [{"hostname": "-oProxyCommand=x"}]
    fake_kube.add("services", svc)
    with pytest.raises(UsageError, match="the login Service's address"):
        resolve_login_address(settings(kubeconfig))
