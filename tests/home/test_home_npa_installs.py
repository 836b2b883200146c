"""home/npa_installs.py: the existing npa's installations, found by its layout alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import npa_installs

from testkit.npa_home import NPA_REF, SIDECAR, sidecar

IDENTITY = {
    "region": "eu-north1",
    "tenant_id": "tenant-e00npa",
    "project_id": "project-e00npa",
    "subnet_id": "vpcsubnet-e00npa",
}


def install(work_root: Path, name: str, side: object = None, *, ref: str = NPA_REF[:12]) -> Path:
    recipe = work_root / f"nebius-solutions-library-{ref}" / "soperator"
    (recipe / "installations" / "example").mkdir(parents=True, exist_ok=True)
    folder = recipe / "installations" / name
    folder.mkdir(parents=True)
    (folder / "terraform.tfstate").write_text("{}")
    if side is not None:
        text = side if isinstance(side, str) else json.dumps(side)
        (folder / SIDECAR).write_text(text)
    return folder


def test_standalone_and_fleet_installations_are_found(npa_home: Path) -> None:
    one = install(npa_home / "soperator", "legacy1", sidecar(IDENTITY, "legacy1"))
    legacy = install(npa_home / "soperator", "old", sidecar(IDENTITY, "old"), ref="")
    target = npa_home / "fleet" / "team" / "alpha" / "train"
    fleet = install(target / "soperator", "train", sidecar(IDENTITY, "train"))
    install(target / "soperator", "someone-else", sidecar(IDENTITY, "x"))  # not the target's
    found = {i.name: i for i in npa_installs.discover()}
    assert set(found) == {"legacy1", "old", "train"}
    assert found["legacy1"].install_dir == one and found["legacy1"].problem is None
    assert found["legacy1"].identity() == IDENTITY and found["legacy1"].recipe_ref == NPA_REF[:12]
    assert found["old"].install_dir == legacy and found["old"].recipe_ref is None
    assert (found["train"].fleet, found["train"].project_key) == ("team", "alpha")
    assert found["train"].install_dir == fleet
    assert npa_installs.find("legacy1") == found["legacy1"]
    assert npa_installs.find("nosuch") is None


def test_links_the_example_and_names_that_are_not_cluster_names_are_skipped(
    npa_home: Path, tmp_path: Path
) -> None:
    elsewhere = install(tmp_path / "elsewhere", "stolen", sidecar(IDENTITY, "stolen"))
    root = npa_home / "soperator"
    install(root, "real", sidecar(IDENTITY, "real"))
    installations = next(root.glob("nebius-solutions-library-*")) / "soperator" / "installations"
    (installations / "linked").symlink_to(elsewhere)
    (installations / "Bad_Name").mkdir()
    (installations / "Bad_Name" / SIDECAR).write_text(json.dumps(sidecar(IDENTITY, "x")))
    (installations / "example" / "terraform.tfstate").write_text("{}")
    (root / "nebius-solutions-library-linked").symlink_to(elsewhere.parent.parent.parent)
    assert [i.name for i in npa_installs.discover()] == ["real"]


@pytest.mark.parametrize(
    ("side", "problem"),
    [
        (None, "is missing: the identity this cluster was deployed with is unknown"),
        ("{not json", "is not JSON"),
        ("[1, 2]", "is not a JSON object"),
        ({**sidecar(IDENTITY, "c"), "backend": "mk8s"}, "belongs to backend 'mk8s'"),
        ({**sidecar(IDENTITY, "c"), "subnet_id": ""}, "does not pin subnet_id"),
        ({**sidecar(IDENTITY, "c"), "region": 7}, "must be strings"),
    ],
)
def test_a_sidecar_npa_would_refuse_is_reported_not_trusted(
    npa_home: Path, side: object, problem: str
) -> None:
    install(npa_home / "soperator", "c", side)
    (found,) = npa_installs.discover()
    assert found.problem is not None and problem in found.problem


def test_two_installations_of_one_name_are_an_error(npa_home: Path) -> None:
    install(npa_home / "soperator", "twice", sidecar(IDENTITY, "twice"))
    install(npa_home / "soperator", "twice", sidecar(IDENTITY, "twice"), ref="")
    with pytest.raises(UsageError, match="more than one installation of 'twice'"):
        npa_installs.find("twice")


@pytest.mark.parametrize(
    "name", ["recipes", "nebius-solutions-library", "nebius-solutions-library-7046"]
)
def test_names_of_other_folders_are_not_cluster_names(name: str) -> None:
    from npa_sop_tui.home.paths import cluster_dir

    with pytest.raises(UsageError, match="cannot be a cluster name"):
        cluster_dir(name)


def test_a_sidecar_identity_that_is_not_an_identity_is_refused(npa_home: Path) -> None:
    hostile = {**sidecar(IDENTITY, "h"), "region": "eu-north1\x1b]52;c;bad\x07"}
    install(npa_home / "soperator", "h", hostile)
    (found,) = npa_installs.discover()
    assert found.problem is not None and "is not a region name" in found.problem
    install(npa_home / "soperator", "p", {**sidecar(IDENTITY, "p"), "project_id": "x"})
    problems = {i.name: i.problem for i in npa_installs.discover()}
    assert "must start with 'project-'" in (problems["p"] or "")
