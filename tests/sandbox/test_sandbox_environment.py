"""The sandbox environment on a home it cannot write: status still works."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.read_only_home import on_read_only_home, read_only_mounts_work
from testkit.sandbox_cli import deploy_in_sandbox

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: ro
workers:
  - name: cpu
    size: 1
"""


def test_status_of_a_sandbox_cluster_works_on_a_read_only_home(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Defect: `status --sandbox` failed on a read-only home (it wrote the fake API's
    kubeconfig there) although status is documented to work on one."""
    if not read_only_mounts_work(npa_home):
        pytest.skip("needs root and `unshare -m` to mount the home read-only")
    deploy_in_sandbox(SPEC, tmp_path, monkeypatch, capsys)
    before = sorted(p.relative_to(npa_home) for p in npa_home.rglob("*"))
    done = on_read_only_home(npa_home, "status", "--name", "ro", "--sandbox", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert "not writable" not in done.stderr and "Traceback" not in done.stderr
    assert '"name": "ro"' in done.stdout or '"name":"ro"' in done.stdout
    assert sorted(p.relative_to(npa_home) for p in npa_home.rglob("*")) == before
