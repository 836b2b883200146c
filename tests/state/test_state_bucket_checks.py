"""A bucket's conditional-write verdict, probed once and kept in the home, and the quiet
window after a versioning change (against moto's real S3 API, and a proxy that ignores the
conditions as a store without them would)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from npa_sop_tui.errors import OperationError
from npa_sop_tui.state import bucket_checks as bc
from npa_sop_tui.state.bucket import Bucket
from npa_sop_tui.state.conditional import ConditionalWritesIgnored
from npa_sop_tui.state.location import StateLocation

from testkit.moto import MotoServer
from testkit.s3_proxy import ConditionIgnoringProxy

SPEC = "apiVersion: npa.soperator/v0.0.1\nname: byhand\nworkers:\n  - {name: cpu, size: 1}\n"


def _bucket(env: dict[str, str], endpoint: str | None = None) -> Bucket:
    return Bucket(StateLocation(backend="s3", bucket=env["NPA_STATE_BUCKET"],
                                endpoint=endpoint or env["NPA_STATE_ENDPOINT"],
                                region=env["NPA_STATE_REGION"]))  # fmt: skip


def _probe_traces(moto: MotoServer, bucket: str) -> int:
    """Versions and delete markers the probe leaves in a versioned bucket (its cleanup
    cannot hide that it wrote)."""
    found = moto.client().list_object_versions(Bucket=bucket, Prefix="npa/.npa-probe/")
    return len(found.get("Versions") or []) + len(found.get("DeleteMarkers") or [])


def test_the_verdict_is_probed_once_and_kept_in_the_home(
    moto: MotoServer, bucket_env: dict[str, str], npa_home: Path
) -> None:
    bucket = _bucket(bucket_env)
    bc.ensure_conditional_writes(bucket, now=lambda: 1000.0)
    record = json.loads(bc.record_path(bucket).read_text())
    assert (record["conditional_writes"], record["probed_at"]) == ("enforced", 1000.0)
    assert record["bucket"] == bucket.name and record["endpoint"] == moto.endpoint
    assert stat.S_IMODE(bc.record_path(bucket).stat().st_mode) == 0o600
    assert bc.record_path(bucket).parent.parent == npa_home
    traces = _probe_traces(moto, bucket.name)
    assert traces > 0
    bc.ensure_conditional_writes(bucket)  # known now: no second probe
    assert _probe_traces(moto, bucket.name) == traces


def test_a_store_that_ignores_conditions_is_refused_and_stays_refused(
    moto: MotoServer, bucket_env: dict[str, str], npa_home: Path
) -> None:
    with ConditionIgnoringProxy(moto.endpoint) as proxy:
        bucket = _bucket(bucket_env, proxy.endpoint)
        stale = r"a stale ETag \(If-Match\) was accepted"
        with pytest.raises(ConditionalWritesIgnored, match=stale):
            bc.ensure_conditional_writes(bucket)
        seen = proxy.seen_conditions
        with pytest.raises(ConditionalWritesIgnored) as again:
            bc.ensure_conditional_writes(bucket)
        assert proxy.seen_conditions == seen  # the kept verdict: not probed again
    assert again.value.exit_code == 2
    assert "does not honour conditional writes (checked " in again.value.message
    assert again.value.hint and "state init --bucket" in again.value.hint


def test_no_test_object_is_written_while_a_versioning_change_applies(
    moto: MotoServer, bucket_env: dict[str, str], npa_home: Path
) -> None:
    bucket = _bucket(bucket_env)
    bc.remember(bucket, versioning_changed_at=1000.0)
    assert bc.versioning_settles_at(bucket, now=1000.0 + 899) == 1000.0 + bc.VERSIONING_SETTLES
    with pytest.raises(OperationError) as early:
        bc.ensure_conditional_writes(bucket, now=lambda: 1000.0 + 899)
    assert early.value.exit_code == 1
    assert "npa writes no test object into it until its versioning change has applied" in (
        early.value.message
    )
    assert _probe_traces(moto, bucket.name) == 0
    assert bc.versioning_settles_at(bucket, now=1000.0 + 900) is None
    bc.ensure_conditional_writes(bucket, now=lambda: 1000.0 + 901)
    assert bc.read_record(bucket)["conditional_writes"] == "enforced"


def test_a_record_someone_else_could_have_written_is_not_trusted(
    bucket_env: dict[str, str], npa_home: Path
) -> None:
    bucket = _bucket(bucket_env)
    bc.remember(bucket, conditional_writes="enforced", probed_at=1.0)
    path = bc.record_path(bucket)
    os.chmod(path, 0o666)
    assert bc.read_record(bucket) == {}
    path.write_text("not json")
    os.chmod(path, 0o600)
    assert bc.read_record(bucket) == {}


def test_a_hand_configured_bucket_that_ignores_conditions_is_refused_at_the_first_deploy(
    moto: MotoServer, bucket_env: dict[str, str], sandbox_in_home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """`state: {backend: s3, …}` written into the config by hand, no `state init`: the first
    deploy probes the bucket, refuses it (exit 2, as `state init` does) before anything is
    written there, and keeps the verdict."""
    from npa_sop_tui.cli.entry import main

    spec = tmp_path / "c.yaml"
    spec.write_text(SPEC)
    for key in ("NPA_STATE_BUCKET", "NPA_STATE_ENDPOINT", "NPA_STATE_REGION"):
        monkeypatch.delenv(key)
    bucket = bucket_env["NPA_STATE_BUCKET"]
    with ConditionIgnoringProxy(moto.endpoint) as proxy:
        (sandbox_in_home / "config.yaml").write_text(
            f"state:\n  backend: s3\n  bucket: {bucket}\n  endpoint: {proxy.endpoint}\n"
            f"  region: {bucket_env['NPA_STATE_REGION']}\n"
        )
        code = main(["soperator", "deploy", "--sandbox", "--yes", "--spec", str(spec)])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "does not honour conditional writes" in err and "Traceback" not in err
        assert proxy.seen_conditions >= 3
        listed = moto.client().list_objects_v2(Bucket=bucket, Prefix="npa/byhand/")
        assert listed.get("KeyCount", 0) == 0  # no lock, record, log or state written
        assert main(["soperator", "deploy", "--sandbox", "--yes", "--spec", str(spec)]) == 2
        assert "does not honour conditional writes (checked" in capsys.readouterr().err
