"""A pytest plugin for runs where everything is installed (scripts/test.sh sets
NPA_NO_SKIPS, so CI does): a skipped test is reported as failed, with the skip's reason.
There a skip can only mean a part that was never tested (a tmpfs that would not mount, a
substrate that is not running, a dependency that did not import), and a green run must
not hide it. Expected failures (xfail) are left alone."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

ENV = "NPA_NO_SKIPS"
# Read once at import: the suite's isolation fixture strips NPA_* from each test's
# environment, and the report of a test's call is made while that fixture is active.
NO_SKIPS = bool(os.environ.get(ENV))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if NO_SKIPS and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped under {ENV} (in CI a skip means not tested): {reason}"
