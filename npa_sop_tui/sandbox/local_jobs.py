"""Sandbox jobs really run: each is a local process on this machine, started in its own
session so it outlives the command that submitted it (`run --detach`, Ctrl-C).

A job's folder (`<cluster dir>/sandbox-jobs/<id>/`) holds `job.json` (what was asked, the
process), `output.log`, and the marks the job's wrapper leaves as it goes: `started`, then
`exit` (its exit status); `cancelled` is left by `cancel`, `timeout` when --time ran out.
The state is read from those files, so every process (CLI, app, SDK) sees the same job:
PENDING until the wrapper starts the command (a short pause, as the scheduler takes its
turn), RUNNING, then COMPLETED / FAILED / CANCELLED / TIMEOUT. A job with `--nodes N` runs
its command once per simulated node, with the SLURM_* variables a real job step sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.jobs.model import JobInfo, JobRequest, OnOutput, OnState
from npa_sop_tui.sandbox.job_environment import job_environment
from npa_sop_tui.status.slurm_ops import check_job

FOLDER = "sandbox-jobs"
PENDING_SECONDS = 0.2  # how long a job waits for the simulated scheduler
POLL_SECONDS = 0.05
USER = "root"

WRAPPER = r"""
cd "$NPA_JOB_FOLDER" || exit 97
sleep "$NPA_PENDING"
date +%Y-%m-%dT%H:%M:%S > started.tmp && mv started.tmp started
(
  cd "${NPA_WORKDIR:-$HOME}" 2>/dev/null || cd "$NPA_JOB_FOLDER"
  pids=
  i=0
  for node in $NPA_NODES; do
    SLURMD_NODENAME=$node SLURM_NODEID=$i SLURM_PROCID=$i \
      $NPA_LIMIT bash "$NPA_JOB_FOLDER/command.sh" &
    pids="$pids $!"
    i=$((i + 1))
  done
  rc=0
  for pid in $pids; do wait "$pid"; r=$?; [ "$r" -gt "$rc" ] && rc=$r; done
  exit "$rc"
) >> "$NPA_JOB_FOLDER/output.log" 2>&1 < /dev/null
rc=$?
[ -n "$NPA_LIMIT" ] && [ "$rc" = 124 ] && : > timeout
printf '%s\n' "$rc" > exit.tmp && mv exit.tmp exit
"""


def jobs_root(cluster: str) -> Path:
    from npa_sop_tui.home.paths import cluster_dir

    return cluster_dir(cluster) / FOLDER


def _seconds(limit: str) -> int:
    """A Slurm time limit in seconds (minutes, MM:SS, HH:MM:SS, D-HH[:MM[:SS]])."""
    days, _, rest = limit.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:
        parts += [0] * (3 - len(parts))
        h, m, s = parts
        return int(days) * 86400 + h * 3600 + m * 60 + s
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


class LocalJobs:
    """The job backend of a sandbox cluster (jobs/backend.py's protocol)."""

    sandbox = True

    def __init__(self, cluster: str, nodes: Callable[[], list[tuple[str, int]]]) -> None:
        self.cluster = cluster
        self.nodes = nodes  # (name, GPUs) of the simulated nodes that take jobs
        self.root = jobs_root(cluster)

    # -- submitting --------------------------------------------------------------------

    async def submit(
        self, request: JobRequest, *, pool: str | None = None, attached: bool = False
    ) -> JobInfo:
        """A local job; `attached` changes nothing here (no scheduler to bypass)."""
        from npa_sop_tui.home.fsutil import ensure_dir
        from npa_sop_tui.jobs.script import job_name

        request = request.checked()
        nodes = self.nodes()
        if pool:
            nodes = [n for n in nodes if n[0].startswith(f"{pool}-")]
            if not nodes:
                raise UsageError(f"no Slurm nodes of pool {pool!r}")
        wanted = request.nodes or (len(nodes) if request.all_nodes else 1)
        if wanted > len(nodes):
            raise UsageError(
                "Slurm refused the job: Requested node configuration is not available "
                f"({wanted} nodes asked, {len(nodes)} in the sandbox cluster)"
            )
        chosen = nodes[:wanted]
        gpus = request.gpus_per_node
        if gpus is None:
            gpus = min(g for _, g in chosen) if request.auto_gpus else 0
        job_id = self._next_id()
        folder = ensure_dir(self.root / job_id)
        body = request.command if request.command is not None else request.script or ""
        env = {
            **request.env,
            "SLURM_JOB_ID": job_id,
            "SLURM_JOB_NAME": job_name(request) or "sbatch",
            "SLURM_JOB_NUM_NODES": str(wanted),
            "SLURM_JOB_NODELIST": ",".join(n for n, _ in chosen),
        }
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(gpus))
            env["SLURM_GPUS_ON_NODE"] = str(gpus)
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        (folder / "command.sh").write_text(f"{exports}{body}\n", encoding="utf-8")
        (folder / "output.log").touch(mode=0o600)
        info = JobInfo(
            id=job_id,
            name=job_name(request) or request.script_name,
            output_path=str(folder / "output.log"),
            submitted=time.strftime("%Y-%m-%dT%H:%M:%S"),
            nodes=",".join(n for n, _ in chosen),
            sandbox=True,
        )
        # from an allow-list: the caller's cloud tokens and keys never reach a job
        launch_env = job_environment(
            {
                "NPA_JOB_FOLDER": str(folder),
                "NPA_PENDING": str(PENDING_SECONDS),
                "NPA_NODES": " ".join(n for n, _ in chosen),
                "NPA_WORKDIR": request.workdir or "",
                "NPA_LIMIT": f"timeout {_seconds(request.time)}" if request.time else "",
            }
        )
        # A double fork: the job's process is nobody's child here, so no zombie is left
        # behind in a long-lived app, and it outlives this command.
        launcher = subprocess.run(
            [
                "bash",
                "-c",
                f"setsid bash -c {shlex.quote(WRAPPER)} </dev/null >/dev/null 2>&1 & echo $!",
            ],
            env=launch_env,
            capture_output=True,
            text=True,
            check=True,
        )
        meta = {**info.to_json(), "pid": int(launcher.stdout.split()[0]), "time": request.time}
        (folder / "job.json").write_text(json.dumps(meta), encoding="utf-8")
        return info

    def _next_id(self) -> str:
        from npa_sop_tui.home.fsutil import ensure_dir

        ensure_dir(self.root)
        taken = [int(p.name) for p in self.root.iterdir() if p.name.isdigit()]
        number = max(taken, default=0) + 1
        while True:  # mkdir is the claim: two submitters never get the same ID
            try:
                (self.root / str(number)).mkdir(mode=0o700)
                return str(number)
            except FileExistsError:
                number += 1

    # -- reading -----------------------------------------------------------------------

    def info(self, job_id: str) -> JobInfo:
        folder = self.root / check_job(job_id)
        try:
            meta = json.loads((folder / "job.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise UsageError(
                f"the sandbox cluster has no job {job_id}",
                hint="`npa soperator jobs --name <cluster> --sandbox` lists them",
            ) from None
        info = JobInfo(
            id=job_id,
            name=meta.get("job_name"),
            output_path=meta.get("output_path"),
            nodes=meta.get("nodes"),
            submitted=meta.get("submitted"),
            sandbox=True,
        )
        started = _read(folder / "started")
        info.started = started or None
        exit_text = _read(folder / "exit")
        if (folder / "cancelled").exists():
            info.state, info.ended = "CANCELLED", _read(folder / "cancelled") or None
        elif exit_text.strip().isdigit():
            info.exit_code = int(exit_text)
            info.ended = _mtime(folder / "exit")
            if (folder / "timeout").exists():
                info.state, info.exit_code = "TIMEOUT", None
            else:
                info.state = "COMPLETED" if info.exit_code == 0 else "FAILED"
                info.reason = "NonZeroExitCode" if info.exit_code else None
        elif not _alive(meta.get("pid")):
            info.state, info.reason = "FAILED", "the job's process ended without an exit status"
        elif started:
            info.state = "RUNNING"
        else:
            info.state, info.reason = "PENDING", "Priority"
        return info

    def all(self) -> list[JobInfo]:
        if not self.root.is_dir():
            return []
        ids = sorted((p.name for p in self.root.iterdir() if p.name.isdigit()), key=int)
        found = []
        for job_id in ids:
            try:
                found.append(self.info(job_id))
            except UsageError:
                continue  # being submitted right now
        return found

    async def follow(
        self,
        job: JobInfo,
        *,
        offset: int = 0,
        on_output: OnOutput,
        on_state: OnState | None = None,
        once: bool = False,
    ) -> JobInfo:
        last = None
        while True:
            current = self.info(job.id)
            offset = _pump(Path(current.output_path or ""), offset, on_output)
            seen = (current.state, current.reason)
            if seen != last:
                last = seen
                job.__dict__.update(current.__dict__)
                if on_state is not None:
                    on_state(job)
            if current.done or once:
                break
            await asyncio.sleep(POLL_SECONDS)
        _pump(Path(job.output_path or ""), offset, on_output)
        return job

    async def cancel(self, job_id: str) -> None:
        info = self.info(job_id)
        if info.done:
            raise UsageError(
                f"no queued or running job {job_id}",
                hint="`npa soperator jobs --name <cluster> --sandbox` lists them",
            )
        folder = self.root / job_id
        (folder / "cancelled").write_text(time.strftime("%Y-%m-%dT%H:%M:%S"))
        meta = json.loads((folder / "job.json").read_text(encoding="utf-8"))
        _kill_session(int(meta.get("pid") or 0))

    async def aclose(self) -> None:
        return None


def _kill_session(sid: int) -> None:
    """SIGTERM to every process of the job's session (`timeout` makes a process group of
    its own, so the job's group alone would miss the command)."""
    if sid <= 1:
        return
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and fields[3] == str(sid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGTERM)


def _pump(path: Path, offset: int, on_output: OnOutput) -> int:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            while chunk := f.read(65536):
                on_output(chunk)
                offset += len(chunk)
    except OSError:
        pass
    return offset


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return ""


def _mtime(path: Path) -> str | None:
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(path.stat().st_mtime))
    except OSError:
        return None


def _alive(pid: Any) -> bool:
    from npa_sop_tui.home.locks import process_alive

    if not process_alive(pid):
        return False
    try:  # a zombie (exited, not yet reaped) is not running
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
