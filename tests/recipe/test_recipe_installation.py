"""Each cluster's installation folder: its layout, the recipe copied in without following a
link, private files in the npa home, Terraform never run through a link, and the variables
recorded for a later run read back as data (only the recipe's own TF_VAR_* names)."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from npa_sop_tui.home.files import HomeHardLink, HomeSymlink
from npa_sop_tui.recipe import installation
from npa_sop_tui.recipe import source as recipe
from npa_sop_tui.sandbox import local_terraform
from npa_sop_tui.sandbox.local_terraform import standin_recipe_dir

from testkit.hostile_files import untouched
from testkit.hostile_files import victim as outside_file


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_installation_layout(npa_home: Path, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(local_terraform.STANDIN_RECIPE, checkout)
    # a checkout of a real recipe: the same layout, without the stand-in's marker
    (checkout / "soperator" / recipe.STANDIN_MARKER).unlink()
    writable = recipe.resolve(checkout, recipe.RecipeSettings())
    install = installation.prepare_installation(
        writable, "c1", {"company_name": "c1"}, {"TF_VAR_x": "1"}
    )
    # beside the example, as the recipe's README asks; no example tfvars; private vars
    assert install.dir == writable.root / "installations" / "c1"
    assert not (install.dir / "terraform.tfvars").exists()
    assert _mode(install.tfvars_path) == 0o600
    assert _mode(install.env_path) == 0o600
    assert (install.dir / "main.tf").is_file()
    assert _mode(install.dir / "main.tf") == 0o644  # the user's checkout keeps its modes

    packaged = recipe.resolve(local_terraform.STANDIN_RECIPE, recipe.RecipeSettings())
    install = installation.prepare_installation(packaged, "c2", {}, {})
    assert install.dir.is_relative_to(Path(os.environ["NPA_HOME"]))
    assert (install.dir / "../../modules/k8s/main.tf").resolve().is_file()
    assert not (packaged.root / "installations" / "c2").exists()


def test_stand_in_recipe_files_in_the_home_are_private(npa_home: Path) -> None:
    """Defect: the stand-in recipe's files were 0644 in a home documented as 0600, both where
    it is generated and in each cluster's installation copied from it."""
    from npa_sop_tui.sandbox.standin import standin_for_version

    standin = standin_for_version("4.1.6")  # generated into the home from the contract
    built = recipe.resolve(standin, recipe.RecipeSettings(), origin="sandbox")
    install = installation.prepare_installation(built, "priv", {}, {})
    for root in (standin, install.dir):
        assert root.is_relative_to(npa_home)
        for path in [root, *root.rglob("*")]:
            if path.is_symlink():
                continue  # the links to the recipe's modules: npa's own, mode is the target's
            want = 0o700 if path.is_dir() else 0o600
            assert _mode(path) & ~0o100 == want & ~0o100, path  # an executable keeps its x bit
            assert not _mode(path) & 0o077, path


def test_a_symlinked_recipe_file_in_the_installation_is_replaced_not_written_through(
    npa_home: Path, tmp_path: Path
) -> None:
    """Defect: a symlinked `variables.tf` in a cluster's install folder was overwritten by
    the recipe copy, i.e. the file it pointed at outside the home."""
    victim = outside_file(tmp_path, "precious.tf")
    built = recipe.resolve(standin_recipe_dir(), recipe.RecipeSettings())
    target = installation.installation_dir(built, "linked")
    target.mkdir(parents=True)
    (target / "variables.tf").symlink_to(victim)
    os.link(victim, target / "main.tf")
    install = installation.prepare_installation(built, "linked", {}, {})
    assert untouched(victim)
    for name in ("variables.tf", "main.tf"):
        copied = install.dir / name
        assert not copied.is_symlink() and copied.stat().st_nlink == 1
        assert copied.read_bytes() == (built.example_dir / name).read_bytes()


