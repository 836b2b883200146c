"""A full disk at three points of a deploy, on a small tmpfs holding the npa home (mounted
as root, or else in a user namespace of the test's own): before the deploy starts, during the
phase-1 apply, and at the phase-2 plan. Each time: one clear `DiskFull` naming the path and
the space needed, the previous files intact, the inventory not stuck at `deploying`, no state
lost; and once space is freed, a redeploy converges without creating anything twice."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.events import Event
from npa_sop_tui.home import inventory
from npa_sop_tui.home.fsutil import DiskFull
from npa_sop_tui.home.locks import is_locked
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.terraform.standin_addresses import real_address

from testkit.disks import fill, tmpfs

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


@pytest.fixture
def small_disk(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sandbox_in_home: Path,
) -> Iterator[Path]:
    """A 48 MiB tmpfs as the npa home (the sandbox's provider mirror takes 20 MiB of it);
    after `sandbox_in_home`, which `sandbox_options` uses, so this home wins. Without root
    the test runs in a user namespace of its own (testkit/disks.py)."""
    with tmpfs(request, tmp_path / "disk", size="48m", mode="0700") as mount:
        home = mount / "npa-home"
        monkeypatch.setenv("NPA_HOME", str(home))
        monkeypatch.setenv("NPA_SANDBOX_HOME", str(home))
        yield mount


def free(disk: Path) -> None:
    (disk / "filler").unlink(missing_ok=True)


def _when(check: Callable[[Event], bool], action: Callable[[], None]) -> Callable[[Event], None]:
    fired = [False]

    def sink(event: Event) -> None:
        if not fired[0] and check(event):
            fired[0] = True
            action()

    return sink


def _state_ids(path: Path) -> dict[str, str]:
    state = json.loads(path.read_text())
    ids = {}
    for res in state["resources"]:
        base = f"{res['module']}.{res['type']}.{res['name']}"
        for inst in res["instances"]:
            key = inst.get("index_key")
            real, in_place = real_address(base if key is None else f"{base}[{json.dumps(key)}]")
            if not in_place:  # as npa names them; a stand-in's in-place part is no resource
                ids[real] = inst["attributes"]["id"]
    return ids


def _kept_across_applies(address: str) -> bool:
    """Not one the recipe replaces on every apply (`triggers_replace = [timestamp()]`)."""
    from npa_sop_tui.recipe.graph import graph_for

    graph = graph_for(version="4.1.6")
    assert graph is not None
    res = graph.resource(re.sub(r"\[[^\]]*\]$", "", address))
    return res is None or not res["always_replaced"]


def _no_temp_files(root: Path) -> None:
    assert not [p for p in root.rglob(".*.tmp")], "temp files left behind"


async def test_disk_full_before_the_deploy_starts(
    small_disk: Path, make_spec: Any, sandbox_options: Any
) -> None:
    spec = make_spec("full0")
    await lifecycle.deploy(spec, options=sandbox_options())
    entry_file = Path(os.environ["NPA_HOME"]) / "soperator" / "full0" / "inventory.json"
    before = entry_file.read_bytes()
    install = Path(inventory.require("full0").install_dir or "")
    tfvars = (install / "terraform.tfvars.json").read_bytes()
    fill(small_disk)
    bigger = make_spec("full0", workers=[{"name": "cpu", "size": 3}])
    with pytest.raises(DiskFull) as caught:
        await lifecycle.deploy(bigger, options=sandbox_options())
    text = caught.value.render()
    assert "disk full" in text and "needs at least 16" in text and "0 B free" in text
    assert str(Path(os.environ["NPA_HOME"])) in text
    assert caught.value.exit_code == 1
    assert entry_file.read_bytes() == before  # nothing was touched
    assert (install / "terraform.tfvars.json").read_bytes() == tfvars
    assert not is_locked("full0")
    _no_temp_files(small_disk)
    # The CLI says the same in one line, no traceback.
    spec_file = small_disk.parent / "bigger.yaml"
    spec_file.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: full0\nworkers:\n  - name: cpu\n    size: 3\n"
        f"root_login_ssh_public_key: {spec.root_login_ssh_public_key}\n"
    )
    npa = [
        sys.executable,
        "-c",
        "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())",
    ]
    cli = subprocess.run(
        [*npa, "soperator", "deploy", "--sandbox", "--yes", "--spec", str(spec_file)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert cli.returncode == 1, cli.stderr
    assert cli.stderr.startswith("error: disk full: cannot write") and "Traceback" not in cli.stderr
    free(small_disk)


async def test_disk_full_during_the_phase1_apply_keeps_the_state(
    small_disk: Path, make_spec: Any, sandbox_options: Any
) -> None:
    spec = make_spec("full1")
    created: list[str] = []

    def sink(event: Event) -> None:
        if event.kind == "resource_finished":
            created.append(event.addr)  # type: ignore[attr-defined]
            if len(created) == 1:
                fill(small_disk)  # one resource exists; Terraform cannot save it

    with pytest.raises(DiskFull) as caught:
        await lifecycle.deploy(spec, options=sandbox_options(sleep=0.2), on_event=sink)
    install = Path(inventory.require("full1").install_dir or "")
    saved = install / "errored.tfstate"
    assert str(saved) in caught.value.message, caught.value.message
    assert "disk full" in caught.value.message
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    kept = _state_ids(saved)
    assert created and set(created) <= set(kept), (created, kept)
    entry = inventory.require("full1")
    assert entry.state == "failed" and entry.last_operation.result == "failed"
    assert not is_locked("full1")
    _no_temp_files(small_disk)

    free(small_disk)
    events: list[Event] = []
    result = await lifecycle.deploy(spec, options=sandbox_options(), on_event=events.append)
    assert result.resources == 24
    final = _state_ids(install / "terraform.tfstate")
    # What was created before the disk filled is the same resource now: nothing twice.
    assert all(final[addr] == kept[addr] for addr in created if _kept_across_applies(addr))
    assert any("state Terraform could not save" in str(e) for e in events)
    assert not saved.exists()


async def test_disk_full_at_the_phase2_plan(
    small_disk: Path, make_spec: Any, sandbox_options: Any
) -> None:
    spec = make_spec("full2")
    sink = _when(
        lambda e: e.kind == "phase_changed" and e.phase == "plan:full",  # type: ignore[attr-defined]
        lambda: fill(small_disk),
    )
    with pytest.raises(DiskFull) as caught:
        await lifecycle.deploy(spec, options=sandbox_options(), on_event=sink)
    message = caught.value.message
    assert "disk full: cannot write" in message and "needs at least" in message, message
    entry = inventory.require("full2")
    assert entry.state == "failed", entry.state  # not stuck at deploying
    assert not is_locked("full2")
    install = Path(entry.install_dir or "")
    phase1 = _state_ids(install / "terraform.tfstate")  # phase 1's state is intact
    assert any(addr.startswith("module.k8s.") for addr in phase1)
    _no_temp_files(small_disk)

    free(small_disk)
    result = await lifecycle.deploy(spec, options=sandbox_options())
    assert result.resources == 24
    final = _state_ids(install / "terraform.tfstate")
    assert all(final[a] == phase1[a] for a in phase1 if _kept_across_applies(a))


def test_fill_really_fills(small_disk: Path) -> None:
    fill(small_disk)
    with pytest.raises(OSError) as caught:
        (small_disk / "x").write_bytes(b"\0" * 8192)
    assert caught.value.errno == errno.ENOSPC
    free(small_disk)
    (small_disk / "x").write_bytes(b"\0" * 8192)
