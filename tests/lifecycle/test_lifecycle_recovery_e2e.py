"""Self-recovery end to end, through real deploys on the sandbox: the next operation after a
killed run settles its record and sweeps its temp files, and SIGHUP stops a deploy like
Ctrl-C. Apart from test_lifecycle_recovery.py (recovery.py's rules, in milliseconds), which
judges recovery.py's mutants: these two take 20-30 s each and reach the same rules."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.events import Event
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import OperationRecord
from npa_sop_tui.home.locks import is_locked
from npa_sop_tui.home.paths import cluster_dir
from npa_sop_tui.lifecycle import api as lifecycle

NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.terraform
async def test_the_next_operation_settles_and_sweeps(
    make_spec: Any, sandbox_options: Any, npa_home: Path
) -> None:
    spec = make_spec("swept")
    await lifecycle.deploy(spec, options=sandbox_options())
    entry = inventory.require("swept")
    entry.state = "deploying"
    entry.record(OperationRecord(id="deploy-x", kind="deploy", started=1.0, pid=_dead_pid()))
    inventory.save(entry)
    folder = cluster_dir("swept")
    install = Path(entry.install_dir or "")
    dead, mine = _dead_pid(), os.getpid()
    abandoned = [
        folder / f".inventory.json.{dead}-abcd1234.tmp",
        install / f".terraform.tfvars.json.{dead}-zz_99xyz.tmp",
        npa_home / ".config.yaml.q1w2e3r4.tmp",  # an old-style name, long abandoned
    ]
    for path in abandoned:
        path.write_text("partial")
    os.utime(abandoned[-1], (time.time() - 3600, time.time() - 3600))
    in_flight = folder / f".spec.yaml.{mine}-inflight.tmp"  # a live writer's
    in_flight.write_text("partial")
    events: list[Event] = []
    await lifecycle.plan(spec, options=sandbox_options(), on_event=events.append)
    assert not any(p.exists() for p in abandoned) and in_flight.exists()
    notes = [e.summary for e in events if e.kind == "diagnostic" and e.severity == "warning"]  # type: ignore[attr-defined]
    assert any("removed 3 temp file(s)" in n for n in notes), notes
    assert any("deploy deploy-x did not finish" in n and "Next:" in n for n in notes), notes
    assert inventory.require("swept").operations[-2].result == "interrupted"
    # Every folder npa (or Terraform, under umask 077) made in the home is private (the
    # home itself is the test's: npa changes the mode of nothing it did not create).
    loose = [
        folder
        for folder, _dirs, _files in os.walk(npa_home)
        if folder != str(npa_home) and os.stat(folder).st_mode & 0o077
    ]
    assert not loose, loose


@pytest.mark.terraform
@pytest.mark.slow
def test_sighup_stops_like_ctrl_c(tmp_path: Path, npa_home: Path) -> None:
    spec = tmp_path / "hup.yaml"
    spec.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: hup\n"
        "root_login_ssh_public_key: ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t\n"
        "workers:\n  - name: cpu\n    size: 1\n"
    )
    env = {
        **os.environ,
        "NPA_HOME": str(npa_home),
        "NPA_SANDBOX_HOME": str(npa_home),
        "TF_VAR_standin_sleep_seconds": "2",
    }
    proc = subprocess.Popen(
        [*NPA, "soperator", "deploy", "--sandbox", "--yes", "--spec", str(spec), "-o", "ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if json.loads(line).get("kind") == "resource_started":
            break
    proc.send_signal(signal.SIGHUP)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 129, err
    assert "SIGHUP: interrupting" in err and "Traceback" not in err
    last = inventory.require("hup").last_operation
    assert last is not None and last.result == "interrupted" and last.summary.endswith("SIGHUP")
    assert not is_locked("hup")
