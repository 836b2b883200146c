"""The interrupt matrix: `npa soperator deploy` (real CLI, real Terraform) stopped by SIGINT to
its process group, SIGTERM, SIGKILL, or a closed stdout (EPIPE), at init, phase-1 apply,
phase-2 plan, phase-2 apply and the end.

After each run: no process of the run is left 2 s after npa exits; Terraform's state lists
every resource Terraform reported created (from npa's log, and from the supervisor's spool
when npa was killed); the lock is free; the inventory tells the truth; a redeploy converges
to the resources of an uninterrupted deploy and a destroy leaves an empty state.

The five points of one signal run side by side (each its own cluster) to keep CI time down.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.home import inventory
from npa_sop_tui.home.locks import is_locked
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.recipe.graph import layouts, load_graph
from npa_sop_tui.terraform.standin_addresses import real_address
from npa_sop_tui.terraform.supervision import RUN_DIR

from testkit.wait import wait_until

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

SPEC = """apiVersion: npa.soperator/v0.0.1
name: {name}
root_login_ssh_public_key: {key}
workers:
  - name: cpu
    size: 1
"""
KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t"
POINTS = ("init", "apply:k8s", "plan:full", "apply:full", "end")
SIGNALS = ("SIGINT-group", "SIGTERM", "SIGKILL", "EPIPE")
EXIT_AFTER = {"SIGINT-group": 130, "SIGTERM": 143, "SIGKILL": -9, "EPIPE": 0}
NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]
NO_PROCESS_WITHIN = 2.0  # seconds after npa exits
SLEEP = "0.4"  # each stand-in resource sleeps this long, so signals land mid-resource


def _trigger(point: str) -> Callable[[dict[str, Any]], bool]:
    phase: list[str] = [""]

    def check(event: dict[str, Any]) -> bool:
        kind = event.get("kind")
        if kind == "phase_changed":
            phase[0] = event["phase"]
            if point in ("init", "plan:full"):
                return event["phase"] == point
        if point in ("apply:k8s", "apply:full"):
            return kind == "resource_started" and phase[0] == point
        return point == "end" and kind == "operation_finished"

    return check


@dataclass
class Cell:
    signal: str
    point: str
    home: Path
    name: str = ""
    returncode: int | None = None
    stderr: str = ""
    fired: bool = False
    exited_at: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NPA_HOME": str(home),
        "NPA_SANDBOX_HOME": str(home),
        "TF_VAR_standin_sleep_seconds": SLEEP,
    }


def _run_cell(cell: Cell) -> Cell:
    short = {"SIGINT-group": "int", "SIGTERM": "term", "SIGKILL": "kill", "EPIPE": "pipe"}
    cell.name = f"m-{short[cell.signal]}-{cell.point.replace(':', '')}"
    spec = cell.home / f"{cell.name}.yaml"
    spec.write_text(SPEC.format(name=cell.name, key=KEY))
    cmd = [*NPA, "soperator", "deploy", "--sandbox", "--yes"]
    proc = subprocess.Popen(
        [*cmd, "--spec", str(spec), "--output", "ndjson"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(cell.home),
        start_new_session=True,  # its own group, like a job in a terminal
    )
    assert proc.stdout is not None and proc.stderr is not None
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))  # type: ignore[union-attr]
    reader.start()
    fire = _trigger(cell.point)
    for line in proc.stdout:
        if not line.startswith("{"):
            continue
        event = json.loads(line)
        cell.events.append(event)
        if cell.fired or not fire(event):
            continue
        cell.fired = True
        if cell.signal == "SIGINT-group":
            os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        elif cell.signal == "SIGTERM":
            proc.send_signal(signal.SIGTERM)
        elif cell.signal == "SIGKILL":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            break  # EPIPE: stop reading; closing our end breaks npa's next write
    proc.stdout.close()
    cell.returncode = proc.wait(timeout=120)
    cell.exited_at = time.monotonic()
    reader.join(30)
    cell.stderr = "".join(err)
    return cell


def _processes_under(folder: Path) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if cwd == str(folder) or cwd.startswith(f"{folder}/"):
            found.append(f"{entry.name}: {cmdline[:120]}")
    return found


def _state_addresses(install_dir: Path) -> set[str]:
    state = json.loads((install_dir / "terraform.tfstate").read_text() or "{}")
    found = set()
    for res in state.get("resources", []):
        base = f"{res['module']}." if res.get("module") else ""
        base += f"{res['type']}.{res['name']}"
        for inst in res.get("instances", []):
            key = inst.get("index_key")
            # the stand-in's own names, read back as npa reports them (the real recipe's)
            found.add(real_address(base if key is None else f"{base}[{json.dumps(key)}]")[0])
    return found


NO_CLOUD_OBJECT = {
    address for layout in layouts() for address in load_graph(layout).safe_replacements()
}


def _created(cell: Cell, install_dir: Path) -> set[str]:
    """Every resource Terraform said it created and did not delete after: npa's logs in the
    order they were written, then the orphaned spool (the recipe replaces some resources on
    every apply, so an interrupt may land between a replacement's delete and its create)."""
    created: set[str] = set()

    def seen(action: str, address: str) -> None:
        if action == "create":
            created.add(address)
        elif action == "delete":
            created.discard(address)

    logs = (cell.home / "soperator" / cell.name / "operations").glob("*.ndjson")
    for log in sorted(logs, key=lambda p: p.stat().st_mtime):
        for line in log.read_text().splitlines():
            event = json.loads(line)
            if event["kind"] == "resource_finished":
                seen(event["action"], event["addr"])
    for spool in (install_dir / RUN_DIR).glob("*.orphaned.log"):
        for line in spool.read_text().splitlines():
            if line.startswith("{") and '"apply_complete"' in line:
                message = json.loads(line)
                seen(
                    message["hook"]["action"], real_address(message["hook"]["resource"]["addr"])[0]
                )
    return created


def _check(cell: Cell, reference: set[str]) -> None:
    label = f"{cell.signal} at {cell.point}"
    assert cell.fired, f"{label}: the point was never reached\n{cell.stderr}"
    assert "Traceback" not in cell.stderr, f"{label}:\n{cell.stderr}"
    at_end = cell.point == "end"
    if at_end:  # the run was over: an ok run stays ok (or was killed after recording it)
        assert cell.returncode in (0, EXIT_AFTER[cell.signal]), f"{label}: {cell.returncode}"
    else:
        assert cell.returncode == EXIT_AFTER[cell.signal], f"{label}:\n{cell.stderr}"
    entry = inventory.require(cell.name)
    install_dir = Path(entry.install_dir or "")

    # No process of this run is left 2 s after npa exits (supervisor, Terraform, providers).
    within = max(0.0, cell.exited_at + NO_PROCESS_WITHIN - time.monotonic())
    try:
        wait_until(lambda: not _processes_under(install_dir), timeout=within, what="no process")
    except AssertionError:
        left = _processes_under(install_dir)
        raise AssertionError(
            f"{label}: still running {NO_PROCESS_WITHIN}s after npa exited: {left}"
        ) from None
    assert not is_locked(cell.name), label

    if (install_dir / "terraform.tfstate").exists():
        # no cloud object stands behind the recipe's own bookkeeping (a rendered file, a
        # terraform_data step): one replaced on every apply may be caught between its delete
        # (which a killed npa may not have logged) and its create, and nothing is lost
        missing = _created(cell, install_dir) - _state_addresses(install_dir) - NO_CLOUD_OBJECT
        assert not missing, f"{label}: created but not in state: {sorted(missing)}"

    # An honest inventory (`list` settles a run that npa could not record itself).
    listed = subprocess.run(
        [*NPA, "soperator", "list", "--sandbox", "-o", "json"],
        capture_output=True,
        text=True,
        env=_env(cell.home),
        check=True,
    )
    record = next(c for c in json.loads(listed.stdout)["clusters"] if c["name"] == cell.name)
    last = record["operations"][-1]
    if at_end or cell.signal == "EPIPE":
        assert (record["state"], last["result"]) == ("deployed", "ok"), f"{label}: {record}"
        if cell.signal == "EPIPE" and not at_end:  # at the end the last line may be out
            assert "stdout was closed" in cell.stderr, label
    else:
        assert (record["state"], last["result"]) == ("interrupted", "interrupted"), label
        if cell.signal == "SIGKILL":
            assert "did not finish" in last["summary"] and "Next:" in last["summary"], last
        else:
            assert cell.signal.split("-")[0] in last["summary"], last  # "interrupted by SIGTERM"


async def _converge_and_destroy(cell: Cell, options: Any, reference: set[str]) -> None:
    from npa_sop_tui.spec.model import load_spec

    spec = load_spec(cell.home / f"{cell.name}.yaml").spec
    result = await lifecycle.deploy(spec, options=options)
    label = f"{cell.signal} at {cell.point}"
    assert set(await lifecycle.cluster_resources(cell.name, options)) == reference, label
    assert result.resources == len(reference)
    await lifecycle.destroy(cell.name, options=options)
    assert await lifecycle.cluster_resources(cell.name, options) == [], label


@pytest.fixture(scope="module")
def matrix_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("matrix")


@pytest.fixture
def in_matrix_home(matrix_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NPA_HOME", str(matrix_home))
    monkeypatch.setenv("NPA_SANDBOX_HOME", str(matrix_home))
    return matrix_home


def _options() -> lifecycle.LifecycleOptions:
    """What the CLI's `--sandbox` uses (placeholder identity), with no sleeps."""
    from npa_sop_tui.environment_choice import open_environment

    return lifecycle.LifecycleOptions(environment=open_environment(sandbox=True, sleep_seconds=0))


@pytest.fixture
def reference(in_matrix_home: Path) -> set[str]:
    """The resources of an uninterrupted deploy of the same spec (one per module)."""
    path = in_matrix_home / "reference.txt"
    if path.exists():
        return set(path.read_text().split())
    from npa_sop_tui.spec.model import parse_spec_text

    spec = parse_spec_text(SPEC.format(name="m-ref", key=KEY), source="ref.yaml").spec
    asyncio.run(lifecycle.deploy(spec, options=_options()))
    found = set(asyncio.run(lifecycle.cluster_resources("m-ref", _options())))
    path.write_text("\n".join(sorted(found)))
    return found


@pytest.mark.parametrize("sig", SIGNALS)
def test_interrupt_matrix(sig: str, in_matrix_home: Path, reference: set[str]) -> None:
    cells = [Cell(sig, point, in_matrix_home) for point in POINTS]
    with ThreadPoolExecutor(max_workers=len(cells)) as pool:
        done = list(pool.map(_run_cell, cells))
    failures = []
    for cell in done:
        try:
            _check(cell, reference)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n\n".join(failures)

    async def converge_all() -> None:
        await asyncio.gather(*(_converge_and_destroy(c, _options(), reference) for c in done))

    asyncio.run(converge_all())
