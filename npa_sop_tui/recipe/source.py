"""Where the Terraform recipe comes from, and the installation folder of each cluster.

Sources, first match wins: `--terraform-dir` (a nebius-solutions-library checkout or its
`soperator/` folder), the config's `recipe.path`, else a git clone of `recipe.url` at
`recipe.ref` cached under `~/.npa/soperator/recipes/<ref[:12]>`. Any git URL works, so tests
clone a local repository built from the stand-in.

Each cluster gets `installations/<name>` beside `installations/example`, as the recipe's README
asks. When the recipe folder is not ours to write (read-only, or the packaged stand-in) the
installation goes to `~/.npa/soperator/<name>/install/` with the same relative layout, so the
example's `../../modules` sources still resolve.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from npa_sop_tui.errors import OperationError, UsageError
from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text, ensure_dir, tighten_tree
from npa_sop_tui.home.paths import cluster_dir, npa_home, soperator_root
from npa_sop_tui.recipe.compat import recipe_version
from npa_sop_tui.recipe.table import DEFAULT_RECIPE_REF

DEFAULT_RECIPE_URL = "https://github.com/nebius/nebius-solutions-library.git"
EXAMPLE = Path("installations") / "example"
STANDIN_MARKER = ".npa-standin"
EU_API_ENDPOINT = "api.eu.nebius.cloud:443"  # what the recipe's terraform.tf hard-codes
GLOBAL_API_ENDPOINT = "api.nebius.cloud:443"
# Files of the example that never belong in a cluster's installation.
_SKIP = {"terraform.tfvars", ".terraform", ".terraform.lock.hcl", ".envrc", "login.sh"}
_SKIP_PREFIX = ("terraform.tfstate", "terraform_backend_override")

Origin = Literal["terraform-dir", "config", "git", "sandbox"]


@dataclass(frozen=True)
class Recipe:
    """A resolved recipe: its `soperator/` folder and where it came from."""

    root: Path  # the soperator/ folder (contains installations/example and modules/)
    origin: Origin
    ref: str | None
    version: str | None  # slurm_operator_version of the example tfvars, if readable

    @property
    def example_dir(self) -> Path:
        return self.root / EXAMPLE

    @property
    def standin_commit(self) -> str | None:
        """The upstream commit a stand-in recipe models (from its marker), else None."""
        data = standin_marker(self.root)
        commit = data.get("commit") if data else None
        return commit if isinstance(commit, str) else None

    @property
    def is_standin(self) -> bool:
        """A stand-in (null resources, no cloud) says so with a marker file in its folder."""
        return (self.root / STANDIN_MARKER).is_file()

    def describe(self) -> str:
        ref = f" at {self.ref[:12]}" if self.ref else ""
        ver = f" (soperator {self.version})" if self.version else ""
        return f"recipe {self.root}{ref}{ver} [{self.origin}]"


@dataclass(frozen=True)
class RecipeSettings:
    """The recipe part of the user's config (kept independent of config.py's model)."""

    path: str | None = None
    url: str | None = None
    ref: str | None = None


# ---------------------------------------------------------------------------------------------
# Resolution


def resolve(
    terraform_dir: str | os.PathLike[str] | None,
    settings: RecipeSettings,
    *,
    origin: Origin | None = None,
) -> Recipe:
    """Find the recipe without touching the network unless a clone is needed (blocking)."""
    if terraform_dir is not None:
        root = _soperator_folder(Path(terraform_dir), "terraform_dir")
        return _recipe(root, origin or "terraform-dir")
    if settings.path:
        root = _soperator_folder(Path(settings.path), "config recipe.path")
        return _recipe(root, origin or "config")
    url = settings.url or DEFAULT_RECIPE_URL
    ref = settings.ref or DEFAULT_RECIPE_REF
    clone = clone_recipe(url, ref)
    root = _soperator_folder(clone, f"the clone of {url}")
    return _recipe(root, "git", ref=_git_head(clone) or ref)


async def resolve_async(
    terraform_dir: str | os.PathLike[str] | None, settings: RecipeSettings
) -> Recipe:
    return await asyncio.to_thread(resolve, terraform_dir, settings)


def _soperator_folder(path: Path, source: str) -> Path:
    path = path.expanduser()
    if not path.is_dir():
        raise UsageError(
            f"{source}: {path} is not a folder",
            hint="point it at a nebius-solutions-library checkout or its soperator/ folder",
        )
    for candidate in (path, path / "soperator"):
        if (candidate / EXAMPLE).is_dir():
            return candidate.resolve()
    raise UsageError(
        f"{source}: {path} has no installations/example (nor soperator/installations/example)",
        hint="point it at a nebius-solutions-library checkout or its soperator/ folder",
    )


def standin_marker(root: Path) -> dict[str, Any] | None:
    """The stand-in marker of a `soperator/` folder (JSON: commit, version), None for a real
    recipe; an unreadable marker still marks a stand-in (an empty mapping)."""
    path = root / STANDIN_MARKER
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _recipe(root: Path, origin: Origin, *, ref: str | None = None) -> Recipe:
    if (root / STANDIN_MARKER).is_file():
        from npa_sop_tui import __version__

        ref = ref or f"npa-sop-tui {__version__} stand-in"
    return Recipe(
        root=root,
        origin=origin,
        ref=ref or _git_head(root),
        version=recipe_version(root / EXAMPLE),
    )


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


def _git_head(path: Path) -> str | None:
    if shutil.which("git") is None:
        return None
    done = _git(["rev-parse", "HEAD"], cwd=path)
    return done.stdout.strip() if done.returncode == 0 else None


def recipes_cache() -> Path:
    return soperator_root() / "recipes"


def clone_recipe(url: str, ref: str) -> Path:
    """Clone `url` at `ref` into the cache once; later calls reuse the checkout."""
    if shutil.which("git") is None:
        raise UsageError(
            "git is needed to fetch the Terraform recipe but is not installed",
            hint="install git, or point terraform_dir (or recipe.path) at a local checkout",
        )
    if not re.fullmatch(r"[A-Za-z0-9._/-]+", ref) or ref.startswith("-"):
        raise UsageError(f"recipe ref {ref!r} is not a valid git ref or commit")
    key = re.sub(r"[^A-Za-z0-9._-]", "_", ref[:12])
    target = recipes_cache() / key
    if (target / ".git").is_dir():
        head = _git_head(target)
        if head and (head.startswith(ref) or _resolves_to(target, ref, head)):
            return target
        raise UsageError(
            f"the cached recipe {target} is at {head}, not {ref}",
            hint=f"remove {target} to fetch the recipe again",
        )
    ensure_dir(target.parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=target.parent))
    try:
        steps = [
            (["init", "-q", str(tmp)], None),
            (["remote", "add", "origin", url], tmp),
            (["fetch", "-q", "--depth", "1", "origin", ref], tmp),
            (["checkout", "-q", "--detach", "FETCH_HEAD"], tmp),
        ]
        for args, cwd in steps:
            done = _git(args, cwd=cwd)
            if done.returncode != 0 and args[0] == "fetch":
                # Servers that refuse fetching a bare SHA: fall back to a full fetch.
                done = _git(["fetch", "-q", "origin"], cwd=cwd)
                if done.returncode == 0:
                    done = _git(["checkout", "-q", "--detach", ref], cwd=cwd)
                    if done.returncode == 0:
                        break
            if done.returncode != 0:
                raise OperationError(
                    f"could not fetch the recipe {url} at {ref}: "
                    f"{(done.stderr or done.stdout).strip()[-400:]}",
                    hint="check recipe.url and recipe.ref in the npa config, or point "
                    "terraform_dir (or recipe.path) at a local checkout",
                )
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def _resolves_to(repo: Path, ref: str, head: str) -> bool:
    done = _git(["rev-parse", f"{ref}^{{commit}}"], cwd=repo)
    return done.returncode == 0 and done.stdout.strip() == head


# ---------------------------------------------------------------------------------------------
# Installation


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
        return recorded_env(self.files_dir)


ENV_FILE = ".npa-env.json"  # Terraform's environment of an installation (identity, o11y)


def recorded_env(folder: Path) -> dict[str, str]:
    """The environment an installation was last run with (empty when unknown)."""
    try:
        data = json.loads((folder / ENV_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


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
    for item in recipe.example_dir.iterdir():
        if item.name in _SKIP or item.name.startswith(_SKIP_PREFIX):
            continue
        dest = target / item.name
        if item.is_dir():
            shutil.copytree(item, dest, dirs_exist_ok=True)
            if target.is_relative_to(npa_home()):
                tighten_tree(dest)  # copytree copied the package's 0755 folders
        else:
            shutil.copy2(item, dest)
    _point_provider_at_region(target / "terraform.tf", env.get("TF_VAR_region"))
    atomic_write_text(
        target / "terraform.tfvars.json",
        json.dumps(tfvars, indent=2, sort_keys=True) + "\n",
        mode=SECRET_MODE,
    )
    atomic_write_text(
        target / ".npa-env.json", json.dumps(env, indent=2, sort_keys=True) + "\n", mode=SECRET_MODE
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
        terraform_tf.write_text(fixed, encoding="utf-8")


def existing_installation(
    recipe: Recipe, install_dir: Path, name: str, *, own_dir: Path | None = None
) -> Installation:
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
    keeps its mode, so files left world-readable by an older run are fixed here.
    """
    for pattern in _STATE_GLOBS:
        for path in install_dir.glob(pattern):
            if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o077:
                path.chmod(SECRET_MODE)


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
