"""`npa soperator ARGS` with the npa home mounted read-only, in a private mount namespace
(the machine's mounts are untouched; root ignores file modes, so modes cannot show this)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

NPA = Path(sys.executable).parent / "npa"
_SCRIPT = """
set -e
mount --bind "$NPA_HOME" "$NPA_HOME"
mount -o remount,bind,ro "$NPA_HOME"
shift
exec "$@"
"""


def on_read_only_home(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "NPA_HOME": str(home),
        "NPA_TENANT_ID": "tenant-e00aaaaaaaaaaaaaaaa",
        "NPA_PROJECT_ID": "project-e00aaaaaaaaaaaaaaaa",
        "NPA_SUBNET_ID": "vpcsubnet-e00aaaaaaaaaaaaaaaa",
    }
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", _SCRIPT, "sh", "-", str(NPA), "soperator", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def read_only_mounts_work(home: Path) -> bool:
    """Whether this machine lets a test mount the home read-only (root and `unshare -m`)."""
    return shutil.which("unshare") is not None and on_read_only_home(home, "--help").returncode == 0
