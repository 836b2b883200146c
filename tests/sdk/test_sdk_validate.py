"""The SDK's `validate` and spec inputs: typed results, findings with file positions, and a
clear refusal of what is not a spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from npa.sdk import soperator
from npa_sop_tui.sdk.validate import load, source_name

from testkit.fleets import spec_mapping


def test_validate_is_typed_and_positions_come_from_the_file(tmp_path: Path) -> None:
    ok = soperator.validate(spec_mapping())
    assert isinstance(ok, soperator.ValidationResult) and ok.ok
    assert ok.kube_context == "nebius-sdk-demo-slurm"
    assert ok.workers[0].capacity_mode == "on-demand"
    json.dumps(ok.model_dump(mode="json"))

    path = tmp_path / "cluster.yaml"
    path.write_text("apiVersion: npa.soperator/v0.0.1\nname: sdk-demo\nworkers:\n  - nme: cpu\n")
    bad = soperator.validate(path)
    assert not bad.ok
    by_path = {f.path: f for f in bad.findings}
    assert set(by_path) == {"workers[0].name", "workers[0].nme"}
    assert all((f.file, f.line) == (str(path), 4) for f in bad.findings)
    assert by_path["workers[0].nme"].hint == "did you mean 'name'?"
    with pytest.raises(soperator.SoperatorSpecError) as info:
        soperator.plan(path, sandbox=True)
    assert info.value.findings[0].file == str(path)
    assert info.value.findings[0].line == 4
    assert info.value.exit_code == 2


def test_a_spec_comes_from_a_model_a_mapping_or_a_path_and_nothing_else(tmp_path: Path) -> None:
    model = load(spec_mapping())
    assert load(model) is model
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({**spec_mapping(), "name": "from-file"}))
    assert load(path).name == load(str(path)).name == "from-file"
    with pytest.raises(soperator.UsageError, match="not int") as info:
        load(42)  # type: ignore[arg-type]
    assert info.value.exit_code == 2
    assert (source_name(path), source_name({}), source_name(model)) == (
        str(path),
        "<mapping>",
        "<spec>",
    )
