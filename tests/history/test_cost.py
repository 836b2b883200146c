"""Cost so far: the hourly price the deploy's preflight quoted (in its NDJSON log) × the
hours since the first good deploy after the last destroy; none when not up or unpriced."""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from npa_sop_tui.history.cost import CostSoFar, cost_so_far, quoted_hourly
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.tui.widgets.charts.cost import cost_lines

RECORDED = Path(__file__).parent / "data" / "deploy-demo.ndjson"


def _entry(npa_home: Path, *ops: OperationRecord, state: str = "deployed") -> None:
    entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm", state=state)  # type: ignore[arg-type]
    for op in ops:
        entry.record(op)
    inventory.save(entry)


def _op(
    kind: str, started: float, ended: float, log: Path | None, result: str = "ok"
) -> OperationRecord:
    return OperationRecord(
        id=f"{kind}-{started}",
        kind=kind,
        started=started,
        ended=ended,
        result=result,
        log=str(log) if log else None,  # type: ignore[arg-type]
    )


def test_hourly_price_from_the_recorded_preflight() -> None:
    quote = quoted_hourly(RECORDED)
    assert quote is not None
    hourly, currency = quote
    assert hourly > 0 and currency  # the sandbox's billing answer for the demo spec


def test_cost_runs_from_the_first_deploy_after_the_last_destroy(npa_home: Path) -> None:
    log = npa_home / "deploy.ndjson"
    shutil.copy(RECORDED, log)
    hourly, _ = quoted_hourly(log) or (Decimal(0), "")
    _entry(
        npa_home,
        _op("deploy", 0, 100, log),
        _op("destroy", 200, 300, None),
        _op("deploy", 1000, 3600, None),  # came up again at 3600 …
        _op("deploy", 5000, 5400, log),  # … and a later change was priced
    )
    cost = cost_so_far("demo")
    assert cost is not None and cost.since == 3600 and cost.hourly == hourly
    assert cost.total(3600 + 2 * 3600) == (hourly * 2).quantize(Decimal("0.01"))
    lines = [line.plain for line in cost_lines({"demo": cost}, 80, now=3600 + 7200)]
    assert "demo" in lines[1] and "2 h 0 min" in lines[1] and all(len(x) <= 80 for x in lines)


def test_no_cost_when_not_up_or_not_priced(npa_home: Path) -> None:
    log = npa_home / "deploy.ndjson"
    shutil.copy(RECORDED, log)
    _entry(npa_home, _op("deploy", 0, 100, log), state="destroyed")
    assert cost_so_far("demo") is None
    _entry(npa_home, _op("deploy", 0, 100, None))
    assert cost_so_far("demo") is None
    assert cost_so_far("nope") is None


def test_the_dashboard_line_rounds_the_quote_to_cents_in_the_reviews_money() -> None:
    # a preflight quote keeps the price list's six digits ("23.857600", "usd"); a person
    # reads cents, written as the wizard's review writes prices ($, not USD or usd)
    cost = CostSoFar(hourly=Decimal("23.857600"), currency="usd", since=0.0)
    assert cost.short_text(3600.0) == "$23.86 so far · $23.86/h"
    assert cost.short_text(1800.0) == "$11.93 so far · $23.86/h"
    other = CostSoFar(hourly=Decimal("2"), currency="eur", since=0.0)
    assert other.short_text(3600.0) == "2.00 eur so far · 2.00 eur/h"


@pytest.mark.parametrize("up", [178.4, 59, 3 * 3600 + 12 * 60 + 41, 26 * 3600 + 7])
def test_the_home_charts_figures_multiply_out_to_its_sum(up: float) -> None:
    """Three minutes at $24.52/h once read '1.21 usd (0.0 h × 24.52 usd/h)': the time shown
    is the time the sum is computed from, so duration × rate gives the sum to the cent."""
    cost = CostSoFar(hourly=Decimal("24.52"), currency="usd", since=0.0)
    line = cost_lines({"demo": cost}, 80, now=up)[1].plain
    found = re.search(
        r"\$([\d,.]+) \((?:(\d+) h )?(?:(\d+) min ?)?(?:(\d+) s)? × \$([\d.]+)/h\)", line
    )
    assert found, line
    total, h, m, sec, rate = found.groups()
    seconds = int(h or 0) * 3600 + int(m or 0) * 60 + int(sec or 0)
    assert abs(Decimal(rate) * seconds / 3600 - Decimal(total.replace(",", ""))) <= Decimal("0.005")
    assert "usd" not in line and "USD" not in line
