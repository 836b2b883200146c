"""Where the Terraform recipe comes from, and the installation folder of each cluster.

Sources, first match wins: `--terraform-dir` (a nebius-solutions-library checkout or its
`soperator/` folder), the config's `recipe.path`, else a git clone of `recipe.url` at
`recipe.ref` cached under `~/.npa/soperator/recipes/<ref[:12]>`. Any git URL works, so tests
clone a local repository built from the stand-in.

Each cluster's installation folder (where Terraform runs) is recipe/installation.py's.
"""

from __future__ import annotations

import asyncio
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
from npa_sop_tui.home.fsutil import ensure_dir
from npa_sop_tui.home.paths import soperator_root
from npa_sop_tui.recipe.compat import recipe_version
from npa_sop_tui.recipe.table import DEFAULT_RECIPE_REF

DEFAULT_RECIPE_URL = "https://github.com/nebius/nebius-solutions-library.git"
EXAMPLE = Path("installations") / "example"
STANDIN_MARKER = ".npa-standin"

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
