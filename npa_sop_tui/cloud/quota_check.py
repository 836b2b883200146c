"""Quota rows: each need of the spec against the allowance that decides it.

A row's verdict is `ok`, `short by N`, a state nothing new can use (`frozen`, `deleted`,
`provisioning`), or `unknown`, with the reason (`QuotaRow.reason`):

- `no answer`: the quota read failed or timed out (the cloud did not say);
- `limit hidden`: the allowance came back without its limit — an identity that may read
  usage but not limits sees them so; the warning names the permission to ask for;
- `unit`: the allowance counts in a unit npa cannot convert its need into;
- `not listed`: the allowance list has no such quota for the region (nothing to compare);
- `usage unknown`: the service could not say how much is in use (and the cluster is new).

Units: the service names each allowance's unit (`status.unit`, e.g. "byte"); npa counts its
needs in `count`, `vcpu`, `gpu` or `bytes` (needs.py). A size allowance in a larger binary
unit (KiB … TiB) is scaled to bytes; a count allowance may name no unit, a generic one
(`piece`, `unit`, …) or the need's own (`vcpu`, `gpu`).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import Literal

from npa_sop_tui.cloud.model import Quota
from npa_sop_tui.cloud.needs import GIB, Need
from npa_sop_tui.cloud.preflight_report import UNUSABLE, QuotaRow

_SIZES = {"": 1, "b": 1, "byte": 1, "kib": 2**10, "kibibyte": 2**10, "mib": 2**20,
          "mebibyte": 2**20, "gib": 2**30, "gibibyte": 2**30, "tib": 2**40,
          "tebibyte": 2**40}  # fmt: skip
_COUNTS = {"", "count", "piece", "pc", "unit", "item", "quantity"}
_OWN = {"vcpu": {"vcpu", "cpu", "core"}, "gpu": {"gpu"}, "count": {"instance"}}
PERMISSION = (
    "ask the {level} admin for permission to read quota allowance limits (quotas "
    "QuotaAllowanceService List/GetByName on the {level}; `nebius quotas quota-allowance list "
    "--parent-id <{level} ID>` then shows them), or pass --allow-unknown"
)


def _amount(value: int, unit: str) -> str:
    if unit == "bytes":
        gib = Decimal(value) / GIB
        return f"{gib.normalize():f} GiB" if gib == gib.to_integral() else f"{gib:.1f} GiB"
    return str(value)


def unit_scale(need_unit: str, quota_unit: str) -> int | None:
    """How many of the need's units one of the allowance's is (None: not comparable)."""
    name = quota_unit.strip().lower().removesuffix(".")
    if name.endswith("s") and name not in ("", "s"):
        name = name[:-1]  # bytes, pieces, units, gpus
    if need_unit == "bytes":
        return _SIZES.get(name)
    if name in _COUNTS or name in _OWN.get(need_unit, set()):
        return 1
    return None


def _in_need_units(q: Quota, scale: int) -> Quota:
    if scale == 1:
        return q
    return replace(
        q,
        limit=None if q.limit is None else q.limit * scale,
        usage=None if q.usage is None else q.usage * scale,
    )


def quota_rows(
    needs: list[Need],
    quotas: list[Quota] | None,
    *,
    existing: bool = False,
    project: list[Quota] | None = None,
    region: str | None = None,
    level: Literal["tenant", "project"] = "tenant",
) -> tuple[list[QuotaRow], list[str]]:
    """Rows for each need at each level read: the deciding allowance (`quotas`, at `level`:
    the tenant's, or the project's when no tenant is known; None: the read failed, all
    unknown) and the project's own under a tenant (`project`; a quota the project does not
    list has no separate cap there). Allowances are keyed by name and region (an allowance
    without a region counts everywhere).

    For a cluster that already exists, its own resources are part of `usage`, so the need is
    compared with the limit alone. A frozen, deleted or still provisioning allowance is a
    failed row whatever its numbers.
    """
    rows: list[QuotaRow] = []
    warnings: list[str] = []
    levels: list[tuple[Literal["tenant", "project"], list[Quota] | None]] = [(level, quotas)]
    if project is not None:
        levels.append(("project", project))
    for index, (at, listed) in enumerate(levels):
        found = {
            q.name: q for q in listed or [] if region is None or not q.region or q.region == region
        }
        for need in needs:
            q = found.get(need.resource)
            if q is None:
                if index == 0:  # the deciding level: unknown; the project's: no separate cap
                    rows.append(QuotaRow(resource=need.resource, needed=need.amount, limit=None,
                                         usage=None, verdict="unknown", unit=need.unit,
                                         level=at, region=region,
                                         reason="no answer" if listed is None
                                         else "not listed"))  # fmt: skip
                continue
            where = f"{at} quota {need.resource}" + (f" in {q.region}" if q.region else "")
            row, warning = _row(need, q, at, region, where, existing)
            rows.append(row)
            if warning:
                warnings.append(warning)
    return rows, warnings


def _row(
    need: Need,
    q: Quota,
    at: Literal["tenant", "project"],
    region: str | None,
    where: str,
    existing: bool,
) -> tuple[QuotaRow, str | None]:
    scale = unit_scale(need.unit, q.unit)
    shown = _in_need_units(q, scale or 1)
    verdict, reason = _verdict(need, shown, existing, scale)
    row = QuotaRow(resource=need.resource, needed=need.amount, limit=shown.limit,
                   usage=shown.usage, verdict=verdict, unit=need.unit, level=at,
                   region=q.region or region, reason=reason)  # fmt: skip
    if verdict in UNUSABLE:
        return row, f"{where} is {verdict}: nothing new can use it"
    if verdict.startswith("short"):
        return row, (
            f"{where} is {verdict}: the spec needs {_amount(need.amount, need.unit)} "
            f"({need.why}); limit {_amount(shown.limit or 0, need.unit)}, in use "
            f"{_amount(shown.usage or 0, need.unit)}"
        )
    if reason == "limit hidden":
        return row, (
            f"{where}: its limit is not visible to these credentials, so npa cannot tell "
            f"whether {_amount(need.amount, need.unit)} fit ({need.why}); "
            + PERMISSION.format(level=at)
        )
    if reason == "unit":
        return row, (
            f"{where} counts in {q.unit!r}, which npa cannot compare with its need in "
            f"{need.unit} ({_amount(need.amount, need.unit)}); check it by hand, or pass "
            "--allow-unknown"
        )
    return row, None


def _verdict(need: Need, q: Quota, existing: bool, scale: int | None) -> tuple[str, str | None]:
    """(verdict, why unknown)."""
    if q.state in UNUSABLE:
        return q.state, None
    if scale is None:
        return "unknown", "unit"
    if q.limit is None:
        return "unknown", "limit hidden"
    if q.usage is None and not existing:
        return "unknown", "usage unknown"
    free = q.limit if existing else q.limit - (q.usage or 0)
    short = need.amount - free
    return ("ok", None) if short <= 0 else (f"short by {_amount(short, need.unit)}", None)
