"""What `terraform apply` waits on in the recipe's `modules/slurm/main.tf`, and, while a
deploy runs on this machine, until when each wait holds it.

Three waits hold an apply after the Helm/Flux releases are installed (nebius-solutions-library
`soperator/modules/slurm/main.tf`: `terraform_data.wait_for_slurm_cluster_hr`,
`wait_for_slurm_cluster_available`, `wait_for_soperator_activechecks_hr`):
1. the slurm-cluster Flux HelmRelease `flux-system-soperator-fluxcd-slurm-cluster`, 60 min;
2. SlurmCluster `soperator` phase `Available` (`kubectl wait`), 1 h;
3. the activechecks Flux HelmRelease `flux-system-soperator-fluxcd-soperator-activechecks`,
   whose post-install hook is the `wait-for-active-checks` Job, 240 min.
The stand-in recipe's resources for the same steps are listed beside the real addresses.

A wait's deadline counts from when Terraform started that resource, which only the deploy
itself sees: its operation log (the inventory's running deploy record names it) has a
`resource_started` event with the time. Status reads that log — only when the deploy runs
on this machine (its process is alive here and its log is here); otherwise it knows no start
time and shows no deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from npa_sop_tui.status.model import ApplyWaitDeadline


@dataclass(frozen=True)
class ApplyWait:
    what: str
    minutes: int
    addresses: tuple[str, ...]  # the real recipe's, then the stand-in's


WAITS = (
    ApplyWait(
        "the slurm-cluster Flux HelmRelease (flux-system-soperator-fluxcd-slurm-cluster)",
        60,
        (
            "module.slurm.terraform_data.wait_for_slurm_cluster_hr",
            "module.slurm.null_resource.release_slurm_cluster",
        ),
    ),
    ApplyWait(
        "SlurmCluster soperator to be Available",
        60,
        (
            "module.slurm.terraform_data.wait_for_slurm_cluster_available",
            "module.slurm.null_resource.wait_for_slurm_cluster",
        ),
    ),
    ApplyWait(
        "the activechecks Flux HelmRelease (flux-system-soperator-fluxcd-soperator-activechecks;"
        " its wait-for-active-checks hook waits on the checks that run after creation)",
        240,
        (
            "module.slurm.terraform_data.wait_for_soperator_activechecks_hr",
            "module.slurm.null_resource.release_activechecks",
        ),
    ),
)
_ADDRESSES = tuple(a.encode() for w in WAITS for a in w.addresses)
_FINISHED = b'"kind": "operation_finished"'  # EventLog writes json.dumps' default separators
RECHECK_SECONDS = 10.0  # how often the inventory is asked whether a deploy runs


def wait_for(address: str) -> ApplyWait | None:
    return next((w for w in WAITS if address in w.addresses), None)


def utc_clock(ts: float) -> str:
    return time.strftime("%H:%M UTC", time.gmtime(ts))


@dataclass
class ApplyWaitTracker:
    """Follows the running deploy's operation log of one cluster, reading only what was
    appended since the last call; `update()` returns the waits in progress."""

    name: str
    _operation: str | None = None
    _log: Path | None = None
    _offset: int = 0
    _running: dict[str, ApplyWaitDeadline] = field(default_factory=dict)
    _checked: float = float("-inf")
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def update(self, now: float | None = None) -> list[ApplyWaitDeadline]:
        with self._lock:  # the watcher calls it from worker threads
            return self._update(time.monotonic() if now is None else now)

    def _update(self, now: float) -> list[ApplyWaitDeadline]:
        if now - self._checked >= RECHECK_SECONDS:
            self._checked = now
            self._follow(_running_deploy(self.name))
        if self._log is None:
            return []
        self._read_new()
        return sorted(self._running.values(), key=lambda w: w.started_at)

    def _follow(self, running: tuple[str, Path] | None) -> None:
        operation, log = running if running is not None else (None, None)
        if operation != self._operation:
            self._operation, self._log, self._offset = operation, log, 0
            self._running.clear()

    def _read_new(self) -> None:
        assert self._log is not None and self._operation is not None
        try:
            with self._log.open("rb") as f:
                f.seek(self._offset)
                chunk = f.read()
        except OSError:
            return
        end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next call
        self._offset += end
        for line in chunk[:end].splitlines():
            if _FINISHED in line:  # the deploy is over: it waits on nothing any more
                self._running.clear()
            elif any(address in line for address in _ADDRESSES):
                self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            event = json.loads(line)
            kind, address = event["kind"], event["addr"]
        except (ValueError, KeyError, TypeError):
            return
        wait = wait_for(address) if isinstance(address, str) else None
        if wait is None:
            return
        if kind == "resource_started" and isinstance(event.get("ts"), int | float):
            started = float(event["ts"])
            self._running[address] = ApplyWaitDeadline(
                what=wait.what,
                address=address,
                minutes=wait.minutes,
                started_at=started,
                gives_up_at=started + wait.minutes * 60,
                operation_id=self._operation or "",
            )
        elif kind in ("resource_finished", "resource_failed"):
            self._running.pop(address, None)


def _running_deploy(name: str) -> tuple[str, Path] | None:
    """(operation id, its log) of a deploy of `name` running on this machine, else None."""
    from npa_sop_tui.home import inventory

    try:
        entry = inventory.get(name)
    except Exception:  # a damaged record is reported by `list`; status goes on without it
        return None
    last = entry.last_operation if entry is not None else None
    log = last.log_file if last is not None else None
    if last is None or last.kind != "deploy" or last.result != "running" or log is None:
        return None
    if last.pid is None or not _alive(last.pid) or not log.is_file():
        return None  # run elsewhere (a team's bucket), or killed: no start time known here
    return last.id, log


def _alive(pid: int) -> bool:
    with contextlib.suppress(PermissionError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
    return True
