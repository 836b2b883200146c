"""Terraform: finding a usable binary, and an async runner over the `-json` machine UI.

The runner turns Terraform's JSON lines into `events` models and keeps only counters and
bounded buffers, so a multi-hour apply does not grow memory. Cancelling the task that awaits
`TerraformRunner.run` interrupts Terraform the way a terminal Ctrl-C would: SIGINT to its
process group (Terraform 1.0 runs under panicwrap, so signalling only the PID we started is
ignored). A second cancel while Terraform shuts down kills the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
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

LOG_TAIL = 200
MAX_DIAGNOSTICS = 100
# Files Terraform creates (state, backups, saved plans, .terraform/) are private: 0600/0700.
STATE_UMASK = 0o077

# ---------------------------------------------------------------------------------------------
# Versions and discovery


log = logging.getLogger(__name__)


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.match(r"\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if not match:
        raise ValueError(f"not a version: {text!r}")
    major, minor, patch = (int(g) if g else 0 for g in match.groups())
    return major, minor, patch


def satisfies(version: str, constraint: str) -> bool:
    """Terraform's version-constraint syntax: `>= 1.0, < 2`, `~> 1.2`, `= 1.0.3`, `!= 1.1`."""
    have = parse_version(version)
    for part in (p.strip() for p in constraint.split(",")):
        if not part:
            continue
        match = re.match(r"(>=|<=|!=|~>|=|>|<)?\s*(.+)", part)
        assert match is not None  # the pattern matches any non-empty string
        op, raw = match.group(1) or "=", match.group(2).strip()
        want = parse_version(raw)
        if op == "~>":
            pieces = len(raw.lstrip("v").split("."))
            upper = (want[0] + 1, 0, 0) if pieces <= 2 else (want[0], want[1] + 1, 0)
            ok = want <= have < upper
        else:
            ok = {
                "=": have == want,
                "!=": have != want,
                ">": have > want,
                ">=": have >= want,
                "<": have < want,
                "<=": have <= want,
            }[op]
        if not ok:
            return False
    return True


