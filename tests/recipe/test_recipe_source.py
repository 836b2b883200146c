"""Where the recipe comes from (a folder, a git URL at a commit) and the installation layout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.recipe import source as recipe
from npa_sop_tui.sandbox import local_terraform


def test_bad_terraform_dir(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a folder"):
        recipe.resolve(tmp_path / "missing", recipe.RecipeSettings())
    with pytest.raises(UsageError, match="no installations/example"):
        recipe.resolve(tmp_path, recipe.RecipeSettings())


def test_terraform_dir_accepts_checkout_or_soperator_folder() -> None:
    checkout = local_terraform.STANDIN_RECIPE
    a = recipe.resolve(checkout, recipe.RecipeSettings())
    b = recipe.resolve(checkout / "soperator", recipe.RecipeSettings())
    assert a.root == b.root == local_terraform.standin_recipe_dir().resolve()
    assert a.version == "4.1.6" and a.origin == "terraform-dir"


def _git(cwd: Path, *args: str) -> str:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@e",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@e",
    )
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_recipe_clone_from_any_git_url(tmp_path: Path) -> None:
    import shutil

    repo = tmp_path / "solutions-library"
    shutil.copytree(local_terraform.STANDIN_RECIPE, repo)
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "recipe")
    sha = _git(repo, "rev-parse", "HEAD")
    settings = recipe.RecipeSettings(url=f"file://{repo}", ref=sha)
    resolved = recipe.resolve(None, settings)
    assert resolved.origin == "git" and resolved.ref == sha
    assert resolved.root == recipe.recipes_cache() / sha[:12] / "soperator"
    assert (resolved.example_dir / "variables.tf").is_file()
    # second resolution reuses the cache
    assert recipe.resolve(None, settings).root == resolved.root
    with pytest.raises(Exception, match="could not fetch"):
        recipe.resolve(None, recipe.RecipeSettings(url=f"file://{tmp_path}/nope", ref="a" * 40))
