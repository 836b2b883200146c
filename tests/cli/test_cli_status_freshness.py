"""Live status stays live: a Slurm source that is not SSH (the sandbox's simulated Slurm) is
polled on the interval, and `status --watch --output json` writes a line at least every
interval, a heartbeat when nothing changed."""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.cli.status_cmds import _watch_json
from npa_sop_tui.status.model import ClusterStatus, SlurmState
from npa_sop_tui.status.watch import StatusSettings, StatusWatcher

NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]


def _watcher(interval: float) -> StatusWatcher:
    async def simulated() -> SlurmState:
        return SlurmState(host="sim", source_format="delimited")

    settings = StatusSettings(name="demo", kube_enabled=False, slurm_interval=interval)
    return StatusWatcher(settings, slurm_source=simulated, slurm_note="simulated")


def test_simulated_slurm_stays_fresh_over_three_intervals() -> None:
    """Nothing changes, yet a snapshot arrives per poll and none is ever stale."""

    async def collect() -> list[tuple[float, ClusterStatus]]:
        seen: list[tuple[float, ClusterStatus]] = []
        async with _watcher(1.0) as watcher:
            async for snap in watcher.snapshots():
                seen.append((time.monotonic(), snap))
                if len(seen) == 4:
                    break
        return seen

    seen = asyncio.run(asyncio.wait_for(collect(), 10))
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(seen)]
    assert max(gaps) < 1.0 * 2, gaps
    for _, snap in seen:
        slurm = snap.freshness["slurm"]
        assert slurm.state == "fresh" and slurm.note == "simulated"
        assert slurm.updated_at is not None and snap.taken_at - slurm.updated_at < 1.0 * 2
    assert len({snap.freshness["slurm"].updated_at for _, snap in seen}) == 4


def test_watch_json_writes_a_heartbeat_when_nothing_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A feed that goes quiet after one snapshot still gets a line per interval: each a full
    JSON document saying how fresh each source is now."""
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)

    async def quiet_feed():  # type: ignore[no-untyped-def]
        async with _watcher(30) as watcher:  # one poll, then silence for 30 s
            async for snap in watcher.snapshots():
                yield snap

    async def run() -> None:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(_watch_json(quiet_feed(), interval=0.25), 1.2)

    asyncio.run(run())
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert "heartbeat" not in lines[0] and lines[0]["freshness"]["slurm"]["state"] == "fresh"
    beats = lines[1:]
    assert len(beats) >= 3, lines
    for beat in beats:
        assert beat["heartbeat"] is True and beat["name"] == "demo"
        assert beat["freshness"]["kube"]["shown"] == "disabled"
        slurm = beat["freshness"]["slurm"]
        assert slurm["shown"] == "fresh" and slurm["age_seconds"] >= 0
    ages = [b["freshness"]["slurm"]["age_seconds"] for b in beats]
    assert ages == sorted(ages) and ages[-1] > ages[0]  # the age keeps counting


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.terraform
@pytest.mark.slow
def test_sandbox_status_stays_fresh(
    npa_home: Path, tmp_path: Path, fast_standin: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """`status --watch --sandbox --interval 2 --output json`: never stale while nothing fails,
    a line at least every two intervals."""
    spec = tmp_path / "cluster.yaml"
    spec.write_text("apiVersion: npa.soperator/v0.0.1\nname: live\nworkers:\n  - name: cpu\n")
    assert main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes"]) == 0
    capsys.readouterr()
    cmd = [*NPA, "soperator", "status", "--name", "live", "--sandbox", "--watch"]
    proc = subprocess.Popen(
        [*cmd, "--interval", "2", "--output", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        preexec_fn=_default_sigint,
    )
    assert proc.stdout is not None
    stamps: list[float] = []
    docs: list[dict] = []
    try:
        while not stamps or time.monotonic() - stamps[0] < 9:  # over three intervals
            line = proc.stdout.readline()
            assert line, f"the watch ended: {proc.stderr.read()}"  # type: ignore[union-attr]
            stamps.append(time.monotonic())
            docs.append(json.loads(line))
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    assert gaps and max(gaps) <= 2 * 2, gaps
    for doc in docs:
        for source, f in doc["freshness"].items():
            assert f["state"] == "fresh", (source, f)
            assert f.get("shown", "fresh") == "fresh", (source, f)
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
