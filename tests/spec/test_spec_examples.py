"""Every example a newcomer meets validates clean: 0 errors and 0 warnings.

The examples are `npa soperator example [NAME]`, the spec files in assets/ (copies of those
examples plus the workflow's cluster) and the YAML block in the README.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from npa_sop_tui.agent.workflow import load_workflow
from npa_sop_tui.cli.entry import main
from npa_sop_tui.cli.spec_cmds import EXAMPLES, example_text
from npa_sop_tui.fleet.loader import load_fleet
from npa_sop_tui.spec.model import load_spec, parse_spec_text
from npa_sop_tui.spec.validate import validate_spec

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "assets"
SPEC_API = "apiVersion: npa.soperator/v0.0.1"


def _spec_assets() -> list[Path]:
    return sorted(p for p in ASSETS.glob("*.yaml") if SPEC_API in p.read_text())


def _documented_capacity(text: str) -> dict[str, str]:
    """Reservations an example's header says to pass at run time (`--capacity-block-group
    POOL=…`): validated the way the example tells a user to run it."""
    pools = re.findall(r"--capacity-block-group (\S+?)=capacityblockgroup-", text)
    return {pool: "capacityblockgroup-example0001" for pool in pools}


def _validate_json(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> dict:
    code = main(["soperator", "validate", "--spec", str(path), "-o", "json", *extra])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0, doc
    return doc


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_command_output_validates_clean(
    name: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["soperator", "example", name]) == 0
    text = capsys.readouterr().out
    assert "issue #" not in text.lower()  # examples speak to users, not to the tracker
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    extra = [f"--capacity-block-group={k}={v}" for k, v in _documented_capacity(text).items()]
    assert _validate_json(capsys, path, *extra)["findings"] == []


@pytest.mark.parametrize("path", _spec_assets(), ids=lambda p: p.name)
def test_spec_assets_validate_clean(path: Path) -> None:
    text = path.read_text()
    loaded = load_spec(path, capacity=_documented_capacity(text))
    assert [f.render() for f in loaded.findings] == []


def test_readme_spec_block_is_the_example_and_validates_clean() -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, flags=re.S)
    specs = [b for b in blocks if SPEC_API in b]
    assert len(specs) == 1, "the README shows one example spec"
    assert specs[0] == example_text("cluster")  # `npa soperator example` prints "the example below"
    assert parse_spec_text(specs[0], source="README.md").findings == []


def test_fleet_and_workflow_assets_load_clean() -> None:
    fleet = load_fleet(ASSETS / "fleet-standin.yaml")
    specs = [t.spec for t in fleet.targets if t.spec is not None]
    assert len(specs) == len(fleet.targets) == 3
    for spec in specs:
        assert validate_spec(spec) == [], spec.name
    workflow = load_workflow(ASSETS / "workflow-standin.yaml")
    assert [s.tool_ref for s in workflow.file.steps] == [
        "infra.soperator.validate",
        "infra.soperator.deploy",
    ]
