"""Terraform's machine-readable UI (`-json`) read into npa's events: resource starts,
progress, completions and failures per top-level module, diagnostics (bounded), the change
summary, outputs, and the state Terraform printed when it could not save it (the supervisor
keeps it). `TerraformRunner` (runner.py) feeds it every JSON line of stdout."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from npa_sop_tui.events import (
    Diagnostic,
    Event,
    LogLine,
    ResourceAction,
    ResourceFailed,
    ResourceFinished,
    ResourceProgress,
    ResourceStarted,
)
from npa_sop_tui.terraform.standin_addresses import real_address

if TYPE_CHECKING:
    from npa_sop_tui.terraform.run_result import RunResult

MAX_DIAGNOSTICS = 100
NO_SPACE = "no space left on device"

_ACTIONS: dict[str, ResourceAction] = {
    "create": "create",
    "update": "update",
    "replace": "replace",
    "delete": "delete",
    "read": "read",
    "noop": "noop",
}


def top_module(addr: str) -> str:
    """`module.k8s.module.x.null_resource.a` → `module.k8s`; root resources → `root`."""
    parts = addr.split(".")
    if len(parts) >= 2 and parts[0] == "module":
        return f"module.{parts[1].split('[')[0]}"
    return "root"


class JsonUiReading:
    """`TerraformRunner`'s handling of one JSON UI message; the runner provides the state
    named here."""

    operation_id: str
    _emit: Callable[[Event], None]
    _filter: Callable[[str], str]
    _in_flight: dict[str, float]
    _created: set[str]

    def _log(self, stream: str, text: str) -> None:
        self._emit(LogLine(operation_id=self.operation_id, stream=stream, text=text))  # type: ignore[arg-type]

    def _handle(self, msg: dict[str, Any], result: RunResult) -> None:
        kind = msg.get("type")
        hook = msg.get("hook") or {}
        resource = hook.get("resource") or {}
        # a stand-in's resources are named after the real ones: say the real address; its
        # in-place part is no resource of its own (terraform/standin_addresses.py)
        addr, in_place = real_address(str(resource.get("addr", "")))
        action = _ACTIONS.get(str(hook.get("action", "")), "unknown")
        if not in_place and action == "create" and kind == "apply_start":
            self._created.add(addr)
        if in_place:
            # Terraform replaces it as a delete then a create: the delete says nothing; the
            # create is the update it stands for, unless the resource itself is new
            if action == "delete" or addr in self._created:
                return
            action = "update"
        module = top_module(addr) if addr else "root"
        oid = self.operation_id
        if kind == "apply_start":
            self._in_flight[addr] = time.monotonic()
            result.resources_started += 1
            self._emit(ResourceStarted(operation_id=oid, addr=addr, module=module, action=action))
        elif kind == "apply_progress":
            self._emit(
                ResourceProgress(
                    operation_id=oid,
                    addr=addr,
                    module=module,
                    action=action,
                    elapsed=float(hook.get("elapsed_seconds", 0)),
                    message=self._filter(str(msg.get("@message", ""))),
                )
            )
        elif kind == "apply_complete":
            began = self._in_flight.pop(addr, None)
            result.resources_finished += 1
            self._emit(
                ResourceFinished(
                    operation_id=oid,
                    addr=addr,
                    module=module,
                    action=action,
                    elapsed=float(
                        hook.get("elapsed_seconds", time.monotonic() - began if began else 0)
                    ),
                )
            )
        elif kind == "apply_errored":
            self._in_flight.pop(addr, None)
            if len(result.failed) < MAX_DIAGNOSTICS:
                result.failed.append(addr)
            self._emit(
                ResourceFailed(
                    operation_id=oid,
                    addr=addr,
                    module=module,
                    action=action,
                    elapsed=float(hook.get("elapsed_seconds", 0)),
                    message=self._filter(str(msg.get("@message", ""))),
                )
            )
        elif kind == "provision_progress":
            output = self._filter(str(hook.get("output", "")))
            if output:
                self._log("terraform", f"{addr}: {output}")
        elif kind == "npa_errored_state":
            self._errored_state(msg, result)
        elif kind == "diagnostic":
            diag = msg.get("diagnostic") or {}
            if NO_SPACE in str(diag.get("detail", "")) + str(diag.get("summary", "")):
                result.no_space = True
            severity = {"error": "error", "warning": "warning"}.get(
                str(diag.get("severity")), "info"
            )
            event = Diagnostic(
                operation_id=oid,
                severity=severity,  # type: ignore[arg-type]
                summary=self._filter(str(diag.get("summary", ""))),
                detail=self._filter(str(diag.get("detail", ""))),
                address=diag.get("address"),
                range=diag.get("range"),
            )
            if severity == "error" and len(result.errors) < MAX_DIAGNOSTICS:
                result.errors.append(event)
            self._emit(event)
        elif kind == "change_summary":
            changes = msg.get("changes") or {}
            summary: dict[str, Any] = {
                k: int(changes.get(k, 0)) for k in ("add", "change", "remove")
            }
            summary["operation"] = changes.get("operation", "")
            result.change_summary = summary
        elif kind == "outputs":
            # Kept, not emitted: after a targeted apply they are partial; the lifecycle
            # reports the final outputs once.
            result.outputs = {k: v.get("value") for k, v in (msg.get("outputs") or {}).items()}
        elif kind in ("log", "refresh_start", "refresh_complete"):
            text = self._filter(str(msg.get("@message", "")))
            if kind == "log" and text:
                result.log_tail.append(text)
                self._log("terraform", text)
        # version, planned_change, provision_start/complete/errored, resource_drift:
        # planned changes come from `show -json` on the saved plan; the rest repeats apply_*.

    def _errored_state(self, msg: dict[str, Any], result: RunResult) -> None:
        """Terraform could not write its state and printed it; the supervisor saved it."""
        path = msg.get("path")
        oid = self.operation_id
        if path:
            result.errored_state = str(path)
            detail = (
                f"npa saved the state Terraform printed to {path} (0600, {msg.get('bytes')} "
                "bytes). Nothing is lost: free disk space, then run the same command again; "
                "npa pushes that state back into Terraform (`terraform state push`) before "
                "anything else."
            )
        else:
            # Nowhere on disk took it: name what Terraform created, so nothing is untracked.
            state = msg.get("state") or {}
            created = _state_resources(state)
            detail = (
                "npa could not save the state Terraform printed anywhere ("
                + "; ".join(str(e) for e in msg.get("errors") or [])
                + "). Resources in it: "
                + (", ".join(created) or "none")
                + ". Free disk space and run `terraform import` for each, or restore state."
            )
        event = Diagnostic(
            operation_id=oid,
            severity="error",
            summary="Terraform could not save its state (kept by npa)",
            detail=self._filter(detail),
        )
        if len(result.errors) < MAX_DIAGNOSTICS:
            result.errors.insert(0, event)
        self._emit(event)


def _state_resources(state: dict[str, Any]) -> list[str]:
    """`address (id)` of every resource instance in a raw state document."""
    found: list[str] = []
    for res in state.get("resources") or []:
        prefix = f"{res['module']}." if res.get("module") else ""
        base = f"{prefix}{res.get('type')}.{res.get('name')}"
        for inst in res.get("instances") or []:
            key = inst.get("index_key")
            addr = real_address(base if key is None else f"{base}[{json.dumps(key)}]")[0]
            found.append(f"{addr} ({(inst.get('attributes') or {}).get('id', '?')})")
    return found
