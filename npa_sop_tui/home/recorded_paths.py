"""Paths npa recorded in its home (a cluster's installation folder, its recipe, its
operation logs), and when they may be used again.

A record in the home is data: a copied home still names the original's folders, and a
crafted `inventory.json` can name any folder. Terraform run there would destroy someone
else's cluster or run someone else's code, and a log read from there would show any file.
So a recorded path is used only when it lies inside the home that records it (symlinks
resolved), or when the user's own settings name it this time: the installation
`installations/<name>` of the recipe checkout given by `--terraform-dir` or `recipe.path` (a
recipe folder the user can write keeps its installations beside the example). Everything
else is refused, before an operation takes its lock or writes its log, with what to do.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import paths

if TYPE_CHECKING:
    from npa_sop_tui.home.inventory_records import InventoryEntry
    from npa_sop_tui.home.settings import Settings


class UntrustedRecordedPath(UsageError):
    """A recorded path outside the home (or not the cluster's own) that nothing the user set
    names."""

    def __init__(self, recorded: str, *, what: str, cluster: str, hint: str | None) -> None:
        home = paths.npa_home()
        super().__init__(
            f"cluster {cluster!r}: its record names {what} {recorded}, which npa does not "
            f"use: a recorded path is used only inside the home that records it ({home}), "
            "for the cluster it belongs to",
            hint=hint
            or "if this home is a copy, run the command with NPA_HOME set to the original "
            "home; a record you did not write is not npa's to follow",
        )
        self.recorded = recorded

    def json_extra(self) -> dict[str, object]:
        return {"recorded": self.recorded}


def inside_home(path: Path | str) -> bool:
    """Whether `path`, symlinks resolved, is inside the npa home (itself resolved)."""
    try:
        home = paths.npa_home().resolve()
        real = Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    return real == home or home in real.parents


def trusted(recorded: str | None, *, also: Iterable[Path | str] = ()) -> Path | None:
    """`recorded` as a path if it may be used: inside the home, or one of `also` (what the
    user's settings name this time); None when nothing is recorded or it may not be used."""
    if not recorded:
        return None
    path = Path(recorded)
    if not path.is_absolute():
        return None  # npa records absolute paths; a relative one would follow the cwd
    if inside_home(path):
        return path
    try:
        real = path.resolve()
        if any(real == Path(other).resolve() for other in also):
            return path
    except (OSError, RuntimeError):
        pass
    return None


def require_trusted(
    recorded: str,
    *,
    what: str,
    cluster: str,
    also: Iterable[Path | str] = (),
    hint: str | None = None,
) -> Path:
    """`trusted(recorded)`, or `UntrustedRecordedPath` saying why and what to do."""
    path = trusted(recorded, also=also)
    if path is None:
        raise UntrustedRecordedPath(recorded, what=what, cluster=cluster, hint=hint)
    return path


# --- a cluster's record ----------------------------------------------------------------------

_RECIPE_HINT = (
    "pass --terraform-dir with the recipe checkout the cluster was deployed from (or set "
    "recipe.path in config.yaml), so the folder is yours to name, not the record's"
)


def user_recipe_folders(settings: Settings) -> list[Path]:
    """The recipe folders the user's settings name (a checkout or its `soperator/`)."""
    named = (settings.terraform_dir, settings["recipe.path"])
    return [Path(folder).expanduser() for folder in named if folder]


def user_installations(settings: Settings, name: str) -> list[Path]:
    """Where an installation of `name` lives inside the recipe folders the user named."""
    return [
        base / "installations" / name
        for folder in user_recipe_folders(settings)
        for base in (folder, folder / "soperator")
    ]


def install_dir(entry: InventoryEntry, settings: Settings, *, shared: bool) -> Path | None:
    """The recorded installation folder if it may be used; None when none is recorded, or
    (with the team's bucket) when it is another machine's (the caller builds this machine's
    own). A folder that is not there is returned as it is: callers say it is missing."""
    raw = entry.install_dir
    if not raw or not Path(raw).is_dir():
        return Path(raw) if raw else None
    if entry.adoption is not None:
        # adopted where it was applied: any installation of a checkout the user names
        return _adopted_install_dir(entry, raw, settings)
    found = trusted(raw, also=user_installations(settings, entry.name))
    if found is not None and found.parts[-2:] != ("installations", entry.name):
        found = None  # npa names every installation so; another cluster's is not this one's
    if found is not None or shared:
        return found
    raise UntrustedRecordedPath(
        raw, what="the installation folder", cluster=entry.name, hint=_RECIPE_HINT
    )


# --- clusters adopted where they are ---------------------------------------------------------

ADOPTED_HERE = "adopted-here.json"
"""In the cluster's folder of this machine's home (never in the team's bucket): the folders
`adopt` was pointed at on this machine, the installation and its recipe."""


def remember_adoption(name: str, install_dir: Path, recipe_dir: Path) -> None:
    """What the user named to `adopt` on this machine: later commands use those folders
    without naming them again. A record in the team's bucket (or a copied one) cannot add a
    folder here."""
    import json

    from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_text

    folders = {"install_dir": str(install_dir.resolve()), "recipe": str(recipe_dir.resolve())}
    atomic_write_text(
        paths.cluster_dir(name) / ADOPTED_HERE, json.dumps(folders) + "\n", mode=SECRET_MODE
    )


def adopted_here(name: str) -> list[Path]:
    """The folders `remember_adoption` recorded for `name` on this machine (none when it was
    not adopted here, or the file is not one npa wrote)."""
    import json

    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

    try:
        # why it cannot be read is never shown: such a file simply names no folder
        text = read_regular_text(paths.cluster_dir(name) / ADOPTED_HERE, limit=1 << 16)
        data = json.loads(text)
    except (Unreadable, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    return [Path(v) for v in data.values() if isinstance(v, str) and Path(v).is_absolute()]


def _adopted_install_dir(entry: InventoryEntry, raw: str, settings: Settings) -> Path:
    """An adopted cluster's folder (`<checkout>/soperator/installations/<folder>`, any
    folder name): inside the home (the existing npa's clones), one `adopt` was pointed at on
    this machine, or in a checkout the user's settings name this time."""
    folders = [
        base / "installations" / Path(raw).name
        for folder in user_recipe_folders(settings)
        for base in (folder, folder / "soperator")
    ]
    found = trusted(raw, also=[*folders, *adopted_here(entry.name)])
    if found is None or found.parent.name != "installations":
        raise UntrustedRecordedPath(
            raw,
            what="the adopted installation folder",
            cluster=entry.name,
            hint="adopt it on this machine (`npa soperator adopt --install-dir <folder>`), or "
            "pass --terraform-dir with the recipe checkout it lives in: a folder outside the "
            "npa home is used when you name it, never because a record does",
        )
    return found


def recipe_dir(entry: InventoryEntry, settings: Settings) -> Path | None:
    """The recipe to run for an existing cluster: the one the settings name, else the one it
    was deployed with when that lies inside the home (a clone, the sandbox's stand-in)."""
    if settings.terraform_dir is not None:
        return settings.terraform_dir
    recorded = entry.recipe.path if entry.recipe is not None else None
    if not recorded:
        return None
    folders = user_recipe_folders(settings)
    also = [*folders, *(folder / "soperator" for folder in folders), *adopted_here(entry.name)]
    return require_trusted(
        recorded, what="the recipe folder", cluster=entry.name, also=also, hint=_RECIPE_HINT
    )
