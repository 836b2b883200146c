"""`state init`: the bucket is created through the official Nebius SDK over real gRPC.

The server here is a local gRPC server on 127.0.0.1 implementing the storage BucketService
(and the operation service the SDK polls) with the SDK's own message classes, as the SDK
ships no servicers: requests and answers cross the wire exactly as they do with Nebius.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main as cli

from testkit.moto import MotoServer, team_env
from testkit.s3_proxy import ConditionIgnoringProxy

TOKEN = "npa-test-iam-token"


class FakeStorage:
    def __init__(self) -> None:
        self.buckets: dict[tuple[str, str], Any] = {}
        self.calls: list[tuple[str, Any, str]] = []
        self.lock = threading.Lock()
        self.server: Any = None
        self.port = 0
        self.delay = 0.0  # seconds each call hangs before answering (a slow or stuck API)
        self.refuse = False  # every call answers UNAUTHENTICATED (a token the API refuses)

    def _done(self, resource_id: str) -> Any:
        from nebius.api.google.rpc import Status
        from nebius.api.nebius.common.v1 import Operation

        return Operation(id=f"op-{resource_id}", resource_id=resource_id, status=Status(code=0))

    def _note(self, method: str, request: Any, ctx: Any) -> None:
        auth = dict(ctx.invocation_metadata()).get("authorization", "")
        with self.lock:
            self.calls.append((method, request, auth))

    def create(self, request: Any, ctx: Any) -> Any:
        import grpc
        from nebius.api.nebius.common.v1 import ResourceMetadata
        from nebius.api.nebius.storage.v1 import Bucket

        self._note("Create", request, ctx)
        if self.refuse:
            ctx.abort(grpc.StatusCode.UNAUTHENTICATED, "the access token is not valid")
        if self.delay:
            import time

            time.sleep(self.delay)
        key = (request.metadata.parent_id, request.metadata.name)
        if key in self.buckets:
            ctx.abort(grpc.StatusCode.ALREADY_EXISTS, f"bucket {key[1]} exists")
        bucket_id = f"storagebucket-{len(self.buckets) + 1}"
        metadata = ResourceMetadata(id=bucket_id, parent_id=key[0], name=key[1])
        self.buckets[key] = Bucket(metadata=metadata, spec=request.spec)
        return self._done(bucket_id)

    def get_by_name(self, request: Any, ctx: Any) -> Any:
        import grpc

        self._note("GetByName", request, ctx)
        bucket = self.buckets.get((request.parent_id, request.name))
        if bucket is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, "no such bucket")
        return bucket

    def update(self, request: Any, ctx: Any) -> Any:
        self._note("Update", request, ctx)
        key = (request.metadata.parent_id, request.metadata.name)
        self.buckets[key].spec = request.spec
        return self._done(request.metadata.id)

    def get_operation(self, request: Any, ctx: Any) -> Any:
        self._note("GetOperation", request, ctx)
        return self._done(request.id.removeprefix("op-"))

    def start(self) -> FakeStorage:
        import grpc
        from nebius.api.nebius.common.v1 import GetOperationRequest, Operation
        from nebius.api.nebius.storage.v1 import (
            Bucket,
            CreateBucketRequest,
            GetBucketByNameRequest,
            UpdateBucketRequest,
        )

        def unary(fn: Any, req: Any, resp: Any) -> Any:
            return grpc.unary_unary_rpc_method_handler(
                fn, request_deserializer=req.FromString, response_serializer=resp.SerializeToString
            )

        buckets = grpc.method_handlers_generic_handler(
            "nebius.storage.v1.BucketService",
            {
                "Create": unary(self.create, CreateBucketRequest, Operation),
                "GetByName": unary(self.get_by_name, GetBucketByNameRequest, Bucket),
                "Update": unary(self.update, UpdateBucketRequest, Operation),
            },
        )
        operations = grpc.method_handlers_generic_handler(
            "nebius.common.v1.OperationService",
            {"Get": unary(self.get_operation, GetOperationRequest, Operation)},
        )
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers((buckets, operations))
        self.port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        return self


@pytest.fixture
def storage(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeStorage]:
    """The Nebius side (bucket created through the SDK) and, for the S3 side state init
    probes (conditional writes), moto's real S3 API holding the same bucket."""
    with contextlib.suppress(Exception):  # the session's moto may have it from another test
        moto.make_bucket("team-state")
    for key, value in team_env(moto.endpoint, "team-state").items():
        if key != "NPA_STATE_BUCKET":
            monkeypatch.setenv(key, value)
    fake = FakeStorage().start()
    monkeypatch.setenv("NPA_NEBIUS_ENDPOINT", f"127.0.0.1:{fake.port}")
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    monkeypatch.setenv("NPA_PROJECT_ID", "project-team")
    monkeypatch.setenv("NPA_REGION", "eu-north1")
    try:
        yield fake
    finally:
        fake.server.stop(grace=0).wait(5)


