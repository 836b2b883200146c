"""Where npa keeps its files. `NPA_HOME` moves the whole tree (tests, several setups).

Folders under the npa home are private (0700) and files 0600: `home_files` creates, opens
and locks everything under it (and enters the sandbox's home).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

NPA_HOME_ENV = "NPA_HOME"


def npa_home() -> Path:
    """The npa home folder: `$NPA_HOME`, else `~/.npa`.

    Raises `UsageError` when it exists but is not a folder, so every command says so instead
    of failing later on the first file it writes.
    """
    override = os.environ.get(NPA_HOME_ENV)
    home = Path(override).expanduser() if override else Path.home() / ".npa"
    if override and not home.is_absolute():
        # Made absolute once, here, and written back: Terraform runs in other folders (its
        # provider mirror path lives under the home) and a later chdir must not move it.
        home = home.absolute()
        os.environ[NPA_HOME_ENV] = str(home)
    if home.exists() and not home.is_dir():
        from npa_sop_tui.errors import UsageError

        where = f"{NPA_HOME_ENV}={override}" if override else str(home)
        raise UsageError(
            f"the npa home {where} is a file, not a folder",
            hint=f"point {NPA_HOME_ENV} at a folder (it is created if missing), or move the file",
        )
    return home


def config_path() -> Path:
    return npa_home() / "config.yaml"


def shown(path: Path) -> str:
    """`path` for people: under the user's home folder as `~/…`."""
    try:
        return f"~/{path.relative_to(Path.home())}"
    except ValueError:
        return str(path)


def soperator_root() -> Path:
    """Per-cluster inventory, installations and caches live under here."""
    return npa_home() / "soperator"


# Cluster names become folder names and kube contexts (nebius-<name>-slurm): DNS-label shape.
# The spec's own rule (the recipe's company_name) is stricter; this one keeps every name a
# single, safe path component (no "/", "..", spaces), so `--name` can never point elsewhere.
CLUSTER_NAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


# Other folders under `soperator_root()`: the recipe cache, and the existing npa's recipe
# clones (`nebius-solutions-library[-<ref>]`, home/npa_installs.py). A cluster of that name
# would write its records into them.
RESERVED_NAMES = ("recipes",)
RESERVED_PREFIX = "nebius-solutions-library"


def check_cluster_name(name: str, *, flag: str = "--name") -> str:
    """`name` if it can be a cluster name, else `UsageError` naming `flag`."""
    if name in RESERVED_NAMES or name.startswith(RESERVED_PREFIX):
        from npa_sop_tui.errors import UsageError

        raise UsageError(
            f"{flag} {name!r} cannot be a cluster name: {soperator_root() / name} is the "
            "folder of " + ("the recipe cache" if name in RESERVED_NAMES else "a recipe clone"),
            hint="pick another cluster name",
        )
    if not CLUSTER_NAME_RE.fullmatch(name):
        from npa_sop_tui.errors import UsageError

        raise UsageError(
            f"{flag} {name!r} is not a cluster name",
            hint="cluster names are lowercase letters, digits and dashes (the spec's name:); "
            "`npa soperator list` shows the clusters npa knows",
        )
    return name


def cluster_dir(name: str) -> Path:
    return soperator_root() / check_cluster_name(name, flag="cluster name")


def known_hosts_path() -> Path:
    return npa_home() / "known_hosts"


# Sandbox clusters live in their own npa home (`<home>/sandbox`), shared by the app and the
# headless `--sandbox` commands, so they never mix with real clusters. Once entered, the
# marker keeps a nested entry (CLI flag, then the app's sandbox backend) from nesting again.
SANDBOX_HOME_ENV = "NPA_SANDBOX_HOME"


def sandbox_home() -> Path:
    """The sandbox's npa home: the one already entered, else `<npa home>/sandbox`."""
    entered = os.environ.get(SANDBOX_HOME_ENV)
    return Path(entered) if entered else npa_home() / "sandbox"
