"""A second cluster's seeded first `init` with the team's S3 state (moto's real S3 API on
127.0.0.1): its backend is its own, set up by Terraform from its own override, so its state
lands under its own key in the bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.state import backend as state_backend

from testkit.moto import MotoServer


@pytest.mark.terraform
async def test_second_cluster_seeded_init_keeps_its_state_under_its_own_key(
    bucket_env: dict[str, str],
    moto: MotoServer,
    sandbox_in_home: Path,
    fast_standin: None,
) -> None:
    from npa_sop_tui.lifecycle import api as lifecycle

    from testkit.lifecycle import Recorder, make_spec, options

    first = Recorder()
    await lifecycle.deploy(
        make_spec("seeda", workers=[{"name": "cpu", "size": 1}]), options=options(), on_event=first
    )
    assert any(
        "providers not taken from the plugin cache" in e.text for e in first.kinds("log_line")
    )
    seen = Recorder()
    result = await lifecycle.deploy(
        make_spec("seedb", workers=[{"name": "cpu", "size": 1}]), options=options(), on_event=seen
    )
    lines = [e.text for e in seen.kinds("log_line")]
    assert any("providers linked from the plugin cache" in t for t in lines), lines
    assert seen.kinds("operation_finished")[-1].result == "ok"
    record = state_backend.recorded_backend(Path(result.install_dir))
    assert record is not None and record["type"] == "s3"
    bucket = bucket_env["NPA_STATE_BUCKET"]
    keys = {o["Key"] for o in moto.client().list_objects_v2(Bucket=bucket).get("Contents", [])}
    own = record["config"]["key"]
    assert own.endswith("/seedb/terraform.tfstate") and own in keys, (own, keys)
    assert any(k.endswith("/seeda/terraform.tfstate") for k in keys), keys
    assert not list(sandbox_in_home.glob("**/seedb/terraform.tfstate"))  # nothing local
