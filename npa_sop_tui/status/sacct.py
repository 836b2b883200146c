"""Parse `sacct` into a `JobHistory`: `sacct --json` or `sacct -P -n -X -o …` (pipe table).

Without accounting storage `sacct` refuses ("Slurm accounting storage is disabled", rc 1
on most setups): that is a history that is not available, with the reason, not an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from npa_sop_tui.status.jobs import JobHistory, SlurmJob
from npa_sop_tui.status.slurm import SinfoParseError, _num

FIELDS = (
    "JobID",
    "JobName",
    "User",
    "State",
    "Partition",
    "NNodes",
    "NodeList",
    "Elapsed",
    "Start",
    "End",
    "ExitCode",
)
HISTORY_DELIMITED_CMD = f"sacct -a -P -n -X -S now-7days -o {','.join(FIELDS)}"
ACCOUNTING_OFF = ("accounting storage is disabled", "slurmdbd", "accounting_storage/none")


def accounting_off(output: str) -> bool:
    text = output.lower()
    return any(marker in text for marker in ACCOUNTING_OFF)


def parse_sacct_delimited(text: str) -> JobHistory:
    if accounting_off(text):
        return JobHistory(available=False, note=text.strip().splitlines()[0])
    jobs: list[SlurmJob] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split("|")
        if len(parts) != len(FIELDS):
            raise SinfoParseError(f"sacct line {lineno}: expected {len(FIELDS)} fields")
        row = dict(zip(FIELDS, parts, strict=True))
        jobs.append(
            SlurmJob(
                id=row["JobID"],
                name=row["JobName"],
                user=row["User"],
                state=row["State"].split(" ")[0],  # "CANCELLED by 1000" → CANCELLED
                partition=row["Partition"] or None,
                nodes=_num(row["NNodes"]),
                nodelist=row["NodeList"] if row["NodeList"] not in ("", "None assigned") else None,
                elapsed=row["Elapsed"] or None,
                start=row["Start"] or None,
                end=row["End"] or None,
                exit_code=row["ExitCode"] or None,
            )
        )
    return JobHistory(available=True, jobs=jobs)


def parse_sacct_json(text: str) -> JobHistory:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SinfoParseError(f"sacct --json printed invalid JSON: {exc}") from exc
    jobs = [_job(j) for j in (doc.get("jobs") or []) if isinstance(j, Mapping)]
    return JobHistory(available=True, jobs=jobs)


def _job(j: Mapping[str, Any]) -> SlurmJob:
    state = j.get("state") or {}
    current = state.get("current") if isinstance(state, Mapping) else state
    if isinstance(current, list):
        current = current[0] if current else "UNKNOWN"
    times = j.get("time") or {}
    exit_code = j.get("exit_code") or {}
    code = _num(exit_code.get("return_code")) if isinstance(exit_code, Mapping) else None
    elapsed = _num(times.get("elapsed")) if isinstance(times, Mapping) else None
    return SlurmJob(
        id=str(_num(j.get("job_id")) or j.get("job_id")),
        name=str(j.get("name") or ""),
        user=str(j.get("user") or ""),
        state=str(current or "UNKNOWN"),
        partition=str(j.get("partition") or "") or None,
        nodelist=str(j.get("nodes") or "") or None,
        elapsed=f"{elapsed}s" if elapsed is not None else None,
        exit_code=f"{code}" if code is not None else None,
    )
