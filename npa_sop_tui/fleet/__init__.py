"""`npa.fleet/v0.0.1`: many soperator clusters across projects, through the one lifecycle.

model    the file's shape and resolved targets
loader   file → targets, every problem with file:line before anything runs
select   `--select` expressions
network  one fleet-owned network per project
state    the fleet's inventory file and lock
runner   plan / deploy / status / destroy over targets, at most N at once
"""

from npa_sop_tui.fleet.loader import FleetError, LoadedFleet, load_fleet, parse_fleet_text
from npa_sop_tui.fleet.model import FleetTarget
from npa_sop_tui.fleet.select import select_targets

__all__ = [
    "FleetError",
    "FleetTarget",
    "LoadedFleet",
    "load_fleet",
    "parse_fleet_text",
    "select_targets",
]
