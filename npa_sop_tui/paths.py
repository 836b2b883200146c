"""Where npa keeps its files. `NPA_HOME` moves the whole tree (tests, several setups)."""

from __future__ import annotations

import os
from pathlib import Path

NPA_HOME_ENV = "NPA_HOME"


def npa_home() -> Path:
    """The npa home folder: `$NPA_HOME`, else `~/.npa`."""
    override = os.environ.get(NPA_HOME_ENV)
    return Path(override).expanduser() if override else Path.home() / ".npa"


def config_path() -> Path:
    return npa_home() / "config.yaml"


def soperator_root() -> Path:
    """Per-cluster inventory, installations and caches live under here."""
    return npa_home() / "soperator"


def cluster_dir(name: str) -> Path:
    return soperator_root() / name


def known_hosts_path() -> Path:
    return npa_home() / "known_hosts"
