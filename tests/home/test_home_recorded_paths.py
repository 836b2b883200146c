"""A record's paths are data: used inside the home that records them, or where the user's
own settings point, never because a record (a copy, a crafted file) names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.home.inventory_records import InventoryEntry, OperationRecord, RecipeInfo
from npa_sop_tui.home.recorded_paths import (
    UntrustedRecordedPath,
    install_dir,
    recipe_dir,
    trusted,
)
from npa_sop_tui.home.settings import resolve_settings


def _entry(name: str, install: Path | None, recipe: Path | None = None) -> InventoryEntry:
    return InventoryEntry(
        name=name,
        kube_context=f"nebius-{name}-slurm",
        install_dir=str(install) if install else None,
        recipe=RecipeInfo(origin="git", path=str(recipe)) if recipe else None,
    )


def test_inside_the_home_only_with_links_resolved(npa_home: Path, tmp_path: Path) -> None:
    inside = npa_home / "soperator" / "a" / "install" / "installations" / "a"
    inside.mkdir(parents=True)
    outside = tmp_path / "elsewhere" / "installations" / "a"
    outside.mkdir(parents=True)
    (npa_home / "soperator" / "sneaky").symlink_to(outside.parent.parent)
    sibling = tmp_path / f"{npa_home.name}-copy"  # shares the home's name as a prefix
    sibling.mkdir()
    assert trusted(str(inside)) == inside
    assert trusted(str(outside)) is None
    assert trusted(str(npa_home / "soperator" / "sneaky" / "installations" / "a")) is None
    assert trusted(str(sibling)) is None
    assert trusted("soperator/a") is None  # relative: would follow the cwd
    assert trusted(str(outside), also=[outside]) == outside  # the settings name it


def test_a_records_install_folder_outside_the_home_is_refused_unless_the_settings_hold_it(
    npa_home: Path, tmp_path: Path
) -> None:
    """Defect: the inventory's `install_dir` was trusted: a crafted inventory.json could point
    Terraform at any folder."""
    checkout = tmp_path / "checkout"
    mine = checkout / "soperator" / "installations" / "c"
    mine.mkdir(parents=True)
    entry = _entry("c", mine, checkout / "soperator")
    bare = resolve_settings()
    with pytest.raises(UntrustedRecordedPath) as refused:
        install_dir(entry, bare, shared=False)
    assert refused.value.message.startswith(
        f"cluster 'c': its record names the installation folder {mine}, which npa does not use"
    )
    assert "pass --terraform-dir" in (refused.value.hint or "")
    assert install_dir(entry, bare, shared=True) is None  # a teammate's: built here instead
    with pytest.raises(UntrustedRecordedPath, match="the recipe folder"):
        recipe_dir(entry, bare)
    named = resolve_settings({"terraform_dir": str(checkout)})
    assert install_dir(entry, named, shared=False) == mine
    assert recipe_dir(entry, named) == checkout
    # another cluster's installation in the home is not this one's either
    theirs = npa_home / "soperator" / "other" / "install" / "installations" / "other"
    theirs.mkdir(parents=True)
    with pytest.raises(UntrustedRecordedPath):
        install_dir(_entry("c", theirs), bare, shared=False)


def test_a_recorded_log_outside_the_home_is_not_read(npa_home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not a log\n")
    inside = npa_home / "soperator" / "x" / "operations" / "a.ndjson"
    record = OperationRecord(id="a", kind="deploy", started=1.0, log=str(outside))
    assert record.log_file is None
    assert record.model_copy(update={"log": str(inside)}).log_file == inside
