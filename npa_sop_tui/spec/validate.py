"""Rules beyond the model: the recipe's plan-time checks and npa's contract, as findings.

Every rule returns findings rather than raising, so a user sees all problems at once. Where
npa and the recipe differ, the stricter recipe rule wins and the message says whose rule it
is. Errors block rendering; warnings inform.

The cluster-wide rules are spec/validate_cluster.py, the worker pool rules
spec/validate_workers.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from npa_sop_tui.spec.catalog import Catalog, load_catalog
from npa_sop_tui.spec.findings import Finding, error
from npa_sop_tui.spec.validate_cluster import (
    accounting_rules,
    control_plane_rules,
    identity_rules,
    key_rules,
    name_rules,
    region_rules,
    version_rules,
)
from npa_sop_tui.spec.validate_workers import worker_rules

if TYPE_CHECKING:
    # types only: the model runs these rules when it loads a spec (no import cycle)
    from npa_sop_tui.spec.model import SoperatorSpec


def validate_spec(
    spec: SoperatorSpec,
    *,
    catalog: Catalog | None = None,
    capacity: Mapping[str, str] | None = None,
) -> list[Finding]:
    """Every rule, in a stable order; an empty list means the spec is good as written.

    `capacity` lists pools that get reserved capacity at run time ({pool: id}).
    """
    cat = catalog or load_catalog()
    jail = [error("jail_size_gib", "must be at least 1 GiB")] if spec.jail_size_gib < 1 else []
    return [
        *name_rules(spec),
        *region_rules(spec, cat),
        *identity_rules(spec),
        *version_rules(spec),
        *key_rules(spec),
        *control_plane_rules(spec, cat),
        *accounting_rules(spec),
        *jail,
        *worker_rules(spec, cat, capacity or {}),
    ]
