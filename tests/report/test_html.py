"""`npa soperator report`: a self-contained HTML page of a cluster's last operation. The
page is opened in Debian's chromium (Playwright) with every request intercepted: it must
make none, and it must show the verdict."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.events import GpuCheckReported
from npa_sop_tui.history.oplog import read_events
from npa_sop_tui.history.timeline import timeline_of
from npa_sop_tui.home import inventory
from npa_sop_tui.home.inventory import InventoryEntry, OperationRecord
from npa_sop_tui.report.html import ReportData, render_report
from npa_sop_tui.status.model import ActiveCheckInfo

RECORDED = Path(__file__).parents[1] / "history" / "data" / "deploy-demo.ndjson"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _recorded_deploy(npa_home: Path) -> OperationRecord:
    log = npa_home / "deploy.ndjson"
    shutil.copy(RECORDED, log)
    timeline = timeline_of(read_events(log))
    record = OperationRecord(
        id=timeline.operation_id,
        kind="deploy",
        started=timeline.started or 0,
        ended=timeline.finished,
        result="ok",
        summary="deployed demo <b>1</b>",  # markup in a value stays text
        log=str(log),
        user="alice",
        host="laptop",
    )
    entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm", state="deployed")
    entry.record(record)
    inventory.save(entry)
    return record


def test_report_is_self_contained_and_shows_the_verdict(
    npa_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = _recorded_deploy(npa_home)
    out = tmp_path / "demo.html"
    assert main(["soperator", "report", "--name", "demo", "--out", str(out), "--no-status"]) == 0
    assert "OK" in capsys.readouterr().out
    html = out.read_text()
    assert record.id in html and "&lt;b&gt;1&lt;/b&gt;" in html
    for external in ("http://", "https://", "src=", "<link", "@import", "url("):
        assert external not in html.replace('xmlns="http://www.w3.org/2000/svg"', ""), external

    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (scripts/test.sh installs it)")
    from playwright.sync_api import Route, sync_playwright

    requested: list[str] = []

    def refuse(route: Route) -> None:  # the page itself loads; anything else is recorded
        if route.request.url == out.as_uri():
            route.continue_()
            return
        requested.append(route.request.url)
        route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.route("**/*", refuse)
            page.goto(out.as_uri())
            assert page.inner_text("#verdict").startswith("Verdict: OK")
            bars = page.locator("svg g.bar")
            assert bars.count() == 19
            assert page.locator("svg g.bar.critical").count() >= 1
            # readable: no label runs into the bars' column, the axis has round ticks
            overlaps = page.evaluate(
                """() => [...document.querySelectorAll('svg g.bar')].filter(g => {
                    const label = g.querySelector('text.label').getBBox();
                    const bar = g.querySelector('rect').getBBox();
                    return label.x + label.width > 360 || label.x + label.width > bar.x;
                }).map(g => g.dataset.addr)"""
            )
            assert overlaps == []
            ticks = page.locator("svg line.tick")
            assert ticks.count() >= 4
            assert "critical path" in (page.locator("svg").text_content() or "")
            page.wait_for_timeout(300)  # late requests (fonts, images) would show up here
        finally:
            browser.close()
    assert requested == []


def test_report_sections_from_live_status_and_gpu_gate() -> None:
    from tests.tui.fakes import _status  # a full snapshot (verdict degraded, one drained node)

    status = _status()
    assert status.kube is not None
    status.kube.active_checks = [
        ActiveCheckInfo(
            name="all-reduce", type="slurmJob", status="Failed", failures=["job 7: <NCCL>"]
        )
    ]
    status.kube.active_checks_crd = True
    gate = GpuCheckReported(
        ts=1,
        operation_id="op",
        pool="gpu",
        node="gpu-0",
        status="FAIL",
        check="dcgmi",
        message="XID 79",
    )
    data = ReportData(
        cluster="demo",
        operation={"id": "op", "kind": "deploy", "result": "ok", "started": 0, "ended": 60},
        timeline=timeline_of(read_events(RECORDED)),
        gpu_checks=[gate],
        status=status,
    )
    html = render_report(data)
    assert 'class="verdict degraded">DEGRADED</span> 1 Slurm node drained' in html
    assert "all-reduce" in html and "job 7: &lt;NCCL&gt;" in html
    assert "dcgmi" in html and "XID 79" in html and ">FAIL<" in html


def test_report_refuses_unknown_cluster_and_bad_out(npa_home: Path, tmp_path: Path) -> None:
    assert main(["soperator", "report", "--name", "nope", "--out", str(tmp_path / "a.html")]) == 2
    _recorded_deploy(npa_home)
    missing = tmp_path / "no-such-dir" / "a.html"
    assert main(["soperator", "report", "--name", "demo", "--out", str(missing)]) == 2
    assert not missing.exists()
