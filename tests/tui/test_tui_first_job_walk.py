"""A newcomer's first job, walked in a real terminal: tmux at 80×24 runs `npa-sop --sandbox`
from a fresh working folder and home, and the walk types what a person would — a new
cluster through the wizard, its plan, apply, READY, then the first job the dashboard
offers — counting every key. Done when the job's own output is on screen: at most 25 keys
and 5 minutes. (tmux is installed by scripts/test.sh, as on CI.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.terraform, pytest.mark.tui]

MAX_KEYS = 25
MAX_SECONDS = 300
NPA_SOP = Path(sys.executable).with_name("npa-sop")


class Walk:
    """One tmux session and the keys typed into it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.keys: list[str] = []

    def press(self, *keys: str) -> None:
        for key in keys:
            subprocess.run(["tmux", "send-keys", "-t", self.name, key], check=True)
            self.keys.append(key)

    def screen(self) -> str:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        )
        return out.stdout

    def wait(self, *texts: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while True:
            seen = self.screen()
            if all(t in seen for t in texts):
                return seen
            if time.monotonic() > deadline:
                raise AssertionError(f"not on screen after {timeout}s: {texts}\n{seen}")
            time.sleep(0.25)


@pytest.fixture
def walk(tmp_path: Path) -> Walk:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed (scripts/test.sh installs it)")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    name = f"npa-walk-{uuid.uuid4().hex[:8]}"
    command = f"env NPA_HOME={home} HOME={home} {NPA_SOP} --sandbox"
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", name, "-x", "80", "-y", "24", "-c", str(work), command],
        check=True,
    )
    yield Walk(name)
    subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def test_a_newcomer_reaches_ready_and_a_first_jobs_output_in_25_keys(walk: Walk) -> None:
    started = time.monotonic()
    walk.wait("SANDBOX", "No clusters yet", timeout=90)  # the first frame, cold

    walk.press("n")  # a new cluster: the wizard
    walk.wait("Step 1 of 5", "Cluster name")
    walk.press("d", "e", "m", "o", "Tab")  # the name, then the region field
    walk.press("Enter")  # the region list opens
    walk.wait("eu-north1")
    walk.press("Down", "Enter")  # the first region
    walk.press("C-n")  # control plane: the recipe's defaults
    walk.wait("Step 2 of 5")
    walk.press("C-n")  # worker pools
    walk.wait("Step 3 of 5", "Press a to add one")
    walk.press("a")  # a pool with the offered defaults
    walk.wait("New worker pool")
    walk.press("C-s")
    walk.wait("pool1")
    walk.press("C-n")  # options
    walk.wait("Step 4 of 5")
    walk.press("C-n")  # review: the YAML, no findings
    walk.wait("Step 5 of 5", "No findings")
    walk.press("d")  # writes cluster.yaml, then plans
    walk.wait("Press a to apply this plan", timeout=120)
    walk.press("a")
    walk.wait("READY", "Slurm nodes", timeout=180)  # the dashboard, once the apply ended

    walk.press("r")  # the run dialog, the offered first job chosen
    seen = walk.wait("Run a job", "cpu-hello")
    walk.press("C-s")
    seen = walk.wait("COMPLETED", "exit code 0", "node=pool1-0 cpus=8", timeout=60)

    took = time.monotonic() - started
    assert "SANDBOX · job 1" in seen
    assert len(walk.keys) <= MAX_KEYS, f"{len(walk.keys)} keys: {walk.keys}"
    assert took <= MAX_SECONDS, f"{took:.0f}s"
