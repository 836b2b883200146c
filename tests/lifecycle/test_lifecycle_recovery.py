"""Self-recovery after a killed run: the lock names a Terraform that outlived npa, a record
left `running` is settled with the next step, abandoned temp files go, and SIGHUP is handled
like Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui import inventory, lifecycle
from npa_sop_tui.events import Event
from npa_sop_tui.inventory import InventoryEntry, OperationRecord, RecipeInfo
from npa_sop_tui.locks import ClusterBusy, ClusterLock, is_locked, process_alive, process_start
from npa_sop_tui.paths import cluster_dir

from testkit.wait import wait_until

NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli import main; sys.exit(main())"]


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_process_identity_is_pid_and_start_time() -> None:
    me = os.getpid()
    assert process_alive(me, process_start(me))
    assert not process_alive(me, (process_start(me) or 0) + 1)  # a recycled pid
    assert not process_alive(_dead_pid())


HOLDER = textwrap.dedent(
    """
    import subprocess, sys, time
    from npa_sop_tui.locks import ClusterLock
    lock = ClusterLock("leftover", operation="deploy").acquire()
    # Stands in for the Terraform supervisor: it inherits the lock and outlives us.
    child = subprocess.Popen(
        ["sleep", "30"], pass_fds=(lock.fileno(),), start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    lock.note_child(child.pid, ["apply", "-json", "plan.tfplan"])
    print(child.pid, flush=True)
    """
)


def test_a_terraform_left_by_a_killed_npa_is_named(npa_home: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", HOLDER], capture_output=True, text=True, check=True, timeout=30
    )
    leftover = int(out.stdout.split()[0])
    try:
        assert is_locked("leftover")  # npa is gone; its Terraform still holds the cluster
        with pytest.raises(ClusterBusy) as caught:
            ClusterLock("leftover", operation="deploy").acquire()
        text = caught.value.render()
        assert f"supervisor pid {leftover}" in text and "terraform apply -json" in text
        assert "that npa process is gone" in text and "saved its state" in text
        assert f"kill -TERM {leftover}" in text
        assert caught.value.exit_code == 2
    finally:
        os.kill(leftover, signal.SIGKILL)  # not our child: whoever adopted it reaps it
    wait_until(lambda: not is_locked("leftover"), timeout=5, what="the lock to go with its holder")
    ClusterLock("leftover", operation="deploy").acquire().release()


def test_a_live_holder_is_named_as_busy() -> None:
    with ClusterLock("busy", operation="deploy"), pytest.raises(ClusterBusy) as caught:
        ClusterLock("busy", operation="plan").acquire()
    assert f"deploy by pid {os.getpid()}" in caught.value.message


def _stale_entry(name: str, state: str, kind: str) -> InventoryEntry:
    entry = InventoryEntry(
        name=name,
        kube_context=f"nebius-{name}-slurm",
        state=state,  # type: ignore[arg-type]
        recipe=RecipeInfo(origin="sandbox", path="/x"),
    )
    entry.record(
        OperationRecord(id=f"{kind}-1", kind=kind, started=time.time() - 60, pid=_dead_pid())  # type: ignore[arg-type]
    )
    inventory.save(entry)
    return entry


def test_list_settles_a_run_that_died_with_the_next_step(npa_home: Path) -> None:
    dead = _stale_entry("killed", "deploying", "deploy").operations[-1].pid
    _stale_entry("halfgone", "destroying", "destroy")
    done = subprocess.run(
        [*NPA, "soperator", "list"],
        capture_output=True,
        text=True,
        env={**os.environ, "NPA_HOME": str(npa_home)},
        check=True,
    )
    assert "interrupted" in done.stdout
    assert "next for killed: `npa soperator deploy --spec" in done.stdout
    assert "--sandbox" in done.stdout  # the sandbox cluster's commands say so
    assert "next for halfgone: `npa soperator destroy --name halfgone --sandbox`" in done.stdout
    killed = inventory.require("killed")
    assert killed.state == "interrupted" and killed.last_operation.result == "interrupted"
    assert f"pid {dead}" in killed.last_operation.summary
    assert inventory.require("halfgone").state == "destroy-incomplete"


def test_a_running_record_under_a_held_lock_is_left_alone(npa_home: Path) -> None:
    _stale_entry("live", "deploying", "deploy")
    with ClusterLock("live", operation="deploy"):
        (entry,) = [e for e in inventory.list_clusters() if e.name == "live"]
        assert entry.state == "deploying"  # someone holds it: it really is running


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
    # Every folder npa (or Terraform, under umask 077) made in the home is private.
    loose = [
        folder for folder, _dirs, _files in os.walk(npa_home) if os.stat(folder).st_mode & 0o077
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
