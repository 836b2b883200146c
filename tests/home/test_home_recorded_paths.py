"""A record's paths are data: used inside the home that records them, or where the user's
own settings point, never because a record (a copy, a crafted file) names them."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from npa_sop_tui.home.inventory_records import (
    Adoption,
    InventoryEntry,
    OperationRecord,
    RecipeInfo,
)
from npa_sop_tui.home.recorded_paths import (
    UntrustedRecordedPath,
    adopted_here,
    inside_home,
    install_dir,
    recipe_dir,
    remember_adoption,
    require_trusted,
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


# --- the refusal: what it says and what to do ----------------------------------------------


def test_a_refusal_names_the_cluster_the_path_and_the_home_and_carries_the_path_in_json(
    npa_home: Path, tmp_path: Path
) -> None:
    """The message is the user's only clue that the record (not npa) names the folder."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(UntrustedRecordedPath) as refused:
        require_trusted(str(elsewhere), what="the recipe folder", cluster="c")
    assert refused.value.message == (
        f"cluster 'c': its record names the recipe folder {elsewhere}, which npa does not "
        f"use: a recorded path is used only inside the home that records it ({npa_home}), "
        "for the cluster it belongs to"
    )
    # no hint of the caller's own: a copied home is the usual cause
    assert refused.value.hint == (
        "if this home is a copy, run the command with NPA_HOME set to the original "
        "home; a record you did not write is not npa's to follow"
    )
    assert refused.value.recorded == str(elsewhere)
    assert refused.value.json_extra() == {"recorded": str(elsewhere)}
    assert refused.value.exit_code == 2  # a usage problem, before any lock or log


def test_require_trusted_gives_back_a_path_inside_the_home_or_one_the_settings_name(
    npa_home: Path, tmp_path: Path
) -> None:
    inside = npa_home / "soperator" / "c" / "recipe"
    inside.mkdir(parents=True)
    named = tmp_path / "checkout"
    named.mkdir()
    assert require_trusted(str(inside), what="the recipe folder", cluster="c") == inside
    assert require_trusted(str(named), what="the recipe folder", cluster="c", also=[named]) == named
    with pytest.raises(UntrustedRecordedPath) as refused:
        require_trusted(str(named), what="the recipe folder", cluster="c", hint="do this")
    assert refused.value.hint == "do this"


def test_a_recorded_path_that_cannot_be_resolved_is_not_used(npa_home: Path) -> None:
    """A symlink loop inside the home resolves nowhere: it is not "inside" anything."""
    loop = npa_home / "soperator" / "loop"
    loop.parent.mkdir(parents=True)
    loop.symlink_to(loop)
    assert inside_home(loop) is False
    assert trusted(str(loop)) is None
    assert trusted(str(loop), also=[loop]) is None


def test_the_home_itself_counts_as_inside_it(npa_home: Path) -> None:
    assert inside_home(npa_home) is True
    assert trusted(str(npa_home)) == npa_home
    assert trusted("") is None
    assert trusted(None) is None


# --- a cluster's installation folder ---------------------------------------------------------


def test_a_recorded_install_folder_that_is_not_there_is_given_back_for_the_caller_to_report(
    npa_home: Path, tmp_path: Path
) -> None:
    """A missing folder runs nothing, wherever it is: the caller says it is missing."""
    gone = tmp_path / "gone" / "installations" / "c"
    bare = resolve_settings()
    assert install_dir(_entry("c", gone), bare, shared=False) == gone
    assert install_dir(_entry("c", None), bare, shared=False) is None
    empty = _entry("c", None).model_copy(update={"install_dir": ""})
    assert install_dir(empty, bare, shared=False) is None


def test_the_clusters_own_installation_inside_the_home_is_used(npa_home: Path) -> None:
    mine = npa_home / "soperator" / "c" / "install" / "installations" / "c"
    mine.mkdir(parents=True)
    bare = resolve_settings()
    assert install_dir(_entry("c", mine), bare, shared=False) == mine
    assert install_dir(_entry("c", mine), bare, shared=True) == mine


