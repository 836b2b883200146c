"""The login node's address from its LoadBalancer Service, read once (for `ssh` and the
operator actions; the status watcher follows it continuously instead)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from npa_sop_tui.errors import OperationError

if TYPE_CHECKING:
    from npa_sop_tui.status.watch import StatusSettings


def login_ip_once(settings: StatusSettings) -> str | None:
    """The login Service's external address, read once (blocking: call it in a thread when
    an event loop runs). None while it has none; `OperationError` when it cannot be read."""
    from npa_sop_tui.status.kube import LOGIN_SERVICE, NAMESPACE

    try:
        from kubernetes import client, config
        from kubernetes.client.exceptions import ApiException

        api = config.new_client_from_config(
            config_file=str(settings.kubeconfig) if settings.kubeconfig else None,
            context=settings.kube_context,
        )
        svc = client.CoreV1Api(api).read_namespaced_service(
            LOGIN_SERVICE, NAMESPACE, _request_timeout=(5, 15)
        )
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise OperationError(f"cannot read {LOGIN_SERVICE}: HTTP {exc.status}") from exc
    except Exception as exc:
        raise OperationError(
            f"cannot read the login address from kube context {settings.kube_context}: "
            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
            hint="pass --login-host, or fix the kube context (--kubeconfig/--context)",
        ) from exc
    for ing in (
        svc.status.load_balancer.ingress if svc.status and svc.status.load_balancer else None
    ) or []:
        if ing.ip or ing.hostname:
            return str(ing.ip or ing.hostname)
    return None
