"""Where the cluster's login node is: the one resolver every front door uses.

Order: `login.host` (config, or `--login-host` on the command line) > the external address of
the LoadBalancer Service `soperator-login-svc` (namespace `soperator`), read through the kube
context `nebius-<name>-slurm` > an `OperationError` that names what to set.

There is nothing else to read: the recipe's root module has no Terraform outputs
(nebius-solutions-library `soperator/` at 9a187732 and ecc5cec6); its login module's `ip`
output is not exported. The status watcher follows the Service continuously instead; `ssh`,
the operator actions, the post-deploy GPU gate, worker recovery and jobs read it once here.
Blocking (the official Kubernetes client): call it in a thread when an event loop runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from npa_sop_tui.errors import OperationError
from npa_sop_tui.status.kube import LOGIN_SERVICE
from npa_sop_tui.status.kube import NAMESPACE as LOGIN_NAMESPACE

if TYPE_CHECKING:
    from npa_sop_tui.status.watch_settings import StatusSettings

WHAT_TO_SET = (
    "set login.host in the npa config (login: {host: <address>}) or pass --login-host "
    "<address>; or wait until the login Service has its address (npa soperator status --watch)"
)
Source = Literal["flag", "config", "service"]


@dataclass(frozen=True)
class LoginAddress:
    host: str
    source: Source  # where it came from: the command line, the config, the login Service


def resolve_login_address(settings: StatusSettings) -> LoginAddress:
    """The login address for `settings` (a `StatusSettings`), or an `OperationError` naming
    `login.host` / `--login-host` when neither the settings nor the Service has one."""
    return login_address(
        cluster=settings.name,
        configured=settings.login_host,
        configured_source="flag" if settings.login_source == "flag" else "config",
        kubeconfig=settings.kubeconfig,
        context=settings.kube_context,
    )


def login_address(
    *,
    cluster: str,
    configured: str | None,
    configured_source: Source = "config",
    kubeconfig: Path | None,
    context: str,
) -> LoginAddress:
    """The same resolution from its parts (post-deploy has a kubeconfig and a context, not
    `StatusSettings`)."""
    from npa_sop_tui.status.ssh import check_login_host

    if configured:
        return LoginAddress(check_login_host(configured), configured_source)
    ip = service_address(kubeconfig, context)
    if not ip:
        raise OperationError(
            f"no login address for cluster {cluster!r}: login.host is not configured and "
            f"{LOGIN_NAMESPACE}/{LOGIN_SERVICE} (kube context {context}) has no external IP",
            hint=WHAT_TO_SET,
        )
    return LoginAddress(check_login_host(ip, source="the login Service's address"), "service")


def login_ip_once(settings: StatusSettings) -> str | None:
    """The login Service's external address for `settings`, or None while it has none."""
    return service_address(settings.kubeconfig, settings.kube_context)


def service_address(kubeconfig: Path | None, context: str) -> str | None:
    """`status.loadBalancer.ingress[].ip` (or hostname) of the login Service; None when the
    Service does not exist or has no address yet; `OperationError` when the cluster's API
    cannot be read (naming the context and what to set instead)."""
    try:
        from kubernetes import client, config
        from kubernetes.client.exceptions import ApiException

        api = config.new_client_from_config(
            config_file=str(kubeconfig) if kubeconfig else None, context=context
        )
        try:
            svc = client.CoreV1Api(api).read_namespaced_service(
                LOGIN_SERVICE, LOGIN_NAMESPACE, _request_timeout=(5, 15)
            )
        finally:
            api.close()
    except ApiException as exc:
        if exc.status == 404:
            return None
        raise OperationError(
            f"cannot read {LOGIN_NAMESPACE}/{LOGIN_SERVICE} through kube context {context}: "
            f"HTTP {exc.status}",
            hint=WHAT_TO_SET,
        ) from exc
    except Exception as exc:
        said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise OperationError(
            f"cannot read the login address through kube context {context}: {said}",
            hint=f"fix the kube context (--kubeconfig/--context), or {WHAT_TO_SET}",
        ) from exc
    # a broken API server may answer 200 with no object at all: no address, not a crash
    status = getattr(svc, "status", None)
    lb = getattr(status, "load_balancer", None)
    for ing in (lb.ingress if lb else None) or []:
        if ing.ip or ing.hostname:
            return str(ing.ip or ing.hostname)
    return None