def test_state_init_creates_a_versioned_bucket_and_prints_the_config(
    storage: FakeStorage, capsys: pytest.CaptureFixture[str]
) -> None:
    from nebius.api.nebius.storage.v1 import VersioningPolicy

    assert cli(["soperator", "state", "init", "--bucket", "team-state"]) == 0
    out = capsys.readouterr().out
    assert "Created bucket 'team-state' (storagebucket-1) with versioning enabled" in out
    assert "state:\n  backend: s3\n  bucket: team-state\n  region: eu-north1" in out
    created = storage.buckets[("project-team", "team-state")]
    assert created.spec.versioning_policy == VersioningPolicy.ENABLED
    method, _, auth = storage.calls[0]
    assert (method, auth) == ("Create", f"Bearer {TOKEN}")
    assert TOKEN not in out

    # Again: the bucket is kept, and versioning switched back on if someone turned it off.
    created.spec.versioning_policy = VersioningPolicy.SUSPENDED
    assert cli(["soperator", "state", "init", "--bucket", "team-state", "-o", "json"]) == 0
    assert '"created": false' in capsys.readouterr().out
    assert [c[0] for c in storage.calls[1:]][:3] == ["Create", "GetByName", "Update"]
    assert created.spec.versioning_policy == VersioningPolicy.ENABLED


def test_state_init_sign_in_error_names_the_credential_source(
    storage: FakeStorage, capsys: pytest.CaptureFixture[str]
) -> None:
    storage.refuse = True
    assert cli(["soperator", "state", "init", "--bucket", "team-state"]) == 2
    err = capsys.readouterr().err
    assert (
        "signing in to Nebius with the token in NEBIUS_IAM_TOKEN failed: the API refused "
        "the credentials"
    ) in err
    assert "nebius iam get-access-token" in err  # the fix for that source
    assert "Traceback" not in err and TOKEN not in err


def test_state_init_bad_input_exit_2(
    storage: FakeStorage, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["soperator", "state", "init", "--bucket", "Team_State"]) == 2
    assert "not a valid bucket name" in capsys.readouterr().err
    monkeypatch.delenv("NPA_PROJECT_ID")
    assert cli(["soperator", "state", "init", "--bucket", "team-state"]) == 2
    assert "--project" in capsys.readouterr().err
    assert storage.calls == []


