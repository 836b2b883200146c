"""A small disk of its own for a test, and filling it up: a real "no space left on device",
never a simulated one (a pytest plugin: tests/conftest.py loads it).

A full disk needs a filesystem of its own: a tmpfs of a few MiB. As root a test mounts one
where it asks. Without root the kernel still allows a tmpfs inside a user namespace of one's
own, so the test runs again in a child pytest under `unshare --user --map-root-user --mount`,
where it is root of its own mount namespace, and the outer test takes the child's result:
passed, failed (with the child's report) or skipped (with its reason). Where unprivileged
user namespaces are refused (a kernel or AppArmor setting), the test is skipped and says so;
under NPA_NO_SKIPS (CI) that skip fails, with the same reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit.ci_guards import ENV as NO_SKIPS_ENV
from testkit.ci_guards import NO_SKIPS

# the folder a test left for its run in a user namespace
IN_NAMESPACE = pytest.StashKey[Path]()
# set once a test's body runs: too late to run it again in a user namespace
IN_BODY = pytest.StashKey[bool]()
CHILD_TIMEOUT = 280  # seconds: inside the outer test's own 300


@contextlib.contextmanager
def tmpfs(
    request: pytest.FixtureRequest, where: Path, *, size: str = "8m", mode: str | None = None
) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `where` (created) for the test. Without root, the test is
    run again in a user namespace (see the module) and `where` stays an empty folder here."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        if request.node.stash.get(IN_BODY, False):  # else fill() would fill the real disk
            pytest.fail("a tmpfs comes from a fixture (tiny_disk): a test body cannot be re-run")
        request.node.stash[IN_NAMESPACE] = where
        yield where
        return
    options = f"size={size}" + (f",mode={mode}" if mode else "")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def tiny_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """An 8 MiB tmpfs of the test's own (as root, or else in a user namespace)."""
    with tmpfs(request, tmp_path / "tiny") as mount:
        yield mount


def fill(disk: Path) -> None:
    """Take every free byte of `disk` (unbuffered: no write is left pending); the disk is
    full when a write fails with ENOSPC, and only then."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    finally:
        os.close(fd)


def _namespace_refused() -> str | None:
    """Why this machine gives no user namespace with a mount namespace (None: it does)."""
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--mount", "true"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        return f"unprivileged user namespaces are refused here: {probe.stderr.strip()}"
    return None


def _rerun_in_namespace(item: pytest.Function, work: Path) -> None:
    refused = _namespace_refused()
    if refused is not None:
        pytest.skip(
            f"a full disk needs a tmpfs: mounting one needs root or a user namespace, and {refused}"
        )
    report = work / "report.xml"
    env = dict(os.environ)
    if NO_SKIPS:
        env[NO_SKIPS_ENV] = "1"  # a skip inside fails inside, as it would here
    child = subprocess.run(
        [
            "unshare",
            "--user",
            "--map-root-user",
            "--mount",
            sys.executable,
            "-m",
            "pytest",
            item.nodeid,
            "-p",
            "no:cacheprovider",
            "-q",
            f"--basetemp={work / 'tmp'}",
            f"--junitxml={report}",
            f"--timeout={CHILD_TIMEOUT}",
        ],
        cwd=item.config.rootpath,
        env=env,
        capture_output=True,
        text=True,
    )
    said = (child.stdout + child.stderr)[-6000:]
    suite = ET.parse(report).getroot().find("testsuite") if report.exists() else None
    if suite is None:
        pytest.fail(
            f"the run in a user namespace gave no result (exit {child.returncode}):\n{said}"
        )
    case = suite.find("testcase")
    skipped = case.find("skipped") if case is not None else None
    if child.returncode == 0 and skipped is not None:
        pytest.skip(f"in a user namespace: {skipped.get('message', '')}")
    if child.returncode != 0 or case is None:
        pytest.fail(f"in a user namespace (unprivileged, a tmpfs of its own):\n{said}")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test whose tmpfs could not be mounted here runs in a user namespace instead."""
    work = pyfuncitem.stash.get(IN_NAMESPACE, None)
    if work is None:
        pyfuncitem.stash[IN_BODY] = True
        return None
    _rerun_in_namespace(pyfuncitem, work)
    return True
