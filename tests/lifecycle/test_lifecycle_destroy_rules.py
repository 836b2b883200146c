"""lifecycle/destroy.py's decisions, each on plain values and real files (no Terraform):
where the installation is, `--project`, the verdicts after Terraform and after the Nebius
check, and what the record and the user are told."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.inventory import InventoryEntry
from npa_sop_tui.home.inventory_records import Adoption, RecipeInfo
from npa_sop_tui.home.recorded_paths import UntrustedRecordedPath
from npa_sop_tui.lifecycle import destroy as rules
from npa_sop_tui.lifecycle.results import DestroyIncomplete
from npa_sop_tui.terraform.run_result import RunResult

from testkit.lifecycle import options


def _settings(**flags: str) -> Any:
    from npa_sop_tui.lifecycle import steps

    return steps.environment_of(options(flags=flags)).settings


def _entry(name: str, install_dir: Path | None = None, **fields: Any) -> InventoryEntry:
    entry = InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm", **fields)
    entry.install_dir = str(install_dir) if install_dir is not None else None
    return entry


# -- where the installation is ------------------------------------------------------------


def test_a_recorded_folder_on_this_machine_is_where_destroy_runs(
    npa_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "install"
    folder.mkdir()
    entry = _entry("here", folder)
    for shared in (False, True):
        assert rules.installation_here(entry, folder, _settings(), shared=shared) == folder


def test_a_recorded_recipe_outside_the_home_is_refused_before_anything_starts(
    npa_home: Path, tmp_path: Path
) -> None:
    """The recipe Terraform would run is checked with the folder, before the lock and the
    log: a record is data, so a recipe outside the home needs the caller to name it."""
    folder = tmp_path / "install"
    folder.mkdir()
    outside = tmp_path / "elsewhere" / "soperator"
    outside.mkdir(parents=True)
    entry = _entry("recipe", folder, recipe=RecipeInfo(origin="local", path=str(outside)))
    with pytest.raises(UntrustedRecordedPath, match="the recipe folder"):
        rules.installation_here(entry, folder, _settings(), shared=False)
    named = _settings(terraform_dir=str(outside))
    assert rules.installation_here(entry, folder, named, shared=False) == folder


@pytest.mark.parametrize("recorded", ["missing", "file", "none"])
def test_without_a_folder_here_the_teams_bucket_rebuilds_it_and_local_state_refuses(
    npa_home: Path, tmp_path: Path, recorded: str
) -> None:
    """No installation folder on this machine (none recorded, gone, or not a folder): with
    the team's bucket it is rebuilt from the spec as deployed (None); with local state there
    is nothing to run Terraform in, so destroy says so and what to do."""
    folder = None if recorded == "none" else tmp_path / "install"
    if recorded == "file":
        assert folder is not None
        folder.write_text("not a folder")
    outside = tmp_path / "elsewhere"  # never checked: nothing of it would be run here
    entry = _entry("gone", folder, recipe=RecipeInfo(origin="local", path=str(outside)))
    assert rules.installation_here(entry, folder, _settings(), shared=True) is None
    with pytest.raises(UsageError) as refused:
        rules.installation_here(entry, folder, _settings(), shared=False)
    where = "none recorded" if folder is None else str(folder)
    assert refused.value.message == f"cluster 'gone' has no installation folder ({where})"
    assert refused.value.hint == (
        "it may never have been deployed; remove its inventory folder if it is gone"
    )


# -- --project -----------------------------------------------------------------------------


def _recorded_project(folder: Path, project: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".npa-env.json").write_text(json.dumps({"TF_VAR_iam_project_id": project}))
    return folder


def test_another_project_than_the_recorded_one_is_refused_never_followed(
    npa_home: Path, tmp_path: Path
) -> None:
    folder = _recorded_project(tmp_path / "install", "project-e00home")
    entry = _entry("moved", folder)
    with pytest.raises(UsageError) as refused:
        rules.check_project(entry, folder, options(project="project-e00elsewhere"))
    assert refused.value.message == (
        "project 'project-e00elsewhere' does not match the persisted project_id for "
        "existing installation 'moved'; refusing to destroy"
    )
    assert refused.value.hint == "its project is 'project-e00home'; drop --project"


def test_the_recorded_project_or_none_recorded_lets_destroy_go_on(
    npa_home: Path, tmp_path: Path
) -> None:
    folder = _recorded_project(tmp_path / "install", "project-e00home")
    entry = _entry("kept", folder)
    rules.check_project(entry, folder, options(project="project-e00home"))
    bare = tmp_path / "bare"  # no environment file: nothing recorded to disagree with
    bare.mkdir()
    rules.check_project(_entry("kept", bare), bare, options(project="project-e00any"))
    rules.check_project(_entry("kept"), None, options(project="project-e00any"))


def test_an_adopted_clusters_project_is_its_pinned_identity(npa_home: Path, tmp_path: Path) -> None:
    """An adopted cluster records no environment file of ours: its pinned identity decides."""
    folder = tmp_path / "install"  # its recorded environment would say otherwise: not read
    _recorded_project(folder, "project-e00other")
    pinned = Adoption(origin="recipe", identity={"project_id": "project-e00pinned"})
    entry = _entry("adopted", folder, adoption=pinned)
    rules.check_project(entry, folder, options(project="project-e00pinned"))
    with pytest.raises(UsageError, match="does not match the persisted project_id"):
        rules.check_project(entry, folder, options(project="project-e00other"))


# -- the record, the plan shown, the verdicts, the summary -----------------------------------


def test_the_record_names_the_folder_and_a_destroy_under_way_before_terraform(
    tmp_path: Path,
) -> None:
    entry = _entry("busy", None)
    rules.mark_destroying(entry, tmp_path / "install")
    assert (entry.install_dir, entry.state) == (str(tmp_path / "install"), "destroying")


def test_the_plan_shown_removes_every_resource_in_state_and_adds_nothing() -> None:
    summary, label = rules.destroy_plan("op-1", 7)
    shown = (summary.operation_id, summary.phase, summary.add, summary.change, summary.remove)
    assert shown == ("op-1", "destroy", 0, 0, 7)
    assert label == "Destroying 7 resources"


def _run(returncode: int, *, interrupted: bool = False, error: str = "") -> RunResult:
    run = RunResult(args=["destroy"], returncode=returncode, duration=1.0, interrupted=interrupted)
    if error:
        run.log_tail.append(f"Error: {error}")
    return run


def test_an_empty_state_after_a_clean_destroy_is_complete() -> None:
    assert rules.terraform_verdict("done", _run(0), []) is None


def test_resources_left_in_state_after_a_clean_exit_are_incomplete() -> None:
    """Terraform can exit 0 while resources remain: still destroy-incomplete, naming them."""
    verdict = rules.terraform_verdict("part", _run(0), ["null_resource.a", "null_resource.b"])
    assert isinstance(verdict, DestroyIncomplete)
    assert verdict.remaining == ["null_resource.a", "null_resource.b"]
    assert verdict.message.startswith(
        "destroy of 'part' is incomplete (resources are still in state); 2 resource(s) remain"
    )
    assert verdict.hint == "fix the cause and destroy 'part' again"


@pytest.mark.parametrize("interrupted", [False, True])
def test_a_failed_destroy_gives_terraforms_own_error_as_the_reason(interrupted: bool) -> None:
    """A failed or interrupted Terraform is incomplete even when the state reads empty, and
    the reason is Terraform's error, never "still in state"."""
    run = _run(0 if interrupted else 1, interrupted=interrupted, error="no such flag")
    for remaining in ([], ["null_resource.a"]):
        verdict = rules.terraform_verdict("tffail", run, remaining)
        assert isinstance(verdict, DestroyIncomplete)
        assert verdict.message.startswith("destroy of 'tffail' is incomplete (Error: no such flag)")
        assert verdict.remaining == remaining


