"""The suite's own guards, run on throwaway test files in a child pytest: a hanging test
fails by timeout with its name, and under NPA_NO_SKIPS (CI) a skip fails the run; and the
shared substrate is held by one run's test at a time."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from testkit.substrate import LAB, Substrate

TESTS = Path(__file__).resolve().parent


def _pytest(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NPA_")}
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "testkit.ci_guards"),
            *("-q", "-rfEs", "--rootdir", str(folder), "-c", os.devnull, str(folder), *args),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, "PYTHONPATH": str(TESTS), **env},
        cwd=folder,
    )


def test_a_hanging_test_fails_by_timeout_with_its_name(tmp_path: Path) -> None:
    (tmp_path / "test_hang.py").write_text(
        "import time\n\ndef test_waits_forever():\n    while True:\n        time.sleep(0.1)\n\n"
        "def test_after_the_hang():\n    assert True\n"
    )
    done = _pytest(tmp_path, "--timeout=2", "--timeout-method=signal")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "FAILED test_hang.py::test_waits_forever" in out
    assert "Timeout" in out
    assert "1 failed, 1 passed" in out  # the run went on after the hang


def test_the_suite_sets_a_per_test_timeout() -> None:
    import tomllib

    config = tomllib.loads((TESTS.parent / "pyproject.toml").read_text())
    options = config["tool"]["pytest"]["ini_options"]
    assert 0 < int(options["timeout"]) <= 600
    assert options["timeout_method"] == "signal"


SKIPPING = """import pytest

def test_skipped_at_runtime():
    pytest.skip('tmpfs would not mount')

@pytest.mark.skipif(True, reason='not installed')
def test_skipped_by_marker():
    pass

@pytest.mark.xfail(reason='known', strict=True)
def test_expected_failure():
    assert False
"""


def test_under_no_skips_a_skip_fails_the_run_with_its_reason(tmp_path: Path) -> None:
    (tmp_path / "test_skips.py").write_text(SKIPPING)
    done = _pytest(tmp_path, NPA_NO_SKIPS="1")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    # a skip in setup (a marker) is reported as an error, one in the call as a failure
    assert "1 failed, 1 xfailed, 1 error" in out
    assert "tmpfs would not mount" in out and "not installed" in out


def test_without_no_skips_a_skip_stays_a_skip(tmp_path: Path) -> None:
    (tmp_path / "test_skips.py").write_text(SKIPPING)
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout
    assert "2 skipped, 1 xfailed" in done.stdout


def test_ci_runs_the_suite_with_no_skips() -> None:
    script = (TESTS.parent / "scripts" / "test.sh").read_text()
    assert "NPA_NO_SKIPS=1" in script


async def test_reading_an_endless_stream_fails_at_its_deadline() -> None:
    """`within` turns a status stream that never satisfies the test into a named failure."""
    import asyncio

    import pytest

    from testkit.wait import within

    async def forever() -> AsyncIterator[int]:
        n = 0
        while True:
            await asyncio.sleep(0.01)
            n += 1
            yield n

    seen: list[int] = []
    with pytest.raises(AssertionError, match=r"timed out after 0\.3s reading snapshots"):
        async for n in within(forever(), timeout=0.3, what="snapshots"):
            seen.append(n)
    assert seen  # items flowed until the deadline
    assert [n async for n in within(_three(), timeout=5)] == [1, 2, 3]


async def _three() -> AsyncIterator[int]:
    for n in (1, 2, 3):
        yield n


@pytest.mark.slurm
def test_a_substrate_test_holds_the_shared_substrate_against_another_run(
    substrate: Substrate,
) -> None:
    # What a second checkout's suite on the same machine does before a test of its own.
    with (LAB / ".tests.lock").open("a") as other_run, pytest.raises(BlockingIOError):
        fcntl.flock(other_run, fcntl.LOCK_EX | fcntl.LOCK_NB)
