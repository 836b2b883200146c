"""The preflight report as text: what the cloud names (a resource, a capacity block group,
its state, a platform) stays in its cell, every control in it shown."""

from __future__ import annotations

from npa_sop_tui.cloud.preflight_report import (
    PlatformsSeen,
    PoolShape,
    PreflightReport,
    QuotaRow,
    ReservationRow,
)
from npa_sop_tui.cloud.report_text import render_text

from testkit.hostile import OSC52, assert_inert

FORGED = f"gpus\nfake-row  1  1  ok {OSC52}"


def test_the_clouds_names_stay_in_their_cells() -> None:
    report = PreflightReport(
        name="demo",
        region="eu-north1",
        rows=[QuotaRow(resource=FORGED, needed=1, limit=2, usage=0, verdict=FORGED, unit="")],
        platforms=PlatformsSeen(
            source="live",
            offered={FORGED: []},
            pools=[PoolShape(pool="gpu", platform=FORGED, preset="p", offered=True)],
        ),
        reservations=[
            ReservationRow(
                pool="gpu",
                selector="name",
                group=FORGED,
                state=FORGED,
                gpus_needed=8,
                nodes_needed=1,
                verdict="ok",
            )
        ],
    )
    text = render_text(report)
    assert_inert(text)
    assert not any(line.startswith("fake-row") for line in text.splitlines())
    assert text.count("gpus␊fake-row  1  1  ok ␛]52;c;") >= 4  # each place it was named