def test_what_nebius_still_has_makes_the_destroy_incomplete() -> None:
    assert rules.nebius_verdict("kept", []) is None
    verdict = rules.nebius_verdict("kept", ["filesystem jail (fs-1, ready)"])
    assert isinstance(verdict, DestroyIncomplete)
    assert verdict.remaining == ["filesystem jail (fs-1, ready)"]
    assert verdict.message.startswith(
        "destroy of 'kept' is incomplete (still present in Nebius after destroy); "
    )


@pytest.mark.parametrize("planned", [True, False])
def test_a_destroyed_cluster_keeps_no_outputs_and_no_saved_plan(
    tmp_path: Path, planned: bool
) -> None:
    if planned:
        (tmp_path / ".npa-plan").mkdir()
        (tmp_path / ".npa-plan" / "plan.bin").write_text("plan")
    (tmp_path / "terraform.tfvars.json").write_text("{}")
    entry = _entry("gone", tmp_path)
    entry.outputs = {"login": "1.2.3.4"}
    rules.forget_deployment(entry, tmp_path)
    assert (entry.state, entry.outputs) == ("destroyed", {})
    assert not (tmp_path / ".npa-plan").exists()
    assert (tmp_path / "terraform.tfvars.json").is_file()  # only the plan goes


def test_the_summary_names_the_cluster_and_what_was_removed() -> None:
    assert rules.destroyed_message("flagged", 5) == "destroyed 'flagged': 5 resources removed"


# -- the spec a rebuilt installation starts from ---------------------------------------------

OLDER_SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: legacy
workers:
  - name: cpu
    size: 1
    boot_disk_gib: 256
"""


def test_the_spec_as_deployed_is_rebuilt_as_it_is_even_under_older_rules(npa_home: Path) -> None:
    """What an older npa deployed (a 256 GiB boot disk; today's rule is >= 512) is still read
    for its destroy, not refused by today's rules and left running."""
    from npa_sop_tui.spec.model import load_spec
    from npa_sop_tui.spec.reading import SpecError
    from npa_sop_tui.state.stores import default_store

    store = default_store()
    store.save_spec("legacy", OLDER_SPEC)
    kept = store.spec_file("legacy")
    assert kept is not None
    with pytest.raises(SpecError, match="boot_disk_gib"):
        load_spec(kept)  # today's rules refuse it
    spec = rules.deployed_spec(store, "legacy")
    assert (spec.name, spec.workers[0].boot_disk_gib) == ("legacy", 256)


def test_without_the_spec_as_deployed_destroy_says_where_to_run_it_from(npa_home: Path) -> None:
    from npa_sop_tui.state.stores import default_store

    store = default_store()
    with pytest.raises(UsageError) as refused:
        rules.deployed_spec(store, "elsewhere")
    assert refused.value.message == (
        f"cluster 'elsewhere' has no spec as deployed in {store.describe()}, so its "
        "installation cannot be rebuilt on this machine"
    )
    assert refused.value.hint == "destroy it from the machine that deployed it"
