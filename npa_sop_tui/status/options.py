"""`StatusSettings` for one cluster from the resolved settings: the same for every front door.

The login node, SSH user and key and the refresh interval come from `Settings` (flags >
environment > config > defaults); the kube context from the inventory record, else the
recipe's naming rule. Front doors pass what only they know (a kubeconfig flag, a disabled
collector) as overrides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from npa_sop_tui.home.settings import Settings
from npa_sop_tui.status.watch_settings import StatusSettings


def _where(settings: Settings, key: str, flag: str) -> str:
    source = settings.source(key)
    return flag if source == "flag" else f"{key} ({source})"


def status_settings(name: str, settings: Settings, **overrides: Any) -> StatusSettings:
    from npa_sop_tui.status.ssh import check_login_host, check_login_user

    host = settings["login.host"]
    if host:  # a value starting with "-" would be an ssh option: refuse it, naming its source
        host = check_login_host(str(host), source=_where(settings, "login.host", "--login-host"))
    user = check_login_user(
        str(settings["login.user"]), source=_where(settings, "login.user", "--login-user")
    )
    key = settings["ssh_private_key_path"]
    values: dict[str, Any] = {
        "name": name,
        "context": _inventory_context(name),
        "login_host": host or None,
        "login_port": int(settings["login.port"]),
        "login_user": user,
        "login_source": ("flag" if settings.source("login.host") == "flag" else "config")
        if host
        else "none",
        "identity_file": Path(str(key)).expanduser() if key else None,
        "slurm_interval": settings.status_interval,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return StatusSettings(**values)


def _inventory_context(name: str) -> str | None:
    """The context recorded at deploy time, if this cluster is in the inventory."""
    from npa_sop_tui.errors import NpaError
    from npa_sop_tui.home import inventory

    try:
        entry = inventory.get(name)
    except NpaError:  # a damaged record is reported by `list`; fall back to the naming rule
        return None
    return entry.kube_context if entry is not None and entry.kube_context else None
