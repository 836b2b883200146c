"""`--select` expressions: which fleet targets a command acts on.

`name=a`, `project=p`, `label=k=v`, `backend=soperator`; several `--select` flags narrow
the set (AND); a comma inside one value lists alternatives (`name=a,b` is a OR b).
"""

from __future__ import annotations

from collections.abc import Sequence

from npa_sop_tui.errors import UsageError
from npa_sop_tui.fleet.model import FleetTarget

SELECTOR_KEYS = ("name", "project", "label", "backend")


def _matches(target: FleetTarget, key: str, value: str) -> bool:
    if key == "name":
        return target.name == value
    if key == "project":
        return target.project_key == value
    if key == "backend":
        return target.backend == value
    label, _, wanted = value.partition("=")
    return target.labels.get(label) == wanted


def _parse(expr: str) -> tuple[str, list[str]]:
    key, sep, value = expr.partition("=")
    key = key.strip()
    if not sep or key not in SELECTOR_KEYS or not value.strip():
        raise UsageError(
            f"--select {expr!r} is not a selector",
            hint="use name=<cluster>, project=<project>, label=<key>=<value> or backend=<b>; "
            "repeat --select to narrow, commas for alternatives",
        )
    values = [v.strip() for v in value.split(",") if v.strip()]
    if key == "label" and any("=" not in v for v in values):
        raise UsageError(
            f"--select {expr!r}: a label selector needs key=value", hint="e.g. label=team=ml"
        )
    return key, values


def select_targets(targets: Sequence[FleetTarget], selectors: Sequence[str]) -> list[FleetTarget]:
    """The targets matching every selector; an empty result is an error, not a no-op."""
    parsed = [_parse(expr) for expr in selectors]
    chosen = [t for t in targets if all(any(_matches(t, k, v) for v in vs) for k, vs in parsed)]
    if not chosen:
        known = ", ".join(t.key for t in targets) or "none"
        raise UsageError(
            f"--select {' '.join(selectors)} matches no target",
            hint=f"targets in this fleet: {known}",
        )
    return chosen
