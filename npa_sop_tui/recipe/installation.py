"""The installation folder of each cluster: where Terraform runs for it.

Each cluster gets `installations/<name>` beside `installations/example`, as the recipe's README
asks. When the recipe folder is not ours to write (read-only, or the packaged stand-in) the
installation goes to `~/.npa/soperator/<name>/install/` with the same relative layout, so the
example's `../../modules` sources still resolve.

The recipe's files are copied in by atomic replaces (a link planted at `variables.tf` is
replaced, never written through), and an installation in the npa home where Terraform would
write through a link (a symlinked `terraform.tfstate`, a hard-linked lock file) is refused
before Terraform runs. What npa records there for a later run (`.npa-env.json`) is data: only
the recipe's own `TF_VAR_*` names are read back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
from npa_sop_tui.home.files import check_writable_file
from npa_sop_tui.home.fsutil import (
    SECRET_MODE,
    atomic_write_text,
    copy_file,
    copy_tree,
    ensure_dir,
)
from npa_sop_tui.home.paths import cluster_dir
from npa_sop_tui.recipe.source import Recipe

EU_API_ENDPOINT = "api.eu.nebius.cloud:443"  # what the recipe's terraform.tf hard-codes
GLOBAL_API_ENDPOINT = "api.nebius.cloud:443"
# Files of the example that never belong in a cluster's installation.
_SKIP = {"terraform.tfvars", ".terraform", ".terraform.lock.hcl", ".envrc", "login.sh"}
_SKIP_PREFIX = ("terraform.tfstate", "terraform_backend_override")


@dataclass(frozen=True)
class Installation:
    name: str
    dir: Path  # the folder Terraform runs in
    recipe: Recipe
    # An adopted cluster's folder is not ours to write: our variables, environment and saved
    # plans live in `own_dir` (in the npa home) and reach Terraform as `-var-file`, and the
    # folder keeps the state backend it was set up with.
    own_dir: Path | None = None

    @property
    def adopted(self) -> bool:
        return self.own_dir is not None

    @property
    def files_dir(self) -> Path:
        """Where our files for this installation live."""
        return self.own_dir if self.own_dir is not None else self.dir

    @property
    def tfvars_path(self) -> Path:
        return self.files_dir / "terraform.tfvars.json"

    @property
    def env_path(self) -> Path:
        return self.files_dir / ENV_FILE

    def var_file_args(self) -> list[str]:
        """`-var-file` for plan and destroy of an adopted installation (ours win over its
        own tfvars files); nothing for ours, whose variables are its tfvars file."""
        if self.own_dir is None or not self.tfvars_path.is_file():
            return []
        return [f"-var-file={self.tfvars_path}"]

    def read_env(self) -> dict[str, str]:
        """The variables recorded for Terraform at deploy time: only `TF_VAR_<name>` of a
        variable the recipe declares. The file is data in the home, so it never sets
        anything else for Terraform (`LD_PRELOAD`, `TF_LOG_PATH`, a provider's endpoint)."""
        from npa_sop_tui.redact import declared_variables

        declared = {f"TF_VAR_{name}" for name in declared_variables(self.recipe.example_dir)}
        return {k: v for k, v in recorded_env(self.files_dir).items() if k in declared}


MAX_ENV_BYTES = 1 << 20  # a few TF_VAR_* values; more is not a file npa wrote
ENV_FILE = ".npa-env.json"  # Terraform's environment of an installation (identity, o11y)


def recorded_env(folder: Path) -> dict[str, str]:
    """The text values an installation's environment file records (empty when unknown or
    not a file npa wrote). Data: callers pick the names they use."""
    try:
        text = read_regular_text(folder / ENV_FILE, limit=MAX_ENV_BYTES, what="env file")
        data = json.loads(text)
    except (Unreadable, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, str)}


def _writable(root: Path) -> bool:
    installations = root / "installations"
    return os.access(installations, os.W_OK | os.X_OK)


def installation_dir(recipe: Recipe, name: str) -> Path:
    if recipe.is_standin or not _writable(recipe.root):
        return cluster_dir(name) / "install" / "installations" / name
    return recipe.root / "installations" / name


def prepare_installation(
    recipe: Recipe, name: str, tfvars: dict[str, Any], env: dict[str, str]
) -> Installation:
    """Create or refresh `installations/<name>` and write the rendered variables (0600).

    Terraform's own files (.terraform, state, lock file) are kept, so re-running converges.
    """
    target = installation_dir(recipe, name)
    ensure_dir(target)
    if not target.is_relative_to(recipe.root):
        _link_siblings(recipe.root, target.parent.parent)
    check_install_links(target)  # before anything is written there
    for item in recipe.example_dir.iterdir():
        if item.name in _SKIP or item.name.startswith(_SKIP_PREFIX):
            continue
        # replaced, never written through: a link planted at `variables.tf` stays outside
        (copy_tree if item.is_dir() else copy_file)(item, target / item.name)
    _point_provider_at_region(target / "terraform.tf", env.get("TF_VAR_region"))
    atomic_write_text(
        target / "terraform.tfvars.json",
        json.dumps(tfvars, indent=2, sort_keys=True) + "\n",
        mode=SECRET_MODE,
    )
    atomic_write_text(
        target / ENV_FILE, json.dumps(env, indent=2, sort_keys=True) + "\n", mode=SECRET_MODE
    )
    protect_state_files(target)
    return Installation(name=name, dir=target, recipe=recipe)


