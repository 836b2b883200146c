"""Does the bucket honour conditional writes? npa's cluster lock (bucket_lock.py) and
Terraform's S3 lock file (`use_lockfile`) both rest on two S3 preconditions:

- `If-None-Match: *` on a PUT: create only if absent (the second create is refused, 412);
- `If-Match: <ETag>` on a PUT: replace only that version (a stale ETag is refused, 412).

A store that ignores the headers lets two people hold the same lock. `state init` probes
the bucket once with a throw-away object under `<prefix>/.npa-probe/` and refuses the bucket
for team locking when either precondition is not enforced.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import TYPE_CHECKING

from npa_sop_tui.errors import UsageError
from npa_sop_tui.state.bucket import Bucket, ConditionFailed

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings


class ConditionalWritesIgnored(UsageError):
    """The bucket accepted a write its precondition should have refused."""


def probe_conditional_writes(bucket: Bucket, prefix: str) -> None:
    """Raise `ConditionalWritesIgnored` unless both preconditions are enforced."""
    key = f"{prefix}/.npa-probe/{secrets.token_hex(8)}"
    failures: list[str] = []
    try:
        current = bucket.put(key, b'{"probe": 1}', if_none_match=True)
        try:
            current = bucket.put(key, b'{"probe": 2}', if_none_match=True)
            failures.append("a second create-if-absent (If-None-Match: *) was accepted")
        except ConditionFailed:
            pass
        try:
            bucket.put(key, b'{"probe": 3}', if_match=current)
        except ConditionFailed:
            failures.append("a replace with the current ETag (If-Match) was refused")
        try:
            bucket.put(key, b'{"probe": 4}', if_match=f'"{secrets.token_hex(16)}"')
            failures.append("a replace with a stale ETag (If-Match) was accepted")
        except ConditionFailed:
            pass
    finally:
        with contextlib.suppress(Exception):  # the probe object is litter, never a failure
            bucket.delete(key)
    if failures:
        raise ConditionalWritesIgnored(
            f"the state bucket {bucket.where()} at {bucket.location.endpoint} does not honour "
            f"conditional writes ({'; '.join(failures)}), so two people could hold the same "
            "cluster lock: npa refuses it for team state",
            hint="use Nebius Object Storage (or another S3 store that enforces If-None-Match "
            "and If-Match on PUT), or keep state local (state.backend: local)",
        )


def named_bucket(name: str, settings: Settings) -> Bucket:
    """Bucket `name` where the settings say Object Storage is (state.endpoint, else the
    region's), with the access key the state store would use."""
    from npa_sop_tui.state.credentials import key_source
    from npa_sop_tui.state.location import StateLocation, default_endpoint

    region = settings["state.region"] or settings["region"]
    endpoint = settings["state.endpoint"] or (default_endpoint(region) if region else None)
    if not endpoint:
        raise UsageError(
            "cannot reach the bucket through S3: its region is not set",
            hint="set region (or state.region / NPA_STATE_REGION), or state.endpoint",
        )
    prefix = str(settings["state.prefix"] or "npa").strip("/")
    location = StateLocation(
        backend="s3", bucket=name, prefix=prefix, endpoint=endpoint.rstrip("/"),
        region=region or "eu-north1", keys=key_source(settings),
    )  # fmt: skip
    return Bucket(location)


def probe_bucket(name: str, settings: Settings) -> None:
    """Probe bucket `name` (see `named_bucket` for where and with which key)."""
    bucket = named_bucket(name, settings)
    probe_conditional_writes(bucket, str(bucket.location.prefix))