def test_an_installation_in_the_recipe_path_setting_is_used_in_the_checkout_or_its_soperator(
    npa_home: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    beside = checkout / "installations" / "c"
    nested = checkout / "soperator" / "installations" / "c"
    beside.mkdir(parents=True)
    nested.mkdir(parents=True)
    named = resolve_settings({"recipe.path": str(checkout)})
    assert install_dir(_entry("c", beside), named, shared=False) == beside
    assert install_dir(_entry("c", nested), named, shared=False) == nested
    # the checkout named, but not this cluster's installation in it
    other = checkout / "soperator" / "installations" / "d"
    other.mkdir()
    with pytest.raises(UntrustedRecordedPath):
        install_dir(_entry("c", other), named, shared=False)


# --- a cluster's recipe ----------------------------------------------------------------------


def test_a_recipe_is_taken_from_the_settings_first_and_none_is_none(
    npa_home: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    bare = resolve_settings()
    assert recipe_dir(_entry("c", None), bare) is None  # nothing recorded, nothing named
    named = resolve_settings({"terraform_dir": str(checkout)})
    assert recipe_dir(_entry("c", None), named) == checkout


def test_a_recorded_recipe_is_used_inside_the_home_or_where_recipe_path_points(
    npa_home: Path, tmp_path: Path
) -> None:
    clone = npa_home / "recipes" / "soperator"
    clone.mkdir(parents=True)
    assert recipe_dir(_entry("c", None, clone), resolve_settings()) == clone
    checkout = tmp_path / "checkout"
    (checkout / "soperator").mkdir(parents=True)
    named = resolve_settings({"recipe.path": str(checkout)})
    # the checkout itself, or its soperator/ (the recipe folder npa records)
    assert recipe_dir(_entry("c", None, checkout), named) == checkout
    assert recipe_dir(_entry("c", None, checkout / "soperator"), named) == checkout / "soperator"


def test_a_recorded_recipe_outside_what_the_user_named_is_refused_with_what_to_pass(
    npa_home: Path, tmp_path: Path
) -> None:
    recorded = tmp_path / "theirs" / "soperator"
    recorded.mkdir(parents=True)
    with pytest.raises(UntrustedRecordedPath) as refused:
        recipe_dir(_entry("c", None, recorded), resolve_settings())
    assert refused.value.message.startswith(
        f"cluster 'c': its record names the recipe folder {recorded}, which npa does not use"
    )
    assert refused.value.recorded == str(recorded)
    assert refused.value.hint == (
        "pass --terraform-dir with the recipe checkout the cluster was deployed from (or set "
        "recipe.path in config.yaml), so the folder is yours to name, not the record's"
    )


# --- clusters adopted where they are ---------------------------------------------------------


def _adopted(name: str, install: Path, recipe: Path | None = None) -> InventoryEntry:
    return _entry(name, install, recipe).model_copy(update={"adoption": Adoption(origin="recipe")})


def test_an_adopted_installation_outside_the_home_is_refused_unless_named_even_for_the_team(
    npa_home: Path, tmp_path: Path
) -> None:
    """An adopted cluster's folder is not rebuilt here: a teammate's record naming a folder of
    this machine is refused with the bucket too, not silently dropped."""
    folder = tmp_path / "checkout" / "soperator" / "installations" / "prod-main"
    folder.mkdir(parents=True)
    entry = _adopted("c", folder)
    for shared in (False, True):
        with pytest.raises(UntrustedRecordedPath) as refused:
            install_dir(entry, resolve_settings(), shared=shared)
        assert refused.value.message.startswith(
            f"cluster 'c': its record names the adopted installation folder {folder}, "
            "which npa does not use"
        )
        assert refused.value.recorded == str(folder)
        assert refused.value.hint == (
            "adopt it on this machine (`npa soperator adopt --install-dir <folder>`), or "
            "pass --terraform-dir with the recipe checkout it lives in: a folder outside the "
            "npa home is used when you name it, never because a record does"
        )


def test_an_adopted_installation_may_have_any_name_under_installations_of_a_named_checkout(
    npa_home: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    nested = checkout / "soperator" / "installations" / "prod-main"
    beside = checkout / "installations" / "staging"
    nested.mkdir(parents=True)
    beside.mkdir(parents=True)
    for key in ("terraform_dir", "recipe.path"):
        named = resolve_settings({key: str(checkout)})
        assert install_dir(_adopted("c", nested), named, shared=False) == nested
        assert install_dir(_adopted("c", beside), named, shared=False) == beside
    # naming the soperator/ folder itself holds its installations too
    named = resolve_settings({"terraform_dir": str(checkout / "soperator")})
    assert install_dir(_adopted("c", nested), named, shared=False) == nested


def test_an_adopted_installation_inside_the_home_must_still_sit_under_installations(
    npa_home: Path,
) -> None:
    """The existing npa's clones live in the home; a record naming some other home folder
    (the cluster's own record folder, say) is not an installation to run Terraform in."""
    clone = npa_home / "clones" / "soperator" / "installations" / "anything"
    clone.mkdir(parents=True)
    bare = resolve_settings()
    assert install_dir(_adopted("c", clone), bare, shared=False) == clone
    stray = npa_home / "soperator" / "c"
    stray.mkdir(parents=True)
    with pytest.raises(UntrustedRecordedPath, match="the adopted installation folder"):
        install_dir(_adopted("c", stray), bare, shared=False)


def test_a_folder_adopt_was_pointed_at_on_this_machine_is_used_without_naming_it_again(
    npa_home: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout" / "soperator"
    folder = checkout / "installations" / "prod-main"
    folder.mkdir(parents=True)
    remember_adoption("c", folder, checkout)
    record = npa_home / "soperator" / "c" / "adopted-here.json"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    assert json.loads(record.read_text()) == {
        "install_dir": str(folder.resolve()),
        "recipe": str(checkout.resolve()),
    }
    assert record.read_text().endswith("}\n")
    assert adopted_here("c") == [folder.resolve(), checkout.resolve()]
    bare = resolve_settings()
    assert install_dir(_adopted("c", folder), bare, shared=False) == folder
    assert recipe_dir(_adopted("c", folder, checkout), bare) == checkout
    # another cluster's adoption names nothing for this one
    with pytest.raises(UntrustedRecordedPath):
        install_dir(_adopted("d", folder), bare, shared=False)


def test_adopt_remembers_the_real_folder_not_the_link_it_was_given(
    npa_home: Path, tmp_path: Path
) -> None:
    """A link swapped later must not move what was adopted."""
    real = tmp_path / "real" / "installations" / "x"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real.parent.parent)
    remember_adoption("c", link / "installations" / "x", link)
    assert adopted_here("c") == [real, real.parent.parent]


def _write_adoption_record(npa_home: Path, name: str, text: str) -> Path:
    record = npa_home / "soperator" / name / "adopted-here.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text(text)
    return record


def test_an_adoption_record_of_another_shape_names_no_folder(
    npa_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "installations" / "x"
    assert adopted_here("c") == []  # not adopted here
    for text in (
        json.dumps([str(folder)]),  # a list, not npa's object
        "{not json",
        "[" * 50_000,  # nested past the parser's depth
        json.dumps({"install_dir": 7, "recipe": "relative/installations/x"}),
    ):
        _write_adoption_record(npa_home, "c", text)
        assert adopted_here("c") == [], text[:20]
    # only the absolute string values count
    _write_adoption_record(
        npa_home, "c", json.dumps({"install_dir": str(folder), "x": 1, "y": "rel/x"})
    )
    assert adopted_here("c") == [folder]


def test_an_adoption_record_over_64_kib_or_not_a_regular_file_names_no_folder(
    npa_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "installations" / "x"
    body = json.dumps({"install_dir": str(folder)})
    limit = 1 << 16
    _write_adoption_record(npa_home, "c", body.ljust(limit))  # exactly the limit: read
    assert adopted_here("c") == [folder]
    record = _write_adoption_record(npa_home, "c", body.ljust(limit + 1))
    assert adopted_here("c") == []
    record.unlink()
    os.mkfifo(record)  # would block a plain open(): refused at once
    assert adopted_here("c") == []
