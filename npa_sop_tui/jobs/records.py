"""Which jobs npa submitted to a cluster: `<cluster dir>/jobs.json`, newest last.

`logs` finds a job's output here (its path on the login node), `jobs` marks npa's jobs and
shows their output path, and a finished job keeps its last known state and exit code after
Slurm has forgotten it (MinJobAge). Writers hold an flock, so two `run`s at once both land.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from npa_sop_tui.jobs.model import JobInfo

FILE = "jobs.json"
KEEP = 500  # records kept per cluster; older ones are dropped on the next write
FIELDS = tuple(JobInfo.__dataclass_fields__)


def records_path(cluster: str) -> Path:
    from npa_sop_tui.home.paths import cluster_dir

    return cluster_dir(cluster) / FILE


def _read(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return (
        [r for r in data if isinstance(r, dict) and r.get("id")] if isinstance(data, list) else []
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    from npa_sop_tui.home.files import open_private

    fd = open_private(path.parent / f".{FILE}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _info(record: dict[str, Any]) -> JobInfo:
    return JobInfo(**{k: v for k, v in record.items() if k in FIELDS})


def save(cluster: str, job: JobInfo, **extra: Any) -> None:
    """Add or update `job` (matched by ID) with `extra` fields such as the command."""
    from npa_sop_tui.home.fsutil import atomic_write_text

    path = records_path(cluster)
    with _locked(path):
        records = _read(path)
        record = next((r for r in records if r["id"] == job.id), None)
        if record is None:
            record = {"recorded": time.strftime("%Y-%m-%dT%H:%M:%S")}
            records.append(record)
        record.update({k: getattr(job, k) for k in FIELDS}, **extra)
        atomic_write_text(path, json.dumps(records[-KEEP:], indent=1), mode=0o600)


def find(cluster: str, job_id: str) -> JobInfo | None:
    record = next((r for r in _read(records_path(cluster)) if r["id"] == job_id), None)
    return _info(record) if record else None


def none_yet(cluster: str) -> bool:
    """Whether npa has submitted no job to `cluster` yet (reads the file: call it in a
    worker from the app)."""
    return not _read(records_path(cluster))


def load(cluster: str) -> list[dict[str, Any]]:
    """Every record of `cluster`, oldest first (JobInfo fields plus command, recorded)."""
    return _read(records_path(cluster))


def job_info(record: dict[str, Any]) -> JobInfo:
    return _info(record)


def with_queue(cluster: str, queue: list[Any], *, limit: int = 20) -> list[JobInfo]:
    """The newest `limit` jobs npa submitted to `cluster`, their state taken from `queue`
    (status/jobs.SlurmJob rows) while Slurm still lists them."""
    live = {job.id: job for job in queue}
    shown: list[JobInfo] = []
    for record in load(cluster)[-limit:]:
        info = _info(record)
        queued = live.get(info.id)
        if queued is not None:
            info.state, info.reason = queued.state, queued.reason
            info.nodes = queued.nodelist or info.nodes
        shown.append(info)
    return shown
