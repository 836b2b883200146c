"""The Terraform supervisor: it outlives npa, stops Terraform gracefully, keeps its state,
reaps what Terraform leaves, and saves emergency state dumps.

Most tests run real Terraform. Two use a shell script in Terraform's place, each for a
reason real Terraform cannot give on demand: `test_an_emergency_state_dump_is_saved_0600_and_named`
needs the "Emergency state dump" message, which Terraform prints only when it cannot write
its state (FAKE_DUMP replays that message in Terraform's -json format); and
`test_signals_to_the_supervisor` needs a child that announces when its signal trap is set,
so the test can look at the supervisor's signal mask without a race."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from npa_sop_tui.events import Diagnostic, Event
from npa_sop_tui.sandbox.local_terraform import prepare
from npa_sop_tui.terraform import supervision
from npa_sop_tui.terraform.binary import clean_env, terraform_environment
from npa_sop_tui.terraform.runner import TerraformRunner

from testkit.wait import eventually, wait_until

CONFIG = """
terraform {
  required_providers {
    null = { source = "hashicorp/null", version = "2.1.2" }
  }
}
resource "null_resource" "quick" {
  count = 2
}
resource "null_resource" "slow" {
  depends_on = [null_resource.quick]
  provisioner "local-exec" { command = "sleep 30" }
}
"""


def _processes_in(folder: Path) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.readlink(entry / "cwd").startswith(str(folder)):
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except OSError:
            continue
    return found


def _assert_gone(folder: Path, within: float) -> None:
    try:
        wait_until(lambda: not _processes_in(folder), timeout=within, what="no process left")
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {_processes_in(folder)}") from None


@pytest.fixture
def workdir(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    local = prepare(tmp_path / "tf-home")
    work = tmp_path / "work"
    work.mkdir()
    (work / "main.tf").write_text(CONFIG)
    env = clean_env(local.env)
    return work, env, local.binary


async def _init(binary: str, work: Path, env: dict[str, str]) -> None:
    proc = await supervision.spawn(binary, ["init", "-input=false"], cwd=work, env=env)
    out = await proc.stdout.read()
    assert await proc.wait() == 0, out


async def _until_line(stream: asyncio.StreamReader, needle: bytes, seen: list[bytes]) -> None:
    async for line in stream:
        seen.append(line)
        if needle in line:
            return
    raise AssertionError(f"never saw {needle!r}: {b''.join(seen)[-2000:]!r}")


def _start_supervisor(
    binary: str, args: list[str], work: Path, env: dict[str, str], spool: Path | None = None
) -> subprocess.Popen[bytes]:
    """The supervisor as npa starts it, held by plain pipes we can drop like a dead npa."""
    config = json.dumps({"argv": [binary, *args], "spool": str(spool) if spool else ""})
    return subprocess.Popen(
        [sys.executable, "-I", "-S", str(supervision.SUPERVISOR), config],
        cwd=work,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _read_until(sup: subprocess.Popen[bytes], needle: bytes) -> None:
    assert sup.stdout is not None
    seen = b""
    for line in sup.stdout:
        seen += line
        if needle in line:
            return
    raise AssertionError(f"never saw {needle!r}: {seen[-2000:]!r}")


@pytest.mark.terraform
def test_npa_gone_terraform_stops_gracefully_and_keeps_state(
    workdir: tuple[Path, dict[str, str], str],
) -> None:
    work, env, binary = workdir
    asyncio.run(_init(binary, work, env))
    spool = work / ".npa-run" / "op.orphaned.log"
    args = ["apply", "-auto-approve", "-json", "-input=false"]
    sup = _start_supervisor(binary, args, work, env, spool)
    _read_until(sup, b'"null_resource.slow: Creating..."')
    # npa dies: its end of the lifeline closes and nobody reads Terraform's output any more.
    assert sup.stdin is not None and sup.stdout is not None
    sup.stdin.close()
    sup.stdout.close()
    gone_at = time.monotonic()
    assert sup.wait(timeout=20) == 1  # Terraform's own exit code after an interrupt
    assert time.monotonic() - gone_at < 5, "a 30 s local-exec was interrupted, not waited for"
    _assert_gone(work, within=2)
    state = json.loads((work / "terraform.tfstate").read_text())
    names = {(r["name"], len(r["instances"])) for r in state["resources"]}
    # Both quick resources were created before npa died, and are in state; the interrupted
    # one is kept too (tainted), so the next apply replaces it instead of duplicating it.
    assert ("quick", 2) in names and ("slow", 1) in names
    text = spool.read_text()
    # Whichever it noticed first: the lifeline's end of file, or the broken output pipe.
    assert "npa went away" in text or "npa's pipe is broken" in text
    assert "Interrupt received" in text
    assert "Terraform exited with 1" in text
    assert stat.S_IMODE(spool.stat().st_mode) == 0o600


@pytest.mark.terraform
async def test_interrupt_then_kill_through_the_lifeline(
    workdir: tuple[Path, dict[str, str], str],
) -> None:
    work, env, binary = workdir
    await _init(binary, work, env)
    events: list[Event] = []
    runner = TerraformRunner(binary, operation_id="op", on_event=events.append, env=env)
    task = asyncio.ensure_future(
        runner.run(["apply", "-auto-approve", "-json", "-input=false"], cwd=work)
    )
    await eventually(
        lambda: any(getattr(e, "addr", "") == "null_resource.slow" for e in events),
        timeout=20,
        what="the slow resource to start",
    )
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert any("Interrupt received" in getattr(e, "text", "") for e in events)
    _assert_gone(work, within=5)
    assert "null_resource.quick[1]" in (work / "terraform.tfstate").read_text() or (
        '"quick"' in (work / "terraform.tfstate").read_text()
    )


@pytest.mark.terraform
def test_a_killed_supervisor_takes_terraform_down(
    workdir: tuple[Path, dict[str, str], str],
) -> None:
    """The parent-death signal: even the supervisor's own death does not leave Terraform
    running; the provider plugin it orphans is stopped by the next operation's recovery."""
    from npa_sop_tui.lifecycle.recovery import reap_orphans

    work, env, binary = workdir
    asyncio.run(_init(binary, work, env))
    sup = _start_supervisor(binary, ["apply", "-auto-approve", "-json", "-input=false"], work, env)
    _read_until(sup, b'"null_resource.slow: Creating..."')
    sup.kill()
    sup.wait()
    wait_until(
        lambda: not any("terraform apply" in p for p in _processes_in(work)),
        timeout=10,
        what="terraform apply to exit with its supervisor",
    )
    # Terraform is gone; its plugin and provisioner may linger, with nobody to reap them.
    left = _processes_in(work)
    notes = reap_orphans(work)
    _assert_gone(work, within=5)
    assert len(notes) == len(left) and all("left running by an earlier run" in n for n in notes)


