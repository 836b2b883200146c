"""The preflight report as text for people (CLI, plan output, the wizard's review step)."""

from __future__ import annotations

from decimal import Decimal

from npa_sop_tui.cloud.needs import GIB
from npa_sop_tui.cloud.preflight_report import PreflightReport
from npa_sop_tui.safe_text import safe_text


def _amount(value: int | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "bytes":
        gib = Decimal(value) / GIB
        return f"{gib:.0f} GiB" if gib == gib.to_integral() else f"{gib:.1f} GiB"
    return str(value)


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    # names and states are the cloud's text: each cell one line, every control shown
    rows = [tuple(safe_text(cell) for cell in row) for row in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]  # fmt: skip


def money(value: str, currency: str) -> str:
    amount = Decimal(value)
    symbol = "$" if currency.lower() == "usd" else ""
    suffix = "" if symbol else f" {currency}"
    return f"{symbol}{amount:,.2f}{suffix}"


def price_lines(report: PreflightReport) -> list[str]:
    if report.price is None:
        return ["Price: unknown (the billing calculator did not answer)"]
    p = report.price
    lines = [f"Hourly price estimate ({p.currency}, list prices):"]
    rows = [("WHAT", "NODES", "PER HOUR")]
    rows += [(r.key, str(r.count), money(r.hourly, p.currency)) for r in p.pools]
    rows.append(("total", "", money(p.total, p.currency)))
    out = lines + _table(rows)
    if p.daily:
        out.append(f"  per day (24 h): {money(p.daily, p.currency)}")
    return out


def render_text(report: PreflightReport) -> str:
    out = [f"Preflight for {report.name!r} in {report.region or '(no region)'}: {report.summary()}"]
    if report.rows:
        rows = [("RESOURCE", "LEVEL", "REGION", "NEEDED", "LIMIT", "USAGE", "VERDICT")]
        rows += [
            (r.resource, r.level, r.region or "-", _amount(r.needed, r.unit),
             _amount(r.limit, r.unit), _amount(r.usage, r.unit), r.verdict)
            for r in report.rows
        ]  # fmt: skip
        out += _table(rows)
    if report.platforms is not None:
        p = report.platforms
        note = {"live": "from the cloud", "cache": "cached (npa soperator catalog refresh)",
                "catalog": "packaged catalog: the cloud did not answer"}[p.source]  # fmt: skip
        offered = safe_text(", ".join(sorted(p.offered)) or "none")
        out.append(f"Platforms offered ({note}): {offered}")
        for shape in p.pools:
            mark = {True: "offered", False: "NOT offered", None: "unknown"}[shape.offered]
            out.append(
                f"  pool {shape.pool}: {safe_text(f'{shape.platform}/{shape.preset}')} {mark}"
            )
    if report.reservations:
        rows = [("POOL", "GROUP", "STATE", "GPUS NEEDED", "GPUS FREE", "NODES FREE", "VERDICT")]
        rows += [
            (r.pool, r.group or f"({r.selector})", r.state or "-", str(r.gpus_needed),
             "-" if r.gpus_free is None else str(r.gpus_free),
             "-" if r.nodes_free is None else str(r.nodes_free), r.verdict)
            for r in report.reservations
        ]  # fmt: skip
        out.append("Reserved capacity:")
        out += _table(rows)
    if report.allowances:
        rows = [("POOL", "GROUP", "PROJECT ALLOWANCE", "STATE", "IN USE", "GPUS NEEDED",
                 "VERDICT")]  # fmt: skip
        rows += [
            (a.pool, a.group or "-", "no cap" if a.limit is None else str(a.limit),
             a.state.replace("_", " "), "-" if a.usage is None else str(a.usage),
             str(a.gpus_needed), a.verdict)
            for a in report.allowances
        ]  # fmt: skip
        out.append("Capacity allowances (this project's share of each group):")
        out += _table(rows)
    if report.availability:
        out.append("Availability (ResourceAdvice):")
        out += [
            f"  pool {a.pool}: {a.mode} {a.level.replace('_', ' ')}, {a.available} free, "
            f"{a.needed} needed ({a.data_state})"
            for a in report.availability
        ]
    out += price_lines(report)
    out += [f"warning: {w}" for w in report.warnings]
    for problem in report.problems:
        out.append(f"error: {problem.message}\n  hint: {problem.hint}")
    return "\n".join(out)


def undecided_text(report: PreflightReport) -> str:
    """Why an operation stops on the quotas preflight could not judge, and what to do."""
    rows = report.undecided()
    listed = ", ".join(f"{r.level} {r.resource} ({r.reason})" for r in rows)
    if report.undecided_exit() == 1:
        fix = "run it again when the cloud answers (--cloud-timeout sets how long a read may take)"
    else:
        fix = "get the access the warnings name, or check those quotas by hand"
    return (
        f"error: preflight cannot judge {len(rows)} quota(s) of {report.name!r}: {listed}\n"
        f"  hint: {fix}; --allow-unknown goes on without them"
    )
