"""`destroy` with the team's bucket store chosen by the call's own settings (not the
environment): records, lock and Terraform state are read from that store, a cluster whose
folder is not on this machine is rebuilt from its spec as deployed, and a bucket that stops
answering during destroy is named as the cause (moto's real S3 API on 127.0.0.1)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.home import inventory
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle import steps
from npa_sop_tui.state.errors import StateUnreachable
from npa_sop_tui.state.stores import default_store

from testkit.lifecycle import Recorder, make_spec
from testkit.moto import MotoServer, team_options

pytestmark = [pytest.mark.terraform]


async def test_destroy_reads_the_cluster_from_the_store_its_settings_choose(
    moto: MotoServer, sandbox_in_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects destroy with a bucket chosen by flags: the cluster is found in that store
    (the local inventory has no such cluster), the plan shown is "remove every resource,
    add and change nothing", the saved plan folder goes with the cluster, and the result
    names the installation folder and the operation's log."""
    options = team_options(moto, monkeypatch)
    spec = make_spec("flagged", workers=[{"name": "cpu", "size": 1}])
    deployed = await lifecycle.deploy(spec, options=options(preflight=False))
    assert inventory.get("flagged") is None  # not in this machine's default store
    store = steps.store_of(options())
    install = Path(inventory.require("flagged", store=store).install_dir or "")
    (install / ".npa-plan").mkdir(exist_ok=True)
    seen = Recorder()
    done = await lifecycle.destroy("flagged", options=options(), on_event=seen)
    assert (done.status, done.destroyed) == ("destroyed", deployed.resources)
    summary = [(e.add, e.change, e.remove) for e in seen.kinds("plan_summary")]
    assert summary == [(0, 0, deployed.resources)]
    labels = [e.label for e in seen.kinds("phase_changed") if e.phase == "destroy"]
    assert labels == [f"Destroying {deployed.resources} resources"]
    assert not (install / ".npa-plan").exists()
    assert done.install_dir == str(install)
    assert done.log is not None and Path(done.log).is_file()
    assert inventory.require("flagged", store=store).state == "destroyed"


async def test_a_cluster_deployed_from_another_machine_is_rebuilt_and_destroyed(
    moto: MotoServer, sandbox_in_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects destroy from another machine: without the installation folder here, the
    source check passes without one (nothing to check on this machine) and destroy builds
    the installation from the spec as deployed, kept in the bucket, then removes
    everything the bucket's state holds."""
    options = team_options(moto, monkeypatch)
    spec = make_spec("roaming", workers=[{"name": "cpu", "size": 1}])
    deployed = await lifecycle.deploy(spec, options=options(preflight=False))
    store = steps.store_of(options())
    install = Path(inventory.require("roaming", store=store).install_dir or "")
    shutil.rmtree(install)  # as on a teammate's machine
    checked = await lifecycle.destroy("roaming", options=options(source_preflight_only=True))
    assert (checked.status, checked.install_dir) == ("source-preflight-passed", "")
    assert not install.exists()
    done = await lifecycle.destroy("roaming", options=options(), on_event=Recorder())
    assert (done.status, done.destroyed) == ("destroyed", deployed.resources)
    assert Path(done.install_dir).is_dir()
    assert inventory.require("roaming", store=store).state == "destroyed"


async def test_a_bucket_that_stops_answering_during_destroy_is_named_as_the_cause(
    sandbox_in_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the error of a destroy whose Terraform failed because the bucket went away:
    the user is told Terraform's destroy stopped on the bucket and to run it again once it
    answers, not that resources remain."""
    server = MotoServer().start()
    try:
        options = team_options(server, monkeypatch)
        spec = make_spec("outage", workers=[{"name": "cpu", "size": 1}])
        await lifecycle.deploy(spec, options=options(preflight=False))

        async def bucket_gone(ctx: Any, install: Any) -> Any:
            server.stop()
            args = ["destroy", "-input=false", "-no-such-flag"]  # fails at once, bucket or not
            return await steps.within(ctx, ctx.runner().run(args, cwd=install.dir), "destroy")

        monkeypatch.setattr(steps, "destroy", bucket_gone)
        with pytest.raises(StateUnreachable) as failed:
            await lifecycle.destroy("outage", options=options())
        assert failed.value.message.startswith("terraform destroy stopped: the state bucket")
        assert failed.value.hint == (
            "run the operation again once the bucket answers; npa never falls back to local state"
        )
    finally:
        server.stop()
    assert default_store().get("outage") is None
