"""Interrupting deploys: at several points, twice in a row, and by Ctrl-C on the CLI.

Each time the lock must be released, the state readable, the operation recorded as
interrupted, and the next deploy must converge to the resources of an uninterrupted one.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.events import Event
from npa_sop_tui.home import inventory
from npa_sop_tui.home.locks import is_locked
from npa_sop_tui.lifecycle import api as lifecycle

pytestmark = [pytest.mark.terraform, pytest.mark.usefixtures("sandbox_in_home")]

SEED = int(os.environ.get("NPA_TEST_SEED", time.time_ns() % 10_000))


def _when_phase(phase: str) -> Callable[[Event, int], bool]:
    return lambda e, _n: e.kind == "phase_changed" and e.phase == phase


def _started_in(phase: str) -> Callable[[Event, int], bool]:
    """True at the first resource that starts during `phase`."""
    current: list[str] = []

    def check(event: Event, _count: int) -> bool:
        if event.kind == "phase_changed":
            current.append(event.phase)
        return bool(current) and current[-1] == phase and event.kind == "resource_started"

    return check


def _nth_resource(n: int) -> Callable[[Event, int], bool]:
    """True when the n-th resource of the whole run starts."""
    seen: list[Event] = []

    def check(event: Event, _count: int) -> bool:
        if event.kind == "resource_started":
            seen.append(event)
        return event.kind == "resource_started" and len(seen) == n

    return check


async def _interrupted_deploy(
    spec: Any, opts: Any, trigger: Callable[[Event, int], bool]
) -> list[Event]:
    events: list[Event] = []
    task: asyncio.Task[Any] | None = None
    fired = False

    def sink(event: Event) -> None:
        nonlocal fired
        events.append(event)
        if not fired and trigger(event, len(events)):
            fired = True
            assert task is not None
            task.cancel()

    task = asyncio.ensure_future(lifecycle.deploy(spec, options=opts, on_event=sink))
    with pytest.raises(asyncio.CancelledError):
        await task
    return events


@pytest.mark.slow
async def test_lifecycle_interrupt_at_several_points_converges(
    make_spec: Any, sandbox_options: Any
) -> None:
    rng = random.Random(SEED)
    started: list[Event] = []
    reference = await lifecycle.deploy(
        make_spec("ref"),
        options=sandbox_options(),
        on_event=lambda e: started.append(e) if e.kind == "resource_started" else None,
    )
    expected = await lifecycle.cluster_resources("ref", sandbox_options())
    assert len(expected) == reference.resources
    # A seeded random point: the n-th resource to start (a point in the run, not a time, so a
    # slow machine interrupts at the same place as a fast one).
    nth = rng.randint(1, len(started))

    points: list[tuple[str, Callable[[Event, int], bool]]] = [
        ("during init", _when_phase("init")),
        ("first resource of apply:k8s", _started_in("apply:k8s")),
        ("inside apply:full", _started_in("apply:full")),
        (f"resource {nth} of {len(started)} (seed {SEED})", _nth_resource(nth)),
    ]
    for i, (label, trigger) in enumerate(points):
        name = f"intr{i}"
        spec = make_spec(name)
        events = await _interrupted_deploy(spec, sandbox_options(sleep=0.3), trigger)
        final = events[-1]
        assert final.kind == "operation_finished" and final.result == "interrupted", label
        assert not is_locked(name), label
        partial = await lifecycle.cluster_resources(name, sandbox_options())  # state readable
        assert set(partial) <= set(expected), label
        entry = inventory.require(name)
        assert entry.state == "interrupted" and entry.last_operation.result == "interrupted"

        again = await lifecycle.deploy(spec, options=sandbox_options())
        assert await lifecycle.cluster_resources(name, sandbox_options()) == expected, label
        assert again.resources == len(expected)


def _is_graceful_stop(event: Event) -> bool:
    """The runner's note that it asked Terraform to stop and is now waiting for it."""
    return event.kind == "log_line" and event.stream == "npa" and "gracefully" in event.text


async def test_lifecycle_second_cancel_forces_with_warning(
    make_spec: Any, sandbox_options: Any
) -> None:
    spec = make_spec("force")
    events: list[Event] = []
    task: asyncio.Task[Any] | None = None
    cancels = 0

    def sink(event: Event) -> None:
        # Interrupt twice, each at the moment it is needed rather than after a sleep: first
        # while a long local-exec runs, then while Terraform is stopping gracefully (a timed
        # second cancel can arrive after Terraform already stopped, on a loaded machine).
        nonlocal cancels
        events.append(event)
        first = cancels == 0 and event.kind == "resource_started"
        second = cancels == 1 and _is_graceful_stop(event)
        if first or second:
            cancels += 1
            assert task is not None
            task.cancel()

    task = asyncio.ensure_future(
        lifecycle.deploy(spec, options=sandbox_options(sleep=3), on_event=sink)
    )
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancels == 2, "no graceful stop was announced after the first interrupt"
    warnings = [e for e in events if e.kind == "diagnostic" and e.severity == "warning"]
    assert any("killed" in w.summary for w in warnings)
    assert events[-1].kind == "operation_finished" and events[-1].result == "interrupted"
    assert not is_locked("force")
    result = await lifecycle.deploy(spec, options=sandbox_options())
    assert result.resources == 24


def test_lifecycle_ctrl_c_on_the_cli_exits_130(tmp_path: Path) -> None:
    from npa_sop_tui.sandbox.local_terraform import prepare

    spec = tmp_path / "ctrlc.yaml"
    spec.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: ctrlc\n"
        "root_login_ssh_public_key: ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t\n"
        "workers:\n  - name: cpu\n    size: 1\n"
    )
    env = dict(os.environ, TF_VAR_standin_sleep_seconds="2", NPA_TERRAFORM_BIN=prepare().binary)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())",
            "soperator",
            "deploy",
            "--sandbox",
            "--yes",
            "--spec",
            str(spec),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None
    # Interrupt once Terraform is applying: the first resource of the Kubernetes phase is
    # done and the ones that depend on it take 2 s each, so the run is mid-apply.
    seen = []
    in_phase = False
    for line in proc.stderr:
        seen.append(line)
        in_phase = in_phase or "Creating the Kubernetes cluster" in line
        if in_phase and line.lstrip().startswith("✓"):
            break
    else:
        raise AssertionError("the deploy never started applying:\n" + "".join(seen))
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, "".join(seen) + err
    assert "interrupting" in err and "interrupted" in err
    assert "Traceback" not in err
    entry = inventory.require("ctrlc")
    assert entry.last_operation is not None and entry.last_operation.result == "interrupted"
    assert not is_locked("ctrlc")
