"""An operator upgrade on a sandbox cluster plans what the recipe plans: the operator version
reaches only `module "slurm"` (its Helm/Flux releases, upgraded in place), so nothing in the
Kubernetes cluster or its node groups is replaced. Real Terraform on the stand-ins of both
recipe commits (4.1.6 and 4.1.13)."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.spec.model import spec_from_mapping


@pytest.mark.terraform
@pytest.mark.slow
async def test_upgrade_4_1_6_to_4_1_13_replaces_nothing(
    make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    spec = make_spec("upg", slurm_operator_version="4.1.6")
    opts = sandbox_options()
    await lifecycle.deploy(spec, options=opts, on_event=recorder)
    data = spec.model_dump(mode="json", exclude_none=True)
    data["slurm_operator_version"] = "4.1.13"  # what `npa soperator set` writes
    planned = await lifecycle.plan(spec_from_mapping(data), options=opts, on_event=recorder)
    changes = planned.changes
    assert planned.recipe.version == "4.1.13"
    assert changes.destructive == [] and changes.remove == 0 and changes.add == 0
    # In place: the operator, slurm-cluster and activechecks releases; and, as the spec leaves
    # k8s_version unset, the Kubernetes version of the newer recipe generation (an in-place
    # upgrade of the control plane and node groups, not a new cluster).
    assert changes.by_module == {"module.slurm": {"update": 3}, "module.k8s": {"update": 1}}
    assert changes.pools == []  # no worker pool is touched
