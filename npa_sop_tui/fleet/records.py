"""Where a fleet keeps its record files, and how a damaged record is described.

Shared by the fleet state file (state.py) and the per-project network records (network.py),
so neither has to import the other.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from npa_sop_tui.home.paths import npa_home


def fleet_root(fleet: str) -> Path:
    """`npa_home()/fleet/<fleet>`: the fleet's state file and one folder per project."""
    return npa_home() / "fleet" / fleet


def damage(exc: Exception) -> str:
    """What is wrong with a JSON record file, in one line."""
    if isinstance(exc, ValidationError):
        problems = []
        for err in exc.errors()[:3]:
            where = ".".join(str(part) for part in err["loc"])
            problems.append(f"{where}: {err['msg']}" if where else str(err["msg"]))
        return "; ".join(problems)
    return f"cannot read it: {exc}"
