"""What a status watch is told (`StatusSettings`: which cluster, how to reach Kubernetes and
the login node, how often to poll) and what it reads from the inventory for its verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from npa_sop_tui.home.config import DEFAULT_STATUS_INTERVAL
from npa_sop_tui.spec.model import kube_context
from npa_sop_tui.status.verdict_context import HintPolicy, VerdictContext


class StatusSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    context: str | None = None  # default nebius-<name>-slurm
    kubeconfig: Path | None = None
    kube_enabled: bool = True
    login_host: str | None = None  # None: the login Service's address
    login_port: int = 22
    login_user: str = "root"
    login_source: Literal["flag", "config", "service", "none"] = "none"
    identity_file: Path | None = None
    known_hosts: Path | None = None  # default npa_home()/known_hosts
    slurm_enabled: bool = True
    slurm_format: Literal["auto", "json", "delimited"] = "auto"
    slurm_interval: float = Field(default=DEFAULT_STATUS_INTERVAL, gt=0)
    kube_coalesce: float = Field(default=0.5, ge=0)  # merge bursts of watch events
    watch_timeout: int = Field(default=60, ge=1)
    ssh_backoff_max: float = Field(default=30.0, gt=0)
    command_timeout: float = Field(default=30.0, gt=0)
    terraform_dir: Path | None = None

    @property
    def kube_context(self) -> str:
        return self.context or kube_context(self.name)


def last_validation(name: str) -> dict[str, object] | None:
    """The last deploy's GPU creation check result from the inventory (None if none)."""
    from npa_sop_tui.home import inventory

    try:
        entry = inventory.get(name)
    except Exception:  # a damaged record is reported by `list`; status goes on without it
        return None
    return entry.validation if entry is not None else None


def verdict_context_for(
    settings: StatusSettings, hint_policy: HintPolicy | None = None
) -> VerdictContext:
    """The inventory's record of the cluster (state, last operation), with the environment's
    way of wording hints."""
    from npa_sop_tui.home import inventory

    try:
        entry = inventory.get(settings.name)
    except Exception:  # a damaged inventory must not stop status: it reports that itself
        entry = None
    last = entry.last_operation if entry is not None else None
    return VerdictContext(
        state=entry.state if entry is not None else None,
        last_operation=last.kind if last is not None else None,
        last_message=(last.summary if last is not None else "")[:200],
        hint_policy=hint_policy,
    )