def test_state_init_without_credentials_says_how_to_get_them(
    storage: FakeStorage,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.delenv("NEBIUS_IAM_TOKEN")
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.nebius/config.yaml
    assert cli(["soperator", "state", "init", "--bucket", "team-state"]) == 2
    err = capsys.readouterr().err
    assert "no Nebius credentials" in err and "nebius profile create" in err


def test_state_init_with_only_a_nebius_cli_profile(
    storage: FakeStorage, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No NEBIUS_IAM_TOKEN: the CLI profile's credentials create it (the AWS_* key of the
    fixture only reaches the bucket's S3 side, for the conditional-write probe)."""
    import os

    monkeypatch.delenv("NEBIUS_IAM_TOKEN")
    nebius_dir = Path(os.environ["HOME"]) / ".nebius"
    nebius_dir.mkdir()
    (nebius_dir / "token").write_text("profile-token")
    (nebius_dir / "other-token").write_text("someone-elses-token")
    (nebius_dir / "config.yaml").write_text(
        "default: other\nprofiles:\n"
        f"  other:\n    token-file: {nebius_dir / 'other-token'}\n"
        f"  team:\n    token-file: {nebius_dir / 'token'}\n"
    )
    argv = ["soperator", "state", "init", "--bucket", "team-state", "--profile", "team"]
    assert cli(argv) == 0
    out = capsys.readouterr().out
    assert "Created bucket 'team-state'" in out
    assert "minted from your Nebius profile" in out
    assert [(m, a) for m, _, a in storage.calls][:1] == [("Create", "Bearer profile-token")]


def test_state_init_probes_conditional_writes_and_passes_on_moto(
    storage: FakeStorage, moto: MotoServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["soperator", "state", "init", "--bucket", "team-state", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["bucket"]["conditional_writes"] == "enforced"
    listed = moto.client().list_objects_v2(Bucket="team-state", Prefix="npa/.npa-probe/")
    assert listed.get("KeyCount", 0) == 0  # the probe cleans up after itself


def test_state_init_refuses_a_bucket_that_ignores_conditional_writes(
    storage: FakeStorage, moto: MotoServer, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    with ConditionIgnoringProxy(moto.endpoint) as proxy:
        monkeypatch.setenv("NPA_STATE_ENDPOINT", proxy.endpoint)
        assert cli(["soperator", "state", "init", "--bucket", "team-state"]) == 2
    captured = capsys.readouterr()
    assert proxy.seen_conditions >= 3  # npa did send the conditions; the store dropped them
    assert "does not honour conditional writes" in captured.err
    assert "If-None-Match: *) was accepted" in captured.err
    assert "stale ETag (If-Match) was accepted" in captured.err
    assert "hint:" in captured.err and "Traceback" not in captured.err
    assert "state:\n  backend: s3" not in captured.out  # no config advised for it


def test_state_init_is_bounded_by_the_cloud_timeout(
    storage: FakeStorage, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    storage.delay = 8.0  # the API hangs longer than the timeout given
    started = time.monotonic()
    code = cli(["soperator", "state", "init", "--bucket", "team-state", "--cloud-timeout", "1.5"])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code != 0 and "did not finish within 1.5s" in err, err
    assert elapsed < 7, elapsed
    assert "Traceback" not in err


@pytest.fixture
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    from npa_sop_tui.state import versioning_wait

    monkeypatch.setattr(versioning_wait, "INTERVAL", 0.3)


def _suspended_bucket(moto: MotoServer, storage: FakeStorage, name: str) -> None:
    """A bucket that exists in Nebius and in S3 with versioning off."""
    from nebius.api.nebius.common.v1 import ResourceMetadata
    from nebius.api.nebius.storage.v1 import Bucket, BucketSpec, VersioningPolicy

    with contextlib.suppress(Exception):
        moto.make_bucket(name)
    moto.client().put_bucket_versioning(
        Bucket=name, VersioningConfiguration={"Status": "Suspended"}
    )
    metadata = ResourceMetadata(id="storagebucket-old", parent_id="project-team", name=name)
    spec = BucketSpec(versioning_policy=VersioningPolicy.SUSPENDED)
    storage.buckets[("project-team", name)] = Bucket(metadata=metadata, spec=spec)


def test_state_init_waits_until_versioning_applies(
    moto: MotoServer, storage: FakeStorage, quick_polls: None,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    _suspended_bucket(moto, storage, "team-versioned")
    # S3 applies the change a little after npa first asked, as Nebius does minutes later.
    from npa_sop_tui.state.bucket import Bucket

    real = Bucket.versioning
    timers: list[threading.Timer] = []

    def first_read_starts_the_clock(self: Bucket) -> str:
        if not timers:
            timers.append(threading.Timer(1.0, lambda: moto.client().put_bucket_versioning(
                Bucket="team-versioned", VersioningConfiguration={"Status": "Enabled"}
            )))  # fmt: skip
            timers[0].start()
        return real(self)

    monkeypatch.setattr(Bucket, "versioning", first_read_starts_the_clock)
    try:
        code = cli(["soperator", "state", "init", "--bucket", "team-versioned", "-o", "json"])
    finally:
        for timer in timers:
            timer.cancel()
    out, err = capsys.readouterr()
    assert code == 0, err
    doc = json.loads(out)
    assert doc["bucket"]["versioning"] == "enabled"
    assert "waiting for Nebius to apply versioning on s3://team-versioned" in err
    assert "S3 reports Suspended" in err
    assert "versioning of s3://team-versioned is in effect" in err
    # S3 says Enabled already, yet the change is minutes old: the caveat stays, and nothing
    # is written into the bucket to probe it (conditional writes wait for the first
    # operation after the 15 minutes).
    assert "within up to 15 minutes" in doc["bucket"]["note"]
    assert doc["bucket"]["conditional_writes"] == "not checked yet"
    versions = moto.client().list_object_versions(Bucket="team-versioned", Prefix="npa/")
    assert not versions.get("Versions") and not versions.get("DeleteMarkers")


def test_the_versioning_caveat_is_said_again_within_the_15_minutes(
    moto: MotoServer, storage: FakeStorage, quick_polls: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Protects the caveat against S3 reporting Enabled at once: a second `state init`
    within 15 minutes of the change (versioning already on in Nebius) still says it, and
    still writes no probe object."""
    _suspended_bucket(moto, storage, "team-again")
    moto.client().put_bucket_versioning(
        Bucket="team-again", VersioningConfiguration={"Status": "Enabled"}
    )  # S3 applies it at once
    assert cli(["soperator", "state", "init", "--bucket", "team-again"]) == 0
    first = capsys.readouterr().out
    assert cli(["soperator", "state", "init", "--bucket", "team-again"]) == 0
    again = capsys.readouterr().out
    for out in (first, again):
        assert "Versioning was switched on at " in out and "within up to 15 minutes" in out
        assert "npa writes no test object until then" in out
        assert "enforces conditional writes" not in out
    versions = moto.client().list_object_versions(Bucket="team-again", Prefix="npa/")
    assert not versions.get("Versions") and not versions.get("DeleteMarkers")


def test_state_init_says_when_versioning_has_not_applied_yet(
    moto: MotoServer, storage: FakeStorage, quick_polls: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bound is the cloud timeout (the Nebius calls get as long: a busy machine needs a few
    # seconds for them); S3 never applies the change here, so the wait runs out.
    _suspended_bucket(moto, storage, "team-slow")
    args = ["soperator", "state", "init", "--bucket", "team-slow", "--cloud-timeout", "6"]
    assert cli(args) == 0
    out, err = capsys.readouterr()
    assert "with versioning pending" in out
    assert "within up to 15 minutes" in out and "had not applied after 6s" in out
    assert "waiting for Nebius to apply versioning" in err and "up to 6s" in err
