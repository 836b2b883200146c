"""`destroy` from another machine of what an older npa deployed (moto's real S3 API on
127.0.0.1): the spec as deployed is rebuilt as it is, not judged by today's rules."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from npa_sop_tui.home import inventory
from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.lifecycle import steps

from testkit.lifecycle import Recorder, make_spec
from testkit.moto import MotoServer, team_options

pytestmark = [pytest.mark.terraform]


async def test_a_spec_deployed_under_older_rules_can_still_be_destroyed_elsewhere(
    moto: MotoServer, sandbox_in_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects tearing down what an older npa deployed: the spec as deployed in the bucket
    breaks a rule npa has today (a 256 GiB boot disk; the rule is now >= 512), yet a destroy
    from another machine rebuilds the installation from it and removes everything instead
    of refusing the spec and leaving the cluster running."""
    from npa_sop_tui.spec.model import load_spec
    from npa_sop_tui.spec.reading import SpecError

    options = team_options(moto, monkeypatch)
    spec = make_spec("legacy", workers=[{"name": "cpu", "size": 1}])
    deployed = await lifecycle.deploy(spec, options=options(preflight=False))
    store = steps.store_of(options())
    shutil.rmtree(inventory.require("legacy", store=store).install_dir or "")
    as_deployed = store.read_spec("legacy") or ""
    older = as_deployed.replace("  size: 1\n", "  size: 1\n  boot_disk_gib: 256\n", 1)
    assert older != as_deployed
    store.save_spec("legacy", older)
    kept = store.spec_file("legacy")
    assert kept is not None
    with pytest.raises(SpecError, match="boot_disk_gib"):
        load_spec(kept)  # today's rules refuse it
    done = await lifecycle.destroy("legacy", options=options(), on_event=Recorder())
    assert (done.status, done.destroyed) == ("destroyed", deployed.resources)
    assert inventory.require("legacy", store=store).state == "destroyed"
