"""Parse `squeue` into `SlurmJob`s: `squeue --json` (v0.0.38 and the newer number objects)
or the delimited table `squeue -h -a -o '%i|%j|%u|%T|%M|%D|%R|%b|%P|%l'`.

`squeue --json` ignores -w/-u/-t filters (filter in Python) and, on 22.05, lists jobs that
finished within MinJobAge; `active_jobs` keeps only those still queued or running.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from npa_sop_tui.status.jobs import SlurmJob
from npa_sop_tui.status.slurm import SinfoParseError, _num
from npa_sop_tui.status.slurm_versions import json_option

DELIM_FIELDS = "%i|%j|%u|%T|%M|%D|%R|%b|%P|%l"
JOBS_DELIMITED_CMD = f"squeue -h -a -o '{DELIM_FIELDS}'"
ACTIVE_STATES = frozenset(
    {"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED", "RESIZING"}
)


def jobs_json_command(release: str | None) -> str:
    """`squeue -a --json=v0.0.44` where the release ships that format, else `--json`."""
    return f"squeue -a {json_option(release)}"


def parse_squeue_delimited(text: str) -> list[SlurmJob]:
    jobs: list[SlurmJob] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) < 10:
            raise SinfoParseError(f"squeue line {lineno}: expected 10 fields, got {len(parts)}")
        # the job name (%j) may contain the separator: it is field 2 of 10, so take the
        # fixed fields from both ends
        tail = parts[-8:]
        name = "|".join(parts[1 : len(parts) - 8])
        job_id = parts[0].strip()
        user, state, elapsed, count, where, gres, partition, limit = tail
        running = state.strip() in ("RUNNING", "COMPLETING")
        jobs.append(
            SlurmJob(
                id=job_id,
                name=name,
                user=user.strip(),
                state=state.strip(),
                partition=partition.strip() or None,
                nodes=_num(count.strip()),
                nodelist=where.strip() if running else None,
                # a waiting job shows its reason in parentheses: `(Resources)`
                reason=None
                if running
                else where.strip().removeprefix("(").removesuffix(")") or None,
                elapsed=elapsed.strip() or None,
                time_limit=limit.strip() or None,
                gres=_none(gres),
            )
        )
    return jobs


def parse_squeue_json(text: str) -> list[SlurmJob]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SinfoParseError(f"squeue --json printed invalid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), list):
        raise SinfoParseError("squeue --json has no `jobs` list")
    return [_job(j) for j in doc["jobs"] if isinstance(j, Mapping)]


def _job(j: Mapping[str, Any]) -> SlurmJob:
    state = j.get("job_state")
    if isinstance(state, list):  # v0.0.40+: ["RUNNING", "COMPLETING"]
        state = state[0] if state else "UNKNOWN"
    state = str(state or "UNKNOWN")
    running = state in ("RUNNING", "COMPLETING")
    array_task = _num(j.get("array_task_id"))
    job_id = str(_num(j.get("job_id")) or j.get("job_id"))
    if array_task is not None and _num(j.get("array_job_id")):
        job_id = f"{_num(j.get('array_job_id'))}_{array_task}"
    reason = str(j.get("state_reason") or "") or None
    limit = _num(j.get("time_limit"))
    gres = j.get("tres_per_node") or j.get("gres_detail") or None
    if isinstance(gres, list):
        gres = ",".join(str(g) for g in gres) or None
    return SlurmJob(
        id=job_id,
        name=str(j.get("name") or ""),
        user=str(j.get("user_name") or j.get("user_id") or ""),
        state=state,
        partition=str(j.get("partition") or "") or None,
        nodes=_num(j.get("node_count")),
        nodelist=str(j.get("nodes") or "") or None if running else None,
        reason=None if running or reason == "None" else reason,
        # no elapsed time: the JSON has start times, not Slurm's printed duration
        time_limit=f"{limit} min" if limit is not None else None,
        gres=_none(gres),
    )


def active_jobs(jobs: Iterable[SlurmJob]) -> list[SlurmJob]:
    return [j for j in jobs if j.state in ACTIVE_STATES]


def jobs_on(jobs: Iterable[SlurmJob], node: str) -> list[SlurmJob]:
    """Jobs running on `node` (exact name in a comma list; ranges like a-[1-3] expanded)."""
    from npa_sop_tui.status.hostlist import expand

    return [j for j in jobs if j.nodelist and node in expand(j.nodelist)]


def _none(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return None if text in ("", "N/A", "(null)", "None") else text
