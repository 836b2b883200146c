"""The lowest cloud dependency versions pyproject.toml allows really work: they are installed
into a throw-away folder (`pip install --target`, from the warm pip cache) that goes first on
PYTHONPATH, and the SDK-client and bucket tests run against them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLOORED = ("nebius", "boto3", "botocore")
TESTS = ["tests/cloud/test_cloud_client.py", "tests/state/test_state_bucket.py"]


def floors() -> dict[str, str]:
    """name → lowest version allowed by the `>=` of its line in [project].dependencies."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    found: dict[str, str] = {}
    for line in deps:
        match = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*>=\s*([0-9][^,;\s]*)", line)
        if match and match.group(1).lower() in FLOORED:
            found[match.group(1).lower()] = match.group(2)
    return found


def _release(version: str) -> tuple[int, ...]:
    """`1.36` and `1.36.0` alike (plain release numbers, as the floors are)."""
    parts = [int(p) for p in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def test_every_floored_dependency_has_a_floor() -> None:
    assert set(floors()) == set(FLOORED)


@pytest.mark.slow
def test_lowest_cloud_dependencies_pass_the_cloud_and_state_tests(tmp_path: Path) -> None:
    target = tmp_path / "floor"
    pins = floors()
    pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
           "--target", str(target)]  # fmt: skip
    # boto3/botocore with their own small dependencies (s3transfer, jmespath …) at the
    # versions those floors ask for; nebius alone (its gRPC/protobuf needs are in the venv).
    for args in (
        [f"boto3=={pins['boto3']}", f"botocore=={pins['botocore']}"],
        ["--no-deps", f"nebius=={pins['nebius']}"],
    ):
        done = subprocess.run([*pip, *args], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO)])}
    probe = "import boto3, botocore, nebius.sdk; print(botocore.__version__, boto3.__version__)"
    seen = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, check=True).stdout.split()  # fmt: skip
    assert [_release(v) for v in seen] == [_release(pins["botocore"]), _release(pins["boto3"])]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider",
         *TESTS],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
