"""Identifiers before paths: a region, a project, tenant or subnet ID or a CLI profile of
another shape is refused where it is read (a flag, the environment, config.yaml, a fleet
file), exit 2 with the source and the shape expected, before it becomes part of a path or
a line. Nothing outside the home is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

from testkit.fleets import fleet_text
from testkit.hostile import assert_inert
from testkit.inventory_files import record


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse: a flag's own type refused the value
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Where a region like `../../…/victim` would land: never created or written."""
    return tmp_path / "victim"


def _region_to(victim: Path, home: Path) -> str:
    # from <home>/catalog/platforms-<region>.json to <victim>.json
    return "../" * (len(home.parts) + 1) + str(victim).lstrip("/")


def test_a_region_is_used_as_a_path_catalog_refresh_region_flag_is_refused(
    npa_home: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    region = _region_to(victim, npa_home / "sandbox" / "catalog")
    code, _, err = _cli(capsys, "soperator", "catalog", "refresh", "--sandbox", "--region", region)
    assert code == 2
    assert "argument --region" in err and "is not a region name" in err and "eu-north1" in err
    assert "Traceback" not in err
    assert not list(victim.parent.glob("victim*"))


def test_a_region_is_used_as_a_path_npa_region_is_refused(
    npa_home: Path,
    victim: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NPA_REGION", _region_to(victim, npa_home / "sandbox" / "catalog"))
    code, _, err = _cli(capsys, "soperator", "catalog", "refresh", "--sandbox")
    assert code == 2
    assert err.startswith("error: NPA_REGION: region '") and "is not a region name" in err
    assert not list(victim.parent.glob("victim*"))
    assert not (npa_home / "sandbox" / "catalog").exists()


@pytest.mark.parametrize(
    ("line", "field", "shape"),
    [
        ('region: "../../tmp/x"', "region", "is not a region name"),
        ('project_id: "project-e00\\nregion: fake"', "project_id", "is not an ID"),
        ("tenant_id: tenant-A/../b", "tenant_id", "is not an ID"),
        ("state: {service_account_id: sa-1}", "state.service_account_id", "must start with"),
    ],
)
def test_config_yaml_identifiers_are_checked_as_it_is_read(
    npa_home: Path, capsys: pytest.CaptureFixture[str], line: str, field: str, shape: str
) -> None:
    config = npa_home / "config.yaml"
    config.write_text(f"# team settings\n{line}\n")
    code, out, err = _cli(capsys, "soperator", "config", "show")
    assert code == 2 and out == ""
    assert f"{config}:2:" in err and f"{field}:" in err and shape in err


@pytest.mark.parametrize(
    ("variable", "value", "shape"),
    [
        ("NPA_PROJECT_ID", "project-e00x\nregion                    eu-north1   flag", "not an ID"),
        ("NPA_TENANT_ID", "tenant-e00 x", "not an ID"),
        ("NPA_SUBNET_ID", "subnet-e00x", "must start with 'vpcsubnet-'"),
        ("NPA_STATE_REGION", "eu north", "not a region name"),
        ("NEBIUS_PROFILE", "../other", "not one word"),
    ],
)
def test_an_identity_value_with_a_newline_or_another_shape_is_refused_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    shape: str,
) -> None:
    """`config show` never prints a fake line: the value is refused as it is read."""
    monkeypatch.setenv(variable, value)
    code, out, err = _cli(capsys, "soperator", "config", "show")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {variable}: ") and shape in err
    assert len(err.splitlines()) == 2  # the message and its hint: the newline stays quoted


@pytest.mark.parametrize(
    "argv",
    [
        ["soperator", "catalog", "refresh", "--sandbox", "--project", "project-x/../y"],
        ["soperator", "preflight", "--spec", "s.yaml", "--sandbox", "--project", "x\ny"],
        ["soperator", "plan", "--spec", "s.yaml", "--project", "../prod"],
        ["soperator", "plan", "--spec", "s.yaml", "--project", "project-E00/x"],
        ["soperator", "catalog", "refresh", "--sandbox", "--profile", "a b"],
    ],
)
def test_identifier_flags_are_checked_before_anything_runs(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, _, err = _cli(capsys, *argv)
    assert code == 2 and "Traceback" not in err
    assert "project" in err or "profile" in err
    assert "spec file not found" not in err  # refused before the spec is read


def test_a_fleet_files_identifiers_are_checked_with_their_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = fleet_text(beta_region='"../../x"').replace(
        "project_id: project-e00alpha", 'project_id: "project-e00alpha\\nx"'
    )
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(text)
    code, _, err = _cli(capsys, "fleet", "plan", "--file", str(fleet))
    assert code == 2
    region_line = text.splitlines().index('    region: "../../x"') + 1
    assert f"{fleet}:{region_line}:" in err and "projects[1].region: region '../../x'" in err
    assert "projects[0].project_id: project_id 'project-e00alpha\\nx' is not an ID" in err


def test_a_region_is_used_as_a_path_inventory_record_is_damaged_not_followed(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record whose region is not a region is named as damaged, never shown or used."""
    record(npa_home, "demo", region="../../../tmp/victim")
    code, out, err = _cli(capsys, "soperator", "list")
    assert code == 0
    assert "demo" not in out and "damaged" in err and "is not a region name" in err
    assert_inert(out + err)
