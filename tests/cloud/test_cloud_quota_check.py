"""Quota rows: units compared, limits the credentials cannot see, and which unknowns stop an
operation (and with which exit code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cloud import nebius_calls
from npa_sop_tui.cloud.client import CloudClient
from npa_sop_tui.cloud.model import Quota
from npa_sop_tui.cloud.needs import ALLOCATIONS, Need, quota_needs
from npa_sop_tui.cloud.preflight import run_preflight
from npa_sop_tui.cloud.preflight_report import PreflightReport
from npa_sop_tui.cloud.quota_check import quota_rows, unit_scale
from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState
from npa_sop_tui.sandbox.fake_nebius import FakeNebius
from npa_sop_tui.spec.model import spec_from_mapping

from .conftest import PROJECT, REGION, TENANT, TOKEN

GIB = 1024**3


@pytest.mark.parametrize(
    ("need", "unit", "scale"),
    [
        ("bytes", "byte", 1), ("bytes", "bytes", 1), ("bytes", "", 1), ("bytes", "GiB", GIB),
        ("bytes", "gibibytes", GIB), ("bytes", "TiB", 1024 * GIB), ("bytes", "piece", None),
        ("count", "", 1), ("count", "pieces", 1), ("count", "unit", 1), ("count", "byte", None),
        ("vcpu", "vcpu", 1), ("vcpu", "cores", 1), ("vcpu", "gpu", None), ("gpu", "GPUs", 1),
        ("gpu", "vcpu", None),
    ],
)  # fmt: skip
def test_a_quotas_unit_scales_to_the_needs_or_cannot_be_compared(
    need: str, unit: str, scale: int | None
) -> None:
    assert unit_scale(need, unit) == scale


def _rows(need: Need, **quota: object) -> tuple[PreflightReport, list[str]]:
    q = Quota(**{"name": need.resource, "region": REGION, "limit": 10, "usage": 1, **quota})
    rows, warnings = quota_rows([need], [q], region=REGION)
    return PreflightReport(name="c", region=REGION, rows=rows, warnings=warnings), warnings


def test_an_allowance_in_gibibytes_is_compared_in_bytes() -> None:
    report, warnings = _rows(Need("compute.disk.size.network-ssd", 12 * GIB, "bytes", "pool"),
                             unit="gibibyte")  # fmt: skip
    (row,) = report.rows
    assert (row.limit, row.usage, row.verdict) == (10 * GIB, GIB, "short by 3 GiB")
    assert "limit 10 GiB, in use 1 GiB" in warnings[0]


def test_a_hidden_limit_is_unknown_names_the_permission_and_stops_with_exit_2() -> None:
    report, warnings = _rows(Need("compute.instance.count", 3, "count", "3 nodes"), limit=None)
    (row,) = report.rows
    assert (row.verdict, row.reason) == ("unknown", "limit hidden")
    (warning,) = warnings
    assert warning.startswith("tenant quota compute.instance.count in eu-north1: its limit is "
                              "not visible to these credentials")  # fmt: skip
    assert "permission to read quota allowance limits" in warning
    assert "--allow-unknown" in warning
    assert report.undecided() == [row] and report.undecided_exit() == 2


def test_a_unit_npa_cannot_convert_is_unknown_and_stops_with_exit_2() -> None:
    report, warnings = _rows(Need("compute.filesystem.size.network-ssd", GIB, "bytes", "jail"),
                             unit="piece")  # fmt: skip
    assert [(r.verdict, r.reason) for r in report.rows] == [("unknown", "unit")]
    assert warnings == [
        "tenant quota compute.filesystem.size.network-ssd in eu-north1 counts in 'piece', "
        "which npa cannot compare with its need in bytes (1 GiB); check it by hand, or pass "
        "--allow-unknown"
    ]
    assert report.undecided_exit() == 2


def test_no_answer_stops_with_exit_1_and_a_quota_not_listed_does_not_stop() -> None:
    need = Need("compute.instance.count", 3, "count", "3 nodes")
    rows, _ = quota_rows([need], None, region=REGION)
    report = PreflightReport(name="c", region=REGION, rows=rows)
    assert [(r.verdict, r.reason) for r in rows] == [("unknown", "no answer")]
    assert report.undecided_exit() == 1
    rows, _ = quota_rows([need], [], region=REGION)
    assert [(r.verdict, r.reason) for r in rows] == [("unknown", "not listed")]
    assert PreflightReport(name="c", region=REGION, rows=rows).undecided_exit() == 0


def _spec() -> object:
    return spec_from_mapping({"apiVersion": "npa.soperator/v0.0.1", "name": "qc", "region": REGION,
                              "workers": [{"name": "cpu", "size": 2}]})  # fmt: skip


def test_every_nodes_address_and_the_logins_static_one_are_vpc_allocations() -> None:
    needs = {n.resource: n for n in quota_needs(_spec())}  # type: ignore[arg-type]
    nodes = needs["compute.instance.count"].amount
    assert needs[ALLOCATIONS].amount == nodes + 1
    assert "nebius_vpc_v1_allocation" in needs[ALLOCATIONS].why


async def test_the_allocation_quota_is_read_and_judged(
    cloud: CloudClient, cloud_state: FakeCloudState
) -> None:
    cloud_state.quotas = [Quota(q.name, q.region, 3, 0, "active") if q.name == ALLOCATIONS
                          else q for q in cloud_state.quotas]  # fmt: skip
    report = (await run_preflight(_spec(), cloud, tenant_id=TENANT, project_id=PROJECT,
                                  region=REGION)).report  # type: ignore[arg-type]  # fmt: skip
    row = next(r for r in report.rows if r.resource == ALLOCATIONS and r.level == "tenant")
    assert row.verdict.startswith("short by") and row.limit == 3


async def test_a_listing_cut_at_its_page_limit_says_so(
    cloud: CloudClient, cloud_state: FakeCloudState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(nebius_calls, "MAX_PAGES", 3)
    cloud_state.max_page = 1
    quotas = await cloud.quotas(TENANT)
    assert len(quotas) == 3
    report = (await run_preflight(_spec(), cloud, tenant_id=TENANT, project_id=PROJECT,
                                  region=REGION)).report  # type: ignore[arg-type]  # fmt: skip
    cut = [w for w in report.warnings if "the listing stopped after 3 pages" in w]
    assert any(w.startswith(f"quotas of {TENANT} at ") for w in cut), report.warnings
    assert all("(3 items); the rest was not read" in w for w in cut)


SPEC = "apiVersion: npa.soperator/v0.0.1\nname: qcli\nworkers:\n  - {name: cpu, size: 1}\n"


@pytest.mark.parametrize(
    ("break_it", "code", "says"),
    [
        ({"errors": {"quotas.v1.QuotaAllowanceService/List": "UNAVAILABLE"}}, 1,
         "run it again when the cloud answers"),
        ({"hide": True}, 2, "get the access the warnings name"),
    ],
    ids=["cloud-does-not-answer", "limits-hidden"],
)  # fmt: skip
def test_preflight_exits_1_or_2_on_quotas_it_cannot_judge_unless_allowed(
    break_it: dict[str, object], code: int, says: str, tmp_path: Path,
    fake_nebius: FakeNebius, cloud_state: FakeCloudState,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from dataclasses import replace

    from npa_sop_tui.cli.entry import main

    if break_it.get("hide"):
        cloud_state.quotas = [replace(q, limit=None) for q in cloud_state.quotas]
    cloud_state.errors.update(break_it.get("errors", {}))  # type: ignore[arg-type]
    for key, value in {"NEBIUS_IAM_TOKEN": TOKEN, "NPA_NEBIUS_ENDPOINT": fake_nebius.endpoint,
                       "NPA_REGION": REGION, "NPA_TENANT_ID": TENANT,
                       "NPA_PROJECT_ID": PROJECT}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    argv = ["soperator", "preflight", "--spec", str(spec), "--cloud-timeout", "10"]
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert "unknown" in out and "error: preflight cannot judge" in err and says in err
    assert "--allow-unknown goes on without them" in err
    assert main([*argv, "-o", "json"]) == code
    assert json.loads(capsys.readouterr().out)["ok"] is False
    assert main([*argv, "--allow-unknown"]) == 0
    assert "cannot judge" not in capsys.readouterr().err
