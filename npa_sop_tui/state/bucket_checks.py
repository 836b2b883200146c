"""What this machine learned about a state bucket, kept in the home: whether it honours
conditional writes (probed once), and when npa last switched its versioning on.

`<npa home>/state-buckets/<bucket>-<endpoint hash>.json` (0600), one file a bucket and
endpoint: `{"conditional_writes": "enforced" | "ignored", "probed_at": …,
"versioning_changed_at": …}`.

- **Conditional writes.** The team lock (bucket_lock.py) and Terraform's lock file rest on
  them (conditional.py). `state init` probes a bucket it sets up; a bucket written into the
  config by hand is probed the first time an operation takes its lock (`ensure_conditional_
  writes`), and the verdict is kept, so later operations neither probe again nor run on a
  store that ignores the conditions (refused, exit 2, as `state init` refuses it).
- **Versioning.** Nebius applies a versioning change within up to 15 minutes and advises
  against writing objects before then. For `VERSIONING_SETTLES` seconds after npa switched it
  on, `state init` keeps saying so, and no probe object is written: the probe waits, and an
  operation that needs the verdict meanwhile is refused with the time to come back.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import OperationError
from npa_sop_tui.state.bucket import Bucket
from npa_sop_tui.state.conditional import ConditionalWritesIgnored, probe_conditional_writes

VERSIONING_SETTLES = 15 * 60.0  # Nebius: a versioning change applies within 15 minutes
RECORDS = "state-buckets"
_LIMIT = 64 * 1024


def record_path(bucket: Bucket) -> Path:
    from npa_sop_tui.home.paths import npa_home

    endpoint = str(bucket.location.endpoint or "")
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:12]
    return npa_home() / RECORDS / f"{bucket.name}-{digest}.json"


def read_record(bucket: Bucket) -> dict[str, Any]:
    """The bucket's record ({} when there is none, or one npa could not have written)."""
    from npa_sop_tui.home.files import read_trusted

    raw = read_trusted(record_path(bucket), limit=_LIMIT)
    try:
        doc = json.loads(raw) if raw is not None else {}
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def remember(bucket: Bucket, **fields: Any) -> None:
    from npa_sop_tui.home.fsutil import atomic_write_text

    doc = {**read_record(bucket), "bucket": bucket.name,
           "endpoint": bucket.location.endpoint, **fields}  # fmt: skip
    atomic_write_text(record_path(bucket), json.dumps(doc, indent=2) + "\n", mode=0o600)


def versioning_settles_at(bucket: Bucket, now: float | None = None) -> float | None:
    """When a versioning change npa made is applied for sure (None: none is pending)."""
    changed = read_record(bucket).get("versioning_changed_at")
    if not isinstance(changed, int | float):
        return None
    settles = float(changed) + VERSIONING_SETTLES
    return settles if settles > (time.time() if now is None else now) else None


def clock_text(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def _refused(bucket: Bucket, probed_at: Any) -> ConditionalWritesIgnored:
    when = f" (checked {clock_text(probed_at)})" if isinstance(probed_at, int | float) else ""
    return ConditionalWritesIgnored(
        f"the state bucket {bucket.where()} at {bucket.location.endpoint} does not honour "
        f"conditional writes{when}, so two people could hold the same cluster lock: npa "
        "refuses it for team state",
        hint="use Nebius Object Storage (or another S3 store that enforces If-None-Match and "
        "If-Match on PUT), or keep state local (state.backend: local); once the store is "
        "fixed, `npa soperator state init --bucket " + bucket.name + "` checks it again",
    )


def settling_note(settles: float) -> str:
    """The caveat while a versioning change applies (shown until `settles`)."""
    return (
        f"Versioning was switched on at {clock_text(settles - VERSIONING_SETTLES)}; Nebius "
        f"applies the change within up to 15 minutes (here by {clock_text(settles)}), so "
        "objects written before then may keep no earlier versions. npa writes no test object "
        "until then: conditional writes are checked by the first operation after that."
    )


def probe_and_remember(bucket: Bucket, *, now: Callable[[], float] = time.time) -> None:
    """Probe conditional writes now and keep the verdict (`ConditionalWritesIgnored` when
    they are not enforced)."""
    try:
        probe_conditional_writes(bucket, str(bucket.location.prefix))
    except ConditionalWritesIgnored:
        remember(bucket, conditional_writes="ignored", probed_at=now())
        raise  # what the probe saw, this first time
    remember(bucket, conditional_writes="enforced", probed_at=now())


def ensure_conditional_writes(bucket: Bucket, *, now: Callable[[], float] = time.time) -> None:
    """Refuse a bucket that ignores conditional writes, probing it the first time (the
    verdict kept in the home)."""
    record = read_record(bucket)
    verdict = record.get("conditional_writes")
    if verdict == "enforced":
        return
    if verdict == "ignored":
        raise _refused(bucket, record.get("probed_at"))
    settles = versioning_settles_at(bucket, now())
    if settles is not None:
        raise OperationError(
            f"the state bucket {bucket.where()} has not been checked for conditional writes "
            f"yet, and npa writes no test object into it until its versioning change has "
            f"applied (Nebius takes up to 15 minutes; here until {clock_text(settles)})",
            hint=f"run the operation again after {clock_text(settles)}",
        )
    probe_and_remember(bucket, now=now)
