"""The one login-address resolver: login.host > the login Service's LoadBalancer IP > an
error that names what to set."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.sandbox.fake_kube import FakeKubeServer
from npa_sop_tui.sandbox.fake_kube_objects import make_login_service
from npa_sop_tui.status.login_address import (
    WHAT_TO_SET,
    login_address,
    login_ip_once,
    resolve_login_address,
)
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
    with pytest.raises(UsageError) as caught:
        resolve_login_address(settings(kubeconfig))
    # the message says where the bad address came from (not the user's login host)
    assert str(caught.value) == (
        "the login Service's address '-oProxyCommand=x' is not a host name or IP address"
    )


def test_an_api_error_other_than_not_found_names_the_service_context_and_status(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    fake_kube.add("services", make_login_service("203.0.113.9"))
    fake_kube.fail_next("services", status=403)
    with pytest.raises(OperationError) as caught:
        resolve_login_address(settings(kubeconfig))
    assert str(caught.value) == (
        "cannot read soperator/soperator-login-svc through kube context nebius-demo-slurm: HTTP 403"
    )
    assert caught.value.hint == WHAT_TO_SET


def test_the_unreachable_api_hint_says_to_fix_the_context_or_set_the_host(tmp_path: Path) -> None:
    with pytest.raises(OperationError) as caught:
        resolve_login_address(settings(tmp_path / "missing-kubeconfig"))
    # the client's own first line says what is wrong (not just its exception's name)
    assert str(caught.value) == (
        "cannot read the login address through kube context nebius-demo-slurm: "
        "Invalid kube-config file. No configuration found."
    )
    assert caught.value.hint == f"fix the kube context (--kubeconfig/--context), or {WHAT_TO_SET}"


def test_what_to_set_names_the_config_key_the_flag_and_the_watch() -> None:
    assert WHAT_TO_SET == (
        "set login.host in the npa config (login: {host: <address>}) or pass --login-host "
        "<address>; or wait until the login Service has its address (npa soperator status --watch)"
    )


def test_the_first_ingress_with_an_address_counts_and_a_hostname_is_one(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    svc = make_login_service(None)
    svc["status"]["loadBalancer"]["ingress"] = [{}, {"hostname": "lb.example"}, {"ip": "1.2.3.4"}]
    fake_kube.add("services", svc)
    got = resolve_login_address(settings(kubeconfig))
    assert (got.host, got.source) == ("lb.example", "service")
    assert login_ip_once(settings(kubeconfig)) == "lb.example"


def test_login_ip_once_is_none_without_the_service(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    assert login_ip_once(settings(kubeconfig)) is None


def test_the_resolver_from_parts_calls_a_configured_host_config_unless_told(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    got = login_address(
        cluster="demo", configured="10.0.0.5", kubeconfig=kubeconfig, context="nebius-demo-slurm"
    )
    assert (got.host, got.source) == ("10.0.0.5", "config")
    with pytest.raises(OperationError, match="no login address for cluster 'other'"):
        login_address(
            cluster="other", configured="", kubeconfig=kubeconfig, context="nebius-demo-slurm"
        )


@pytest.mark.parametrize("status", [None, {}])
def test_a_service_without_a_status_or_load_balancer_has_no_address_yet(
    fake_kube: FakeKubeServer, kubeconfig: Path, status: dict[str, object] | None
) -> None:
    svc = make_login_service(None)
    if status is None:
        del svc["status"]
    else:
        svc["status"] = status
    fake_kube.add("services", svc)
    assert login_ip_once(settings(kubeconfig)) is None


def test_an_api_server_answering_no_object_gives_no_address_not_a_crash(
    fake_kube: FakeKubeServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken API server answering 200 with a `null` body: the client returns None, and
    the resolver says there is no address yet (a traceback before)."""
    from kubernetes import client

    monkeypatch.setattr(client.CoreV1Api, "read_namespaced_service", lambda *_a, **_k: None)
    assert login_ip_once(settings(kubeconfig)) is None


def test_the_service_read_is_bounded_so_a_stalled_api_server_cannot_hang_ssh_or_status(
    fake_kube: FakeKubeServer, kubeconfig: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ssh`, the operator actions and the GPU gate read the address once, blocking: without a
    bound a stalled API server would hang them. The connect waits at most 5 s and the answer
    at most 15 s (the read goes through to the real client and server)."""
    from kubernetes import client

    asked: list[object] = []
    real = client.CoreV1Api.read_namespaced_service

    def spy(self: client.CoreV1Api, *args: object, **kwargs: object) -> object:
        asked.append(kwargs.get("_request_timeout"))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(client.CoreV1Api, "read_namespaced_service", spy)
    fake_kube.add("services", make_login_service("203.0.113.9"))
    assert login_ip_once(settings(kubeconfig)) == "203.0.113.9"
    assert asked == [(5, 15)]


def test_a_client_error_without_a_message_is_named_by_its_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Some errors out of the client's transport carry no text (a bare `TimeoutError()`); the
    message then names the error's type rather than ending in an empty colon. No kubeconfig
    or server answer was found that makes the client raise one, so it is raised at the
    client's entry point."""
    from kubernetes import config

    def stalled(**_: object) -> object:
        raise TimeoutError()

    monkeypatch.setattr(config, "new_client_from_config", stalled)
    with pytest.raises(OperationError) as caught:
        resolve_login_address(settings(tmp_path / "kubeconfig"))
    assert str(caught.value) == (
        "cannot read the login address through kube context nebius-demo-slurm: TimeoutError"
    )
    assert caught.value.hint == f"fix the kube context (--kubeconfig/--context), or {WHAT_TO_SET}"


def test_without_a_kubeconfig_the_users_default_one_is_read(
    fake_kube: FakeKubeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `--kubeconfig`: the client's default (`~/.kube/config`) is read, as kubectl does,
    not a file named after nothing."""
    from kubernetes.config import kube_config

    monkeypatch.setenv("HOME", str(tmp_path))
    # KUBECONFIG is read once when the client is imported: pin the default it falls back to
    monkeypatch.setattr(kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", "~/.kube/config")
    (tmp_path / ".kube").mkdir()
    fake_kube.write_kubeconfig(tmp_path / ".kube" / "config", "nebius-demo-slurm")
    fake_kube.add("services", make_login_service("203.0.113.9"))
    got = login_address(
        cluster="demo", configured=None, kubeconfig=None, context="nebius-demo-slurm"
    )
    assert (got.host, got.source) == ("203.0.113.9", "service")


def test_an_ingress_with_both_an_ip_and_a_hostname_gives_the_ip(
    fake_kube: FakeKubeServer, kubeconfig: Path
) -> None:
    svc = make_login_service(None)
    svc["status"]["loadBalancer"]["ingress"] = [{"hostname": "lb.example", "ip": "203.0.113.7"}]
    fake_kube.add("services", svc)
    got = resolve_login_address(settings(kubeconfig))
    assert (got.host, got.source) == ("203.0.113.7", "service")
    assert login_ip_once(settings(kubeconfig)) == "203.0.113.7"