def api_endpoint(region: str | None) -> str:
    """The Nebius API the provider must use: the recipe hard-codes the `eu` one, which only
    serves regions whose name starts with `eu`."""
    return EU_API_ENDPOINT if region is None or region.startswith("eu") else GLOBAL_API_ENDPOINT


def _point_provider_at_region(terraform_tf: Path, region: str | None) -> None:
    try:
        text = terraform_tf.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    wanted = api_endpoint(region)
    fixed = text.replace(EU_API_ENDPOINT, wanted)
    if fixed != text:
        atomic_write_text(terraform_tf, fixed, mode=terraform_tf.stat().st_mode & 0o777)


def existing_installation(
    recipe: Recipe, install_dir: Path, name: str, *, own_dir: Path | None = None
) -> Installation:
    check_install_links(install_dir)
    if own_dir is None:  # an adopted folder's files keep the modes their owner gave them
        protect_state_files(install_dir)
    return Installation(name=name, dir=install_dir, recipe=recipe, own_dir=own_dir)


def prepare_adopted(
    recipe: Recipe,
    install_dir: Path,
    name: str,
    tfvars: dict[str, Any],
    env: dict[str, str],
    own_dir: Path,
) -> Installation:
    """An adopted installation, its folder untouched: the variables to run with and the
    environment go to `own_dir` (0600) and reach Terraform from there."""
    check_install_links(install_dir)
    install = Installation(name=name, dir=install_dir, recipe=recipe, own_dir=own_dir)
    ensure_dir(own_dir)
    atomic_write_text(
        install.tfvars_path, json.dumps(tfvars, indent=2, sort_keys=True) + "\n", mode=SECRET_MODE
    )
    atomic_write_text(
        install.env_path, json.dumps(env, indent=2, sort_keys=True) + "\n", mode=SECRET_MODE
    )
    return install


# Local state and its backups carry every variable value Terraform saw (reservation IDs, the
# backups password) and provider outputs such as cluster credentials.
_STATE_GLOBS = ("terraform.tfstate", "terraform.tfstate.backup", "terraform.tfstate.*.backup")


def protect_state_files(install_dir: Path) -> None:
    """Make existing local state files 0600.

    Terraform runs with a private umask, but it rewrites an existing state file in place and
    keeps its mode, so files left world-readable by an older run are fixed here (links were
    refused before, by `check_install_links`).
    """
    for pattern in _STATE_GLOBS:
        for path in install_dir.glob(pattern):
            if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o077:
                path.chmod(SECRET_MODE)


# What Terraform (and npa) write in place in an installation folder: a link there would
# make Terraform rewrite the file it points at, outside the folder.
_WRITTEN_IN_PLACE = (
    *_STATE_GLOBS,
    ".terraform.tfstate.lock.info",
    ".terraform.lock.hcl",
    "errored.tfstate",
    "crash.log",
)
_FOLDERS_WRITTEN = (".terraform", ".npa-plan", ".npa-run")


def check_install_links(install_dir: Path) -> None:
    """Refuse an installation folder in the npa home where a file Terraform writes in place
    is a symlink or has another hard link, or a folder it writes in is a symlink
    (`HomeSymlink`, `HomeHardLink`): nothing outside the home is written through it."""
    import fnmatch

    from npa_sop_tui.home.files import HomeSymlink, under_home

    if not under_home(install_dir):
        return  # a checkout of the user's own: its links are the user's doing
    try:
        entries = list(os.scandir(install_dir))
    except FileNotFoundError:
        return
    for entry in entries:  # scandir sees dangling links too, which glob would not
        path = Path(entry.path)
        if entry.name in _FOLDERS_WRITTEN and entry.is_symlink():
            raise HomeSymlink(path)
        if any(fnmatch.fnmatchcase(entry.name, p) for p in _WRITTEN_IN_PLACE):
            check_writable_file(path, path.lstat())


def _link_siblings(recipe_root: Path, install_root: Path) -> None:
    """Make `install_root/<x>` point at `recipe_root/<x>` for everything but installations/."""
    ensure_dir(install_root)
    for item in recipe_root.iterdir():
        if item.name == "installations" or item.name.startswith("."):
            continue
        link = install_root / item.name
        if link.is_symlink() and link.resolve() == item.resolve():
            continue
        with contextlib.suppress(FileNotFoundError):
            if link.is_symlink() or link.is_file():
                link.unlink()
            elif link.is_dir():
                shutil.rmtree(link)
        link.symlink_to(item.resolve(), target_is_directory=item.is_dir())
