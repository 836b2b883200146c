"""The recipe's three long apply waits are said when they start (with their deadline) and
when they end, in the operation's events."""

from __future__ import annotations

import calendar

from npa_sop_tui.events import ResourceFinished, ResourceStarted
from npa_sop_tui.lifecycle.apply_waits import WAITS, wait_note


def test_each_wait_says_its_deadline() -> None:
    start = calendar.timegm((2026, 12, 1, 20, 0, 0))
    minutes = {}
    for wait in WAITS:
        ev = ResourceStarted(operation_id="o", addr=wait.address, module="module.slurm",
                             action="create", ts=start)  # fmt: skip
        said = wait_note(ev)
        assert said is not None and wait.what in said
        minutes[wait.address] = said
    assert minutes["module.slurm.terraform_data.wait_for_slurm_cluster_hr"].endswith(
        "up to 60 min, gives up at 21:00 UTC"
    )
    assert minutes["module.slurm.terraform_data.wait_for_slurm_cluster_available"].endswith(
        "up to 60 min, gives up at 21:00 UTC"
    )
    assert minutes["module.slurm.terraform_data.wait_for_soperator_activechecks_hr"].endswith(
        "up to 240 min, gives up at 00:00 UTC"
    )
    addr = "module.slurm.terraform_data.wait_for_soperator_activechecks_hr"
    done = ResourceFinished(
        operation_id="o", addr=addr, module="module.slurm", action="create", elapsed=42.0
    )
    assert wait_note(done) == f"apply wait done after 42 s: {WAITS[2].what}"
    other = ResourceStarted(operation_id="o", addr="module.k8s.nebius_mk8s_v1_cluster.this",
                            module="module.k8s", action="create")  # fmt: skip
    assert wait_note(other) is None