def required_version(recipe_example_dir: Path) -> str | None:
    """The `required_version` constraint of a recipe installation (terraform.tf or any .tf)."""
    candidates = [recipe_example_dir / "terraform.tf", *sorted(recipe_example_dir.glob("*.tf"))]
    for path in candidates:
        if not path.is_file():
            continue
        match = re.search(r'required_version\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"))
        if match:
            return match.group(1)
    return None


@dataclass(frozen=True)
class TerraformBinary:
    path: str
    version: str
    source: str  # where it was found: env, config, PATH, explicit


def _probe_version(path: str) -> str:
    env = clean_env({})
    try:
        done = subprocess.run(
            [path, "version", "-json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise UsageError(
            f"cannot run Terraform at {path}: {exc.strerror}",
            hint="configure terraform_bin to a working terraform binary",
        ) from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"{path} version -json did not answer within 60 s") from None
    try:
        return str(json.loads(done.stdout)["terraform_version"])
    except (ValueError, KeyError, TypeError):
        # Terraform before 0.13 has no -json for `version`; its first line is "Terraform vX.Y.Z".
        match = re.search(r"Terraform v(\d+\.\d+\.\d+)", done.stdout)
        if match:
            return match.group(1)
    raise UsageError(f"{path} does not look like Terraform (`version -json` gave no version)")


def find_terraform(
    *,
    required: str | None = None,
    configured: str | None = None,
    source: str = "settings",
) -> TerraformBinary:
    """The Terraform to use: the configured binary (`source` says where it was set), else PATH.

    Raises `UsageError` naming what the recipe needs when none is found or it is too old.
    """
    need = f"the recipe requires Terraform {required}" if required else "Terraform is required"
    if configured:
        path = shutil.which(configured) if os.sep not in configured else configured
        if not path or not os.access(path, os.X_OK) or not os.path.isfile(path):
            raise UsageError(
                f"Terraform binary from {source} not found or not executable: {configured}",
                hint=f"{need}; fix {source} or unset it to use terraform from PATH",
            )
        return _checked(path, source, required, need)
    found = shutil.which("terraform")
    if not found:
        raise UsageError(
            "no terraform binary found (none configured, none on PATH)",
            hint=f"{need}; install it or configure terraform_bin",
        )
    return _checked(found, "PATH", required, need)


def _checked(path: str, source: str, required: str | None, need: str) -> TerraformBinary:
    version = _probe_version(path)
    if required and not satisfies(version, required):
        raise UsageError(
            f"Terraform {version} at {path} (from {source}) is too old or not allowed: {need}",
            hint="install a matching Terraform and configure terraform_bin to it",
        )
    return TerraformBinary(path=path, version=version, source=source)


def clean_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment Terraform runs with: ours, never a broken inherited CLI config."""
    env = dict(os.environ)
    cli_config = env.get("TF_CLI_CONFIG_FILE")
    if cli_config and not Path(cli_config).is_file():
        del env["TF_CLI_CONFIG_FILE"]  # a dangling path makes every init fail
    env.update(CHECKPOINT_DISABLE="1", TF_IN_AUTOMATION="1", TF_INPUT="0")
    env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------
# The runner


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


@dataclass
class RunResult:
    """What one Terraform command did; bounded whatever the length of the run."""

    args: list[str]
    returncode: int
    duration: float
    interrupted: bool = False
    killed: bool = False
    change_summary: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    resources_started: int = 0
    resources_finished: int = 0
    failed: list[str] = field(default_factory=list)
    errors: list[Diagnostic] = field(default_factory=list)
    log_tail: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_TAIL))

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.interrupted

    def error_text(self) -> str:
        if self.errors:
            return "; ".join(d.summary + (f": {d.detail}" if d.detail else "") for d in self.errors)
        block = first_error_block(self.log_tail)
        if block:
            return block
        return "\n".join(list(self.log_tail)[-5:]) or f"terraform exited with {self.returncode}"


def first_error_block(lines: Sequence[str] | deque[str]) -> str:
    """The whole first `Error: …` block of Terraform's plain output (up to the next block),
    so a failed `init` shows its cause rather than the tail of the last message."""
    out: list[str] = []
    for line in lines:
        text = line.strip("│ ").rstrip() if line.startswith("│") else line.rstrip()
        starts = text.lstrip("╷╵ ").startswith("Error:")
        if starts and out:
            break
        if (starts or out) and text.strip("╷╵ "):
            out.append(text.strip("╷╵"))
    return "\n".join(out)


class TerraformRunner:
    """Runs one Terraform command at a time for one operation, emitting events."""

    def __init__(
        self,
        binary: str,
        *,
        operation_id: str,
        on_event: Callable[[Event], None],
        env: Mapping[str, str] | None = None,
        text_filter: Callable[[str], str] = lambda s: s,
    ) -> None:
        self.binary = binary
        self.operation_id = operation_id
        self._emit = on_event
        self._env = clean_env(env or {})
        self._filter = text_filter
        self._in_flight: dict[str, float] = {}

    async def run(self, args: Sequence[str], *, cwd: Path, json_ui: bool = True) -> RunResult:
        """Run `terraform <args>` in `cwd`; cancel the awaiting task to interrupt it."""
        started = time.monotonic()
        result = RunResult(args=list(args), returncode=-1, duration=0.0)
        log.debug("terraform %s (in %s)", " ".join(args), cwd)
        proc = await asyncio.create_subprocess_exec(
            self.binary,
            *args,
            cwd=str(cwd),
            env=self._env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            # Terraform's state, backups and plans can hold secrets (reservation IDs,
            # passwords, cluster credentials): whatever it creates is for this user only.
            umask=STATE_UMASK,
            limit=16 * 1024 * 1024,  # a show -json line can be large
        )
        assert proc.stdout is not None and proc.stderr is not None
        out_task = asyncio.create_task(self._pump_stdout(proc.stdout, result, json_ui))
        err_task = asyncio.create_task(self._pump_stderr(proc.stderr, result))
        pumps = asyncio.gather(out_task, err_task)
        try:
            await asyncio.shield(pumps)
            result.returncode = await proc.wait()
        except asyncio.CancelledError:
            await self._interrupt(proc, pumps, result)
            raise
        finally:
            result.duration = time.monotonic() - started
            self._in_flight.clear()
            log.debug(
                "terraform %s: exit %s after %.1fs%s",
                args[0] if args else "",
                result.returncode,
                result.duration,
                " (interrupted)" if result.interrupted else "",
            )
        return result

    async def capture(self, args: Sequence[str], *, cwd: Path) -> tuple[int, str, str]:
        """Run a short command whose stdout we need whole (show -json, state list, output)."""
        proc = await asyncio.create_subprocess_exec(
            self.binary,
            *args,
            cwd=str(cwd),
            env=self._env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            umask=STATE_UMASK,
        )
        try:
            out, err = await proc.communicate()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise
        return proc.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace")

    async def _interrupt(
        self, proc: asyncio.subprocess.Process, pumps: asyncio.Future[Any], result: RunResult
    ) -> None:
        result.interrupted = True
        self._log("npa", "interrupt: asking Terraform to stop gracefully (SIGINT)")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        try:
            await asyncio.shield(pumps)
            result.returncode = await proc.wait()
        except asyncio.CancelledError:
            result.killed = True
            self._emit(
                Diagnostic(
                    operation_id=self.operation_id,
                    severity="warning",
                    summary="Terraform was killed before it could stop cleanly",
                    detail=(
                        "A second interrupt forced Terraform to stop. Resources that were being "
                        "changed may be missing from state or locked; run `terraform state list` "
                        "in the installation folder and deploy again to converge, or repair "
                        "state by hand."
                    ),
                )
            )
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            # The kill is immediate; this wait cannot hang, so it is safe to finish it.
            with contextlib.suppress(asyncio.CancelledError):
                result.returncode = await asyncio.shield(proc.wait())
                await asyncio.shield(pumps)
            # Providers started by Terraform share the group, but a stray one may linger.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

    def _log(self, stream: str, text: str) -> None:
        self._emit(LogLine(operation_id=self.operation_id, stream=stream, text=text))  # type: ignore[arg-type]

    async def _pump_stderr(self, stream: asyncio.StreamReader, result: RunResult) -> None:
        async for raw in stream:
            line = self._filter(raw.decode(errors="replace").rstrip())
            if line:
                result.log_tail.append(line)
                self._log("stderr", line)

    async def _pump_stdout(
        self, stream: asyncio.StreamReader, result: RunResult, json_ui: bool
    ) -> None:
        async for raw in stream:
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            message: Any = None
            if json_ui and line.startswith("{"):
                with contextlib.suppress(ValueError):
                    message = json.loads(line)
            if isinstance(message, dict):
                self._handle(message, result)
            else:
                text = self._filter(line)
                result.log_tail.append(text)
                self._log("stdout", text)

    def _handle(self, msg: dict[str, Any], result: RunResult) -> None:
        kind = msg.get("type")
        hook = msg.get("hook") or {}
        resource = hook.get("resource") or {}
        addr = str(resource.get("addr", ""))
        action = _ACTIONS.get(str(hook.get("action", "")), "unknown")
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
        elif kind == "diagnostic":
            diag = msg.get("diagnostic") or {}
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
