"""Run-time reservations: `--capacity-block-group POOL=ID` and `NPA_CAPACITY_BLOCK_GROUPS`.

Capacity block group IDs are secrets of a kind (they name a paid reservation): they are given
at run time, never written to cluster.yaml, and errors never echo them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

from npa_sop_tui.errors import UsageError

CAPACITY_ENV = "NPA_CAPACITY_BLOCK_GROUPS"
CAPACITY_ID_PREFIX = "capacityblockgroup-"
CAPACITY_ID = re.compile(rf"{CAPACITY_ID_PREFIX}[A-Za-z0-9]+")
"""The only shape of capacity ID npa accepts: one its secret redaction also masks wherever it
turns up (redact.py's pattern is the same; a test holds them together)."""


def parse_capacity_assignments(
    values: Iterable[str] | str | None, *, source: str = "--capacity-block-group"
) -> dict[str, str]:
    """`["pool=capacityblockgroup-…", …]` or `"pool=id,pool2=id"` → {pool: id}.

    Used for `--capacity-block-group POOL=ID` (repeatable) and `NPA_CAPACITY_BLOCK_GROUPS`;
    `source` names which one in errors. Errors never echo the ID itself.
    """
    if values is None:
        return {}
    items = values.split(",") if isinstance(values, str) else list(values)
    out: dict[str, str] = {}
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        pool, sep, ident = item.partition("=")
        pool, ident = pool.strip(), ident.strip()
        if not sep or not pool or not ident:
            example = (
                f"{source}=gpu=capacityblockgroup-…"
                if source == CAPACITY_ENV
                else f"{source} gpu=capacityblockgroup-…"
            )
            raise UsageError(
                f"{source}: capacity block group assignment must look like POOL=ID",
                hint=f"e.g. {example}",
            )
        if not ident.startswith(CAPACITY_ID_PREFIX):
            raise UsageError(
                f"{source}: capacity block group for pool {pool!r} is not an ID "
                f"(IDs start with {CAPACITY_ID_PREFIX!r})",
                hint="names must be resolved to an ID first",
            )
        if not CAPACITY_ID.fullmatch(ident):  # the ID is never echoed: it is a secret
            raise UsageError(
                f"{source}: capacity block group for pool {pool!r} is not an ID: after "
                f"{CAPACITY_ID_PREFIX!r} an ID has only letters and digits",
                hint="copy the ID as Nebius shows it (capacityblockgroup-…)",
            )
        if pool in out and out[pool] != ident:
            raise UsageError(f"two different capacity block groups given for pool {pool!r}")
        out[pool] = ident
    return out


def capacity_from_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if env is None else env
    return parse_capacity_assignments(env.get(CAPACITY_ENV), source=CAPACITY_ENV)
