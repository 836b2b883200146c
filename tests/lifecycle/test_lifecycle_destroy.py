"""lifecycle/destroy.py with real Terraform on the stand-in recipe."""

from __future__ import annotations

from typing import Any

import pytest

from npa_sop_tui import inventory, lifecycle
from npa_sop_tui.lifecycle import steps

pytestmark = [pytest.mark.terraform, pytest.mark.slow]


async def test_a_destroy_that_leaves_resources_in_state_is_incomplete(
    make_spec: Any, sandbox_options: Any, recorder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the "still in state" check: Terraform can exit 0 while resources remain
    (here a real `terraform destroy -target=` of one resource stands for such a run). The
    cluster must be reported destroy-incomplete with what is left, never `destroyed`."""
    spec = make_spec("pfpart", workers=[{"name": "cpu", "size": 1}])
    await lifecycle.deploy(spec, options=sandbox_options(preflight=False), on_event=recorder)
    real_destroy = steps.destroy

    async def destroy_one(ctx: Any, install: Any) -> Any:
        first = (await steps.state_list(ctx, install))[0]
        args = ["destroy", "-input=false", "-json", "-auto-approve", f"-target={first}"]
        return await steps.within(ctx, ctx.runner().run(args, cwd=install.dir), "destroy")

    monkeypatch.setattr(steps, "destroy", destroy_one)
    with pytest.raises(lifecycle.DestroyIncomplete) as info:
        await lifecycle.destroy("pfpart", options=sandbox_options(preflight=False),
                                on_event=recorder)  # fmt: skip
    assert info.value.remaining, "what is left must be named"
    assert "still in state" in str(info.value.message)
    assert inventory.require("pfpart").state == "destroy-incomplete"
    monkeypatch.setattr(steps, "destroy", real_destroy)
    done = await lifecycle.destroy("pfpart", options=sandbox_options(), on_event=recorder)
    assert done.status == "destroyed"