@pytest.mark.parametrize(
    ("name", "link", "refusal"),
    [
        ("terraform.tfstate", "symlink", HomeSymlink),
        ("terraform.tfstate", "hard", HomeHardLink),
        ("terraform.tfstate.backup", "symlink", HomeSymlink),
        (".terraform.lock.hcl", "hard", HomeHardLink),
        (".terraform", "symlink", HomeSymlink),
    ],
)
def test_terraform_never_runs_where_it_would_write_through_a_link(
    npa_home: Path, tmp_path: Path, name: str, link: str, refusal: type[Exception]
) -> None:
    victim = outside_file(tmp_path, "precious.tf")
    built = recipe.resolve(standin_recipe_dir(), recipe.RecipeSettings())
    target = installation.installation_dir(built, "tf")
    target.mkdir(parents=True)
    planted = target / name
    if link == "symlink":
        planted.symlink_to(victim.parent if name == ".terraform" else victim)
    else:
        os.link(victim, planted)
    with pytest.raises(refusal, match=str(planted).replace(".", r"\.")):
        installation.prepare_installation(built, "tf", {}, {})
    with pytest.raises(refusal):
        installation.existing_installation(built, target, "tf")
    assert untouched(victim)
    assert sorted(p.name for p in victim.parent.iterdir()) == ["precious.tf"]


def test_recorded_variables_are_only_the_recipes_own_tf_vars(npa_home: Path) -> None:
    """Defect: `.npa-env.json` set any variable for Terraform (LD_PRELOAD, TF_LOG_PATH
    outside the home): only `TF_VAR_<name>` of a declared variable is read back."""
    built = recipe.resolve(standin_recipe_dir(), recipe.RecipeSettings())
    install = installation.prepare_installation(built, "envs", {}, {"TF_VAR_region": "eu-north1"})
    install.env_path.write_text(
        json.dumps(
            {
                "TF_VAR_region": "eu-north1",
                "TF_VAR_standin_sleep_seconds": "0",
                "TF_VAR_not_declared": "x",
                "TF_LOG": "TRACE",
                "TF_LOG_PATH": "/tmp/elsewhere.log",
                "LD_PRELOAD": "/tmp/evil.so",
                "PATH": "/tmp/evil-bin",
                "TF_VAR_company_name": ["not", "a", "string"],
            }
        )
    )
    assert install.read_env() == {
        "TF_VAR_region": "eu-north1",
        "TF_VAR_standin_sleep_seconds": "0",
    }
    install.env_path.unlink()
    os.mkfifo(install.env_path)  # a FIFO is not waited on: nothing recorded, then
    assert install.read_env() == {}


@pytest.mark.terraform
@pytest.mark.slow
def test_a_symlinked_state_file_is_refused_before_terraform_rewrites_it(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Defect: a symlinked `terraform.tfstate` in a cluster's install folder was rewritten
    by Terraform, i.e. the file outside the home it pointed at. The next deploy is refused
    (exit 2, which file, what to do) and the outside file keeps its bytes."""
    from npa_sop_tui.cli.entry import main

    from testkit.sandbox_cli import deploy_in_sandbox

    spec = deploy_in_sandbox(
        "apiVersion: npa.soperator/v0.0.1\nname: st\nworkers:\n  - name: cpu\n    size: 1\n",
        tmp_path,
        monkeypatch,
        capsys,
    )
    install = npa_home / "sandbox" / "soperator" / "st" / "install" / "installations" / "st"
    state = install / "terraform.tfstate"
    outside = tmp_path / "outside.tfstate"
    shutil.copy(state, outside)
    before = outside.read_bytes()
    state.unlink()
    state.symlink_to(outside)
    spec.write_text(spec.read_text().replace("size: 1", "size: 2"))
    code = main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{state} is a symlink inside the npa home" in err and f"rm {state}" in err
    assert "Traceback" not in err
    assert outside.read_bytes() == before
