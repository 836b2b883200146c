"""Waiting for a versioning change to apply: bounded by the timeout, with progress (a bucket
whose S3 side reports a scripted sequence of states, on a fake clock)."""

from __future__ import annotations

from typing import Any

from npa_sop_tui.state.versioning_wait import wait_for_versioning


class Scripted:
    """Answers GetBucketVersioning with the next scripted status (the last one repeats)."""

    def __init__(self, *statuses: str) -> None:
        self.statuses = list(statuses)
        self.reads = 0

    def versioning(self) -> str:
        self.reads += 1
        return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]

    def where(self) -> str:
        return "s3://b"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _wait(bucket: Any, timeout: float, lines: list[str], clock: Clock) -> bool:
    return wait_for_versioning(
        bucket, timeout, lines.append, interval=5, clock=clock, sleep=clock.sleep
    )


def test_returns_once_s3_reports_enabled_and_says_how_long() -> None:
    clock, lines = Clock(), []
    bucket = Scripted("Suspended", "", "Enabled")
    assert _wait(bucket, 60, lines, clock)
    assert bucket.reads == 3 and clock.now == 10
    assert lines[0] == (
        "waiting for Nebius to apply versioning on s3://b: S3 reports Suspended after 0s "
        "(up to 60s)"
    )
    assert "S3 reports never set after 5s" in lines[1]
    assert lines[-1] == "versioning of s3://b is in effect (after 10s)"


def test_already_enabled_is_silent() -> None:
    clock, lines = Clock(), []
    assert _wait(Scripted("Enabled"), 60, lines, clock)
    assert lines == [] and clock.now == 0


def test_never_waits_past_the_timeout() -> None:
    clock, lines = Clock(), []
    bucket = Scripted("Suspended")
    assert not _wait(bucket, 12, lines, clock)
    assert clock.now == 12  # the last sleep is cut to what is left
    assert bucket.reads == 4  # at 0, 5, 10 and a last look at 12
