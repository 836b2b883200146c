"""The fleet file: shape, positioned errors, uniqueness, identity rule, selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.loader import FleetError, load_fleet, parse_fleet_text
from npa_sop_tui.fleet.runner import FleetRunner, FleetRunOptions
from npa_sop_tui.fleet.select import select_targets

from testkit.fleets import ASSETS, fleet_text

# sandbox runs keep their state in the test's npa home, where the tests look
pytestmark = pytest.mark.usefixtures("sandbox_in_home")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    return path


def test_example_fleet_resolves_targets_with_identity_from_the_envelope() -> None:
    loaded = load_fleet(ASSETS / "fleet-standin.yaml")
    keys = [t.key for t in loaded.targets]
    assert keys == ["alpha/train-a", "alpha/train-b", "beta/infer-a"]
    by_key = {t.key: t for t in loaded.targets}
    # defaults deep-merged; the target's own workers list replaces the default one
    assert by_key["alpha/train-a"].spec.workers[0].size == 2
    assert by_key["alpha/train-b"].spec.workers[0].size == 3
    assert by_key["beta/infer-a"].project_id == "project-e00beta"
    assert all(t.tenant_id == "tenant-e00sandbox" for t in loaded.targets)
    assert all(t.spec.name == t.name for t in loaded.targets)
    # the embedded spec carries no identity: it comes from the envelope at deploy time
    assert all(t.spec.project_id is None and t.spec.region is None for t in loaded.targets)


def test_duplicate_soperator_name_across_projects_names_both_places(tmp_path: Path) -> None:
    path = _write(tmp_path, fleet_text(a="same", c="same"))
    with pytest.raises(FleetError) as info:
        load_fleet(path)
    (finding,) = [f for f in info.value.findings if "duplicate" in f.message]
    assert finding.path == "projects[1].clusters[0].name"
    assert finding.line == 24  # the second `- name: same`
    assert f"alpha/same (projects[0].clusters[0] at {path}:16)" in finding.message
    assert f"beta/same (projects[1].clusters[0] at {path}:24)" in finding.message
    assert info.value.exit_code == 2


def test_identity_fields_and_api_version_under_soperator_are_rejected_with_lines() -> None:
    text = fleet_text().replace(
        "      - name: fb\n",
        "      - name: fb\n        soperator:\n          project_id: project-x\n"
        "          apiVersion: npa.soperator/v0.0.1\n",
    )
    with pytest.raises(FleetError) as info:
        parse_fleet_text(text, source="f.yaml")
    rendered = {f.path: f.render() for f in info.value.findings}
    assert "projects[0].clusters[1].soperator.project_id" in rendered
    assert rendered["projects[0].clusters[1].soperator.project_id"].startswith("f.yaml:20:")
    assert (
        "must not set target identity field 'project_id'"
        in rendered["projects[0].clusters[1].soperator.project_id"]
    )
    assert "projects[0].clusters[1].soperator.apiVersion" in rendered


def test_embedded_spec_errors_point_into_the_fleet_file() -> None:
    text = fleet_text().replace(
        "      - name: fc\n",
        "      - name: fc\n        soperator:\n          workers:\n"
        "            - {name: cpu, sise: 2}\n",
    )
    with pytest.raises(FleetError) as info:
        parse_fleet_text(text, source="f.yaml")
    (finding,) = info.value.findings
    assert finding.path == "projects[1].clusters[0].soperator.workers[0].sise"
    assert (finding.file, finding.line) == ("f.yaml", 27)
    assert finding.hint == "did you mean 'size'?"


def test_error_from_a_default_points_at_the_defaults_block() -> None:
    text = fleet_text().replace("        size: 1\n", "        size: 0\n")
    with pytest.raises(FleetError) as info:
        parse_fleet_text(text, source="f.yaml")
    paths = {f.path for f in info.value.findings}
    assert paths == {"defaults.soperator.workers[0].size"}
    assert all(f.line == 11 for f in info.value.findings)


def test_unknown_fields_get_hints_and_api_version_is_checked() -> None:
    text = fleet_text().replace("apiVersion: npa.fleet/v0.0.1", "apiVersion: npa.fleet/v9")
    text = text.replace("  - name: beta\n", "  - name: beta\n    projet_id: x\n")
    with pytest.raises(FleetError) as info:
        parse_fleet_text(text, source="f.yaml")
    by_path = {f.path: f for f in info.value.findings}
    assert "expected npa.fleet/v0.0.1" in (by_path["apiVersion"].hint or "")
    assert by_path["projects[1].projet_id"].hint == "did you mean 'project_id'?"
    assert by_path["projects[1].projet_id"].line == 21


def test_soperator_name_must_match_target_name() -> None:
    text = fleet_text().replace(
        "      - name: fc\n", "      - name: fc\n        soperator:\n          name: other\n"
    )
    with pytest.raises(FleetError, match="must match the fleet target name 'fc'"):
        parse_fleet_text(text)


def test_backend_defaults_to_mk8s_and_mk8s_targets_are_refused_before_running(
    tmp_path: Path,
) -> None:
    text = fleet_text().replace("  backend: soperator\n", "")
    loaded = parse_fleet_text(text)
    assert {t.backend for t in loaded.targets} == {"mk8s"}
    runner = FleetRunner(loaded, loaded.targets, FleetRunOptions(sandbox=True))
    import asyncio

    with pytest.raises(UsageError, match="npa-sop-tui runs soperator targets only") as info:
        asyncio.run(runner.deploy())
    assert "--select backend=soperator" in (info.value.hint or "")
    assert not (tmp_path.parent / "npa-home" / "fleet").exists()


def test_selection_by_name_project_label_and_errors() -> None:
    loaded = parse_fleet_text(fleet_text())
    keys = lambda sel: [t.key for t in select_targets(loaded.targets, sel)]  # noqa: E731
    assert keys(["project=alpha"]) == ["alpha/fa", "alpha/fb"]
    assert keys(["label=team=serving"]) == ["beta/fc"]
    assert keys(["name=fa,fc"]) == ["alpha/fa", "beta/fc"]
    assert keys(["project=alpha", "name=fb"]) == ["alpha/fb"]
    with pytest.raises(UsageError, match="matches no target"):
        select_targets(loaded.targets, ["name=nope"])
    with pytest.raises(UsageError, match="is not a selector"):
        select_targets(loaded.targets, ["colour=red"])
    with pytest.raises(UsageError, match="needs key=value"):
        select_targets(loaded.targets, ["label=team"])


def test_cli_bad_fleet_exits_2_and_touches_nothing(
    tmp_path: Path, npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, fleet_text(a="dup", c="dup"))
    code = main(["fleet", "deploy", "--file", str(path), "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2
    assert "duplicate soperator cluster name 'dup'" in err
    assert "Traceback" not in err
    assert not (npa_home / "fleet").exists()
    assert not (npa_home / "soperator").exists()


def test_cli_json_error_document_carries_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    path = _write(tmp_path, fleet_text(a="dup", c="dup"))
    code = main(["fleet", "plan", "--file", str(path), "--output", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 2 and doc["ok"] is False and doc["error"] == "FleetError"
    assert doc["findings"][0]["line"] == 24


def test_missing_project_id_is_a_clear_error_not_a_crash(tmp_path: Path) -> None:
    import asyncio

    text = fleet_text().replace("    project_id: project-e00beta\n", "")
    loaded = parse_fleet_text(text)
    runner = FleetRunner(loaded, loaded.targets, FleetRunOptions(sandbox=True))
    with pytest.raises(UsageError, match=r"beta/fc: identity is incomplete") as info:
        asyncio.run(runner.plan())
    assert "projects[1].project_id" in info.value.message


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_fleet(tmp_path / "nope.yaml")
    with pytest.raises(FleetError) as info:
        parse_fleet_text("apiVersion: npa.fleet/v0.0.1\nname: [\n", source="x.yaml")
    assert info.value.findings[0].line is not None
