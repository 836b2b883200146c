"""Working as a team, end to end: Terraform 1.0.3's real S3 backend on moto's server.

Two npa homes stand for two machines. Every test runs the sandbox (stand-in recipe, PyPI
Terraform, offline) with its state in a bucket on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import OperationError
from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

from testkit.lifecycle import Recorder, make_spec, options
from testkit.moto import MotoServer, team_env
from testkit.wait import eventually

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

_CLI = "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"


def _npa(
    home: Path, env: dict[str, str], *args: str, wait: bool = True
) -> subprocess.Popen[str] | subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "NPA_HOME": str(home)}
    full.pop("NPA_SANDBOX_HOME", None)
    cmd = [sys.executable, "-c", _CLI, "soperator", *args]
    if wait:
        return subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=300)
    return subprocess.Popen(
        cmd, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _tfstate(moto: MotoServer, bucket: str, name: str) -> dict[str, Any]:
    body = moto.client().get_object(Bucket=bucket, Key=f"npa/{name}/terraform.tfstate")["Body"]
    return json.loads(body.read())


def _count(state: dict[str, Any]) -> int:
    return sum(len(r.get("instances") or []) for r in state.get("resources") or [])


def test_two_machines_race_list_and_destroy_from_the_other(
    moto: MotoServer, bucket_env: dict[str, str], tmp_path: Path
) -> None:
    bucket = bucket_env["NPA_STATE_BUCKET"]
    spec = tmp_path / "team.yaml"
    spec.write_text(dump_spec_yaml(make_spec("team")))
    env = {**bucket_env, "TF_VAR_standin_sleep_seconds": "0.3"}
    deploy = ("deploy", "--sandbox", "--yes", "--spec", str(spec))
    # Two machines start the same deploy at once: exactly one runs, the other is refused at
    # once and names the holder.
    racers = [_npa(tmp_path / home, env, *deploy, wait=False) for home in ("a", "b")]
    outcomes = [p.communicate(timeout=300) for p in racers]  # type: ignore[union-attr]
    codes = [p.returncode for p in racers]
    assert sorted(codes) == [0, 2], (codes, outcomes)
    winner = racers[codes.index(0)]
    loser_err = outcomes[codes.index(2)][1]
    assert "cluster 'team' is busy: deploy by " in loser_err
    assert f"(pid {winner.pid})" in loser_err and "@" in loser_err
    assert "Traceback" not in loser_err

    state = _tfstate(moto, bucket, "team")
    assert _count(state) == 25
    winner_home = tmp_path / ("a" if codes[0] == 0 else "b")
    local = [p for p in winner_home.glob("**/terraform.tfstate") if ".terraform" not in p.parts]
    assert local == []  # never a local copy (.terraform/ only records the backend)

    # A third machine that names the bucket with the flag sees the cluster and who ran it.
    third = tmp_path / "c"
    flag_env = {k: v for k, v in bucket_env.items() if k != "NPA_STATE_BUCKET"}
    listed = _npa(third, flag_env, "list", "--sandbox", "--state-bucket", bucket, "-o", "json")
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)["clusters"]
    last = entry["operations"][-1]
    assert (entry["name"], entry["state"], last["kind"], last["result"]) == (
        "team",
        "deployed",
        "deploy",
        "ok",
    )
    assert last["user"] and last["host"]
    text = _npa(third, flag_env, "list", "--sandbox", "--state-bucket", bucket)
    assert f"{last['user']}@{last['host']}" in text.stdout  # type: ignore[union-attr]

    # ... and can destroy it: its installation is rebuilt from the spec as deployed.
    destroyed = _npa(
        third, flag_env, "destroy", "--sandbox", "--yes", "-n", "team", "--state-bucket", bucket
    )
    assert destroyed.returncode == 0, destroyed.stderr
    assert "25 resources removed" in destroyed.stdout  # type: ignore[union-attr]
    assert _count(_tfstate(moto, bucket, "team")) == 0
    moto.client().head_bucket(Bucket=bucket)  # destroying the last cluster keeps the bucket


async def test_migrate_local_to_s3_and_back_keeps_the_state(
    moto: MotoServer,
    bucket_env: dict[str, str],
    sandbox_in_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from npa_sop_tui.cli.entry import main as cli
    from npa_sop_tui.lifecycle import api as lifecycle

    async def run_cli(argv: list[str]) -> int:
        return await asyncio.to_thread(cli, argv)  # the CLI runs its own event loop

    from npa_sop_tui.terraform.state import read_state

    bucket = bucket_env["NPA_STATE_BUCKET"]
    for key in bucket_env:
        if key.startswith("NPA_STATE_"):
            monkeypatch.delenv(key)  # deploy with local state first
    result = await lifecycle.deploy(make_spec("mig"), options=options())
    install = Path(result.install_dir)
    before = read_state(install / "terraform.tfstate")
    assert before is not None and _count(before) == 25

    flags = ["--sandbox", "--state-bucket", bucket]
    monkeypatch.setenv("NPA_STATE_ENDPOINT", bucket_env["NPA_STATE_ENDPOINT"])
    monkeypatch.setenv("NPA_STATE_REGION", bucket_env["NPA_STATE_REGION"])
    assert await run_cli(["soperator", "state", "migrate", "-n", "mig", "--to", "s3", *flags]) == 0
    out = capsys.readouterr().out
    assert f"serial {before['serial']}, 25 resources" in out and f"bucket: {bucket}" in out
    remote = _tfstate(moto, bucket, "mig")
    assert (remote["lineage"], remote["serial"], _count(remote)) == (
        before["lineage"],
        before["serial"],
        25,
    )
    assert not (install / "terraform.tfstate").exists()
    assert list(install.glob("terraform.tfstate.migrated-*"))  # the source, kept beside
    assert await run_cli(["soperator", "list", *flags, "-o", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [c["name"] for c in listed["clusters"]] == ["mig"]
    assert await run_cli(["soperator", "list", "--sandbox", "-o", "json"]) == 0  # local: moved away
    assert json.loads(capsys.readouterr().out)["clusters"] == []

    assert (
        await run_cli(["soperator", "state", "migrate", "-n", "mig", "--to", "local", *flags]) == 0
    )
    after = read_state(install / "terraform.tfstate")
    assert after is not None
    assert (after["lineage"], after["serial"], _count(after)) == (
        before["lineage"],
        before["serial"],
        25,
    )
    assert "Contents" not in moto.client().list_objects_v2(
        Bucket=bucket, Prefix="npa/mig/terraform.tfstate"
    )
    # Terraform agrees: the local state is complete, nothing to create again.
    monkeypatch.delenv("NPA_STATE_ENDPOINT")
    monkeypatch.delenv("NPA_STATE_REGION")
    planned = await lifecycle.plan(make_spec("mig"), options=options())
    assert (planned.changes.add, planned.changes.remove) == (0, 0)


async def test_bucket_stopped_mid_deploy_clear_error_nothing_lost(
    sandbox_in_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.lifecycle import api as lifecycle

    recorder = Recorder()

    server = MotoServer().start()
    try:
        bucket = server.make_bucket("npa-outage")
        for key, value in team_env(server.endpoint, bucket).items():
            monkeypatch.setenv(key, value)
        stopped = threading.Event()
        stoppers: list[threading.Thread] = []

        def sink(event: Any) -> None:
            # Stop the bucket once the full apply is under way (a resource of it is done).
            recorder(event)
            applying = "apply:full" in recorder.phases()
            if applying and event.kind == "resource_finished" and not stopped.is_set():
                stopped.set()
                stoppers.append(threading.Thread(target=server.stop))
                stoppers[0].start()

        with pytest.raises(OperationError) as failed:
            await lifecycle.deploy(make_spec("outage"), options=options(sleep=0.3), on_event=sink)
        assert stopped.is_set()
        message = failed.value.render()
        assert "could not be reached to save the Terraform state" in message
        assert "errored.tfstate (nothing is lost)" in message
        assert "Traceback" not in message
        finished = recorder.kinds("operation_finished")[-1]
        assert finished.result == "failed" and "cannot be reached" in finished.message
        errored = next(sandbox_in_home.glob("**/errored.tfstate"))
        saved = json.loads(errored.read_text())
        assert _count(saved) == 25
        assert errored.stat().st_mode & 0o077 == 0

        # The bucket comes back (empty: moto keeps nothing): the next deploy uploads what
        # Terraform kept, and nothing is created twice.
        await eventually(
            lambda: stoppers and not stoppers[0].is_alive(),
            timeout=30,
            what="the stopped bucket's server to exit",
        )
        server.start()
        server.make_bucket(bucket)
        recorder.events.clear()
        again = await lifecycle.deploy(make_spec("outage"), options=options(), on_event=recorder)
        notes = [e.text for e in recorder.kinds("log_line") if e.stream == "npa"]
        assert any("could not save (errored.tfstate)" in n for n in notes)
        assert "apply:k8s" not in again.phases and "apply:full" not in again.phases
        assert again.resources == 25
        assert not errored.exists()
        remote = server.client().get_object(Bucket=bucket, Key="npa/outage/terraform.tfstate")
        assert _count(json.loads(remote["Body"].read())) == 25
    finally:
        server.stop()


async def test_a_deploy_whose_lock_reply_was_lost_runs_without_busy(
    moto: MotoServer, bucket_env: dict[str, str], sandbox_in_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """The bucket takes the lock, the reply never comes back, the S3 client retries and meets
    its own lock: the deploy runs (the cluster is not "busy" by its own process) and the
    lock is gone afterwards."""
    from npa_sop_tui.lifecycle import api as lifecycle

    from testkit.s3_proxy import ReplyDroppingProxy

    def lock_create(method: str, path: str, headers: Any) -> bool:
        return method == "PUT" and path.endswith("/npa.lock") and "If-None-Match" in headers

    with ReplyDroppingProxy(moto.endpoint, lock_create) as proxy:
        monkeypatch.setenv("NPA_STATE_ENDPOINT", proxy.endpoint)
        result = await lifecycle.deploy(make_spec("lostreply"), options=options())
    bucket = bucket_env["NPA_STATE_BUCKET"]
    assert proxy.dropped == [("PUT", f"/{bucket}/npa/lostreply/npa.lock")]
    assert result.resources == 25
    listed = moto.client().list_objects_v2(Bucket=bucket, Prefix="npa/lostreply/npa.lock")
    assert listed.get("KeyCount", 0) == 0  # released
