"""A sandbox plan → deploy → destroy on the stand-in generated for each supported version."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui.lifecycle import api as lifecycle
from npa_sop_tui.recipe.table import load_table
from npa_sop_tui.spec.model import SUPPORTED_VERSIONS


@pytest.mark.terraform
@pytest.mark.parametrize("version", sorted(SUPPORTED_VERSIONS))
async def test_each_version_deploys_on_its_own_standin(
    version: str, make_spec: Any, sandbox_options: Any, recorder: Any
) -> None:
    k8s = {"k8s_version": "1.36", "node_group_version": "75"} if version >= "4.1.12" else {}
    spec = make_spec(
        f"v{version.replace('.', '')}",
        slurm_operator_version=version,
        use_default_apparmor_profile=True,
        **k8s,
    )
    opts = sandbox_options()
    planned = await lifecycle.plan(spec, options=opts, on_event=recorder)
    commit = load_table().contract_commit(version)
    assert commit[:12] in planned.recipe.path and planned.recipe.version == version
    done = await lifecycle.deploy(spec, options=opts, on_event=recorder)
    assert done.resources == planned.changes.add
    gone = await lifecycle.destroy(spec.name, options=opts, on_event=recorder)
    assert gone.destroyed == done.resources and gone.remaining == []


@pytest.mark.terraform
async def test_4_1_12_null_spool_fails_the_plan_like_upstream(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stand-in reads the spool as the real 4.1.12 main.tf does: a null fails the plan.
    from npa_sop_tui.errors import OperationError
    from npa_sop_tui.recipe import render as render_mod

    real = render_mod.storage

    def null_spool(spec: Any, contract: Any) -> dict[str, Any]:
        out = real(spec, contract)
        out["filestore_controller_spool"] = None
        return out

    monkeypatch.setattr(render_mod, "storage", null_spool)
    monkeypatch.setattr(render_mod, "require", lambda *a, **k: None)
    spec = make_spec(
        "nullspool",
        slurm_operator_version="4.1.12",
        k8s_version="1.36",
        node_group_version="75",
        use_default_apparmor_profile=True,
    )
    with pytest.raises(OperationError, match="null"):
        await lifecycle.plan(spec, options=sandbox_options(), on_event=recorder)