STATE = {
    "version": 4,
    "serial": 3,
    "lineage": "abc",
    "resources": [
        {
            "mode": "managed",
            "type": "null_resource",
            "name": "x",
            "instances": [{"attributes": {"id": "42"}}],
        }
    ],
}
DUMP = {"@level": "info", "@message": "Emergency state dump", "type": "log", "state": STATE}
FAKE_DUMP = f"""#!/bin/sh
echo '{{"@level":"info","@message":"Terraform 1.0.3","type":"version"}}'
echo '{json.dumps(DUMP)}'
exit 1
"""


async def test_an_emergency_state_dump_is_saved_0600_and_named(tmp_path: Path) -> None:
    fake = tmp_path / "terraform"
    fake.write_text(FAKE_DUMP)
    fake.chmod(0o755)
    events: list[Event] = []
    runner = TerraformRunner(str(fake), operation_id="op", on_event=events.append)
    result = await runner.run(["apply"], cwd=tmp_path)
    saved = tmp_path / "errored.tfstate"
    assert result.errored_state == str(saved)
    assert json.loads(saved.read_text())["resources"][0]["instances"][0]["attributes"]["id"] == "42"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    errors = [e for e in events if isinstance(e, Diagnostic) and e.severity == "error"]
    assert errors and str(saved) in errors[0].detail
    assert all('"lineage"' not in getattr(e, "text", "") for e in events)  # not in the log
    # A second dump never overwrites the first: it gets a dated name beside it.
    again = await runner.run(["apply"], cwd=tmp_path)
    assert again.errored_state and again.errored_state != str(saved)
    assert Path(again.errored_state).parent == tmp_path and saved.exists()


def _ignored_signals(pid: int) -> set[int]:
    """The signals `pid` ignores, from the SigIgn mask in /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return {n for n in range(1, 65) if mask >> (n - 1) & 1}
    raise AssertionError(f"no SigIgn line for pid {pid}")


async def test_signals_to_the_supervisor(tmp_path: Path) -> None:
    """SIGINT/SIGHUP (a terminal's) are npa's to decide; SIGTERM means: stop Terraform."""
    fake = tmp_path / "terraform"
    ready = tmp_path / "trap-set"
    fake.write_text(
        f"#!/bin/sh\ntrap 'echo got-int; exit 3' INT\ntouch {ready}\nwhile :; do sleep 0.05; done\n"
    )
    fake.chmod(0o755)
    proc = await supervision.spawn(str(fake), [], cwd=tmp_path, env=dict(os.environ))
    await eventually(ready.exists, timeout=20, what="the stand-in Terraform to set its trap")
    # The kernel drops a signal its target ignores when it is sent, so once the supervisor's
    # ignore mask holds SIGINT and SIGHUP, sending them cannot have a late effect to wait for.
    ignored = _ignored_signals(proc.pid)
    assert {signal.SIGINT, signal.SIGHUP} <= ignored and signal.SIGTERM not in ignored
    os.kill(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGHUP)
    assert proc.proc.returncode is None and _ignored_signals(proc.pid) == ignored
    os.kill(proc.pid, signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 10) == 3
    assert b"got-int" in await proc.stdout.read()


def test_terraform_gets_an_allow_listed_environment() -> None:
    source = {
        "PATH": "/usr/bin",
        "HOME": "/home/u",
        "NEBIUS_IAM_TOKEN": "nebius-secret",
        "AWS_SECRET_ACCESS_KEY": "aws-secret",
        "TF_VAR_region": "eu-north1",
        "TF_CLI_CONFIG_FILE": "/nonexistent/terraformrc",
        "GITHUB_TOKEN": "ghp_unrelated",
        "OPENAI_API_KEY": "sk-unrelated",
        "NPA_HOME": "/home/u/.npa",
        "KUBECONFIG": "/home/u/.kube/config",
        "LC_ALL": "C.UTF-8",
    }
    allowed = terraform_environment(source)
    assert set(allowed) == {
        "PATH",
        "HOME",
        "NEBIUS_IAM_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "TF_VAR_region",
        "TF_CLI_CONFIG_FILE",
        "KUBECONFIG",
        "LC_ALL",
    }
    env = clean_env({"TF_VAR_x": "1"}, source=source)
    assert "TF_CLI_CONFIG_FILE" not in env  # dangling: dropped
    assert env["TF_VAR_x"] == "1" and env["TF_IN_AUTOMATION"] == "1"
    assert "GITHUB_TOKEN" not in env and "OPENAI_API_KEY" not in env
