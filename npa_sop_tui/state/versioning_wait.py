"""`state init`: wait until a versioning change really applies to the bucket.

Nebius documents that turning versioning on for an existing bucket can take up to 15 minutes
to apply; writes before then may keep no earlier versions. The storage API's Update returns
when the change is accepted, so npa asks the S3 side itself (GetBucketVersioning) until it
reads "Enabled", bounded by the cloud timeout, and says how long it has been waiting.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from npa_sop_tui.state.bucket import Bucket

INTERVAL = 5.0  # seconds between reads: the change takes minutes, not milliseconds


def wait_for_versioning(
    bucket: Bucket,
    timeout: float,
    progress: Callable[[str], None],
    *,
    interval: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> bool:
    """True once S3 reports versioning Enabled; False when `timeout` seconds ran out first."""
    started = clock()
    while True:
        status = bucket.versioning()
        waited = clock() - started
        if status == "Enabled":
            if waited > 0.5:
                progress(f"versioning of {bucket.where()} is in effect (after {waited:.0f}s)")
            return True
        left = timeout - waited
        if left <= 0:
            return False
        progress(
            f"waiting for Nebius to apply versioning on {bucket.where()}: "
            f"S3 reports {status or 'never set'} after {waited:.0f}s (up to {timeout:g}s)"
        )
        sleep(min(interval or INTERVAL, left))
