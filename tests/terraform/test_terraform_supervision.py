"""The Terraform supervisor: it outlives npa, stops Terraform gracefully, keeps its state,
reaps what Terraform leaves, and saves emergency state dumps.

Most tests run real Terraform. Two use a shell script in Terraform's place, each for a
reason real Terraform cannot give on demand: `test_an_emergency_state_dump_is_saved_0600_and_named`
needs the "Emergency state dump" message, which Terraform prints only when it cannot write
its state (FAKE_DUMP replays that message in Terraform's -json format); and
`test_signals_to_the_supervisor` needs a child that announces when its signal trap is set,
so the test can look at the supervisor's signal mask without a race. The tests of spawn()
and its handle (at the end) supervise /bin/sh: they check the supervisor's plumbing (folder,
environment, umask, session, held descriptors, line limit, lifeline words, spool), which
does not depend on what the supervised command is."""

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
from npa_sop_tui.home.fsutil import RESERVE_NAME
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
    # Terraform's message, or (when its interrupted provisioner ended the apply first) the
    # provisioner's: the same graceful stop, see test_interrupt_then_kill_through_the_lifeline
    assert "Interrupt received" in text or "signal: interrupt" in text, text
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
    # Terraform's own "Interrupt received" is printed by a goroutine of its own: on a busy
    # machine the provisioner, interrupted in the same group, can fail the apply and end
    # Terraform first. Either way the stop was the graceful one, never the kill.
    said = " ".join(
        f"{getattr(e, 'text', '')} {getattr(e, 'summary', '')} {getattr(e, 'detail', '')}"
        for e in events
    )
    assert "Interrupt received" in said or "signal: interrupt" in said, said
    assert "killed before it could stop cleanly" not in said
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
    # what npa adds goes through the allow-list too: it sets values, never other names
    added = clean_env({"LD_PRELOAD": "/x.so", "BASH_ENV": "/x.sh", "TF_VAR_y": "2"}, source=source)
    assert "LD_PRELOAD" not in added and "BASH_ENV" not in added and added["TF_VAR_y"] == "2"


# -- spawn() and the handle, with /bin/sh as the supervised command ------------------------


def test_the_run_folder_and_the_spool_of_an_operation() -> None:
    """Protects where recovery looks for an orphaned run's output (`.npa-run/<op>.orphaned.log`)."""
    assert supervision.run_dir("/srv/inst") == Path("/srv/inst/.npa-run")  # type: ignore[arg-type]
    assert supervision.spool_path(Path("/srv/inst"), "deploy-7") == Path(
        "/srv/inst/.npa-run/deploy-7.orphaned.log"
    )


def _supervisor_config(pid: int) -> dict[str, object] | None:
    parts = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    try:
        config = json.loads(parts[4])
    except (IndexError, ValueError):
        return None
    return config if isinstance(config, dict) and "ballast" in config else None


async def _sh(tmp_path: Path, script: str, **kwargs: object) -> supervision.Supervised:
    env = {"PATH": os.environ["PATH"], "MARK": "from-npa"}
    return await supervision.spawn("/bin/sh", ["-c", script], cwd=tmp_path, env=env, **kwargs)  # type: ignore[arg-type]


async def test_spawn_runs_the_command_in_its_folder_with_that_environment_private_and_apart(
    tmp_path: Path,
) -> None:
    """Protects spawn's contract: the command's cwd and environment, files it creates are
    0600 (state can hold secrets), the supervisor leads a session of its own (a terminal's
    Ctrl-C reaches npa only), and npa learns the supervisor's pid and the arguments."""
    seen: list[tuple[int, list[str]]] = []
    script = 'echo secret > made; echo "$MARK $(pwd)"; sleep 30'
    handle = await _sh(tmp_path, script, on_spawn=lambda pid, args: seen.append((pid, args)))
    try:
        line = await asyncio.wait_for(handle.stdout.readline(), 30)
        assert line.decode().split() == ["from-npa", str(tmp_path)]
        assert handle.pid == handle.proc.pid and seen == [(handle.pid, ["-c", script])]
        assert handle.args == ["/bin/sh", "-c", script]
        assert os.getsid(handle.pid) == handle.pid != os.getsid(0)
        assert stat.S_IMODE((tmp_path / "made").stat().st_mode) == 0o600
        # What the supervisor is told, on its command line: isolated Python, the command,
        # no spool, the disk reserve it may give up for a state dump, the dump's name.
        cmdline = Path(f"/proc/{handle.pid}/cmdline").read_bytes().split(b"\0")[:-1]
        python, isolated, no_site, program, config = (a.decode() for a in cmdline)
        assert python == sys.executable
        assert (isolated, no_site, program) == ("-I", "-S", str(supervision.SUPERVISOR))
        assert json.loads(config) == {
            "argv": ["/bin/sh", "-c", script],
            "spool": "",
            "ballast": str(tmp_path / ".npa-run" / RESERVE_NAME),
            "state_file": "errored.tfstate",
        }
        assert (tmp_path / ".npa-run" / RESERVE_NAME).is_file()
    finally:
        handle.kill()
        await asyncio.wait_for(handle.wait(), 30)


async def test_a_line_far_longer_than_asyncios_default_limit_is_read_whole(
    tmp_path: Path,
) -> None:
    """Protects STREAM_LIMIT: `terraform show -json` prints the whole state on one line."""
    size = 1024 * 1024
    handle = await _sh(tmp_path, f"head -c {size} /dev/zero | tr '\\\\0' x; echo")
    line = await asyncio.wait_for(handle.stdout.readline(), 60)
    assert len(line) == size + 1
    assert await asyncio.wait_for(handle.wait(), 30) == 0


async def test_held_descriptors_stay_open_until_the_command_has_exited(tmp_path: Path) -> None:
    """Protects `hold_fds`: the cluster lock's descriptor goes there, so a Terraform that
    outlives npa still holds the cluster. Seen from a pipe: its read end has no end of
    file while the supervisor holds the write end."""
    import select

    read_end, write_end = os.pipe()
    go = tmp_path / "go"
    handle = await _sh(tmp_path, f"while [ ! -e {go} ]; do sleep 0.05; done", hold_fds=[write_end])
    os.close(write_end)
    try:
        assert select.select([read_end], [], [], 0.5)[0] == [], "held while it runs"
        go.touch()
        assert await asyncio.wait_for(handle.wait(), 30) == 0
        assert select.select([read_end], [], [], 30)[0] == [read_end]
        assert os.read(read_end, 1) == b""  # end of file: released with the supervisor
    finally:
        os.close(read_end)


async def test_interrupt_sends_int_and_kill_sends_kill_through_the_lifeline(
    tmp_path: Path,
) -> None:
    """Protects the two words: `int` reaches the command as SIGINT (it can stop gracefully),
    `kill` as SIGKILL (exit 128+9)."""
    ready = tmp_path / "trap-set"
    graceful = await _sh(
        tmp_path, f"trap 'exit 3' INT; touch {ready}; while :; do sleep 0.05; done"
    )
    await eventually(ready.exists, timeout=30, what="the trap to be set")
    graceful.interrupt()
    assert await asyncio.wait_for(graceful.wait(), 30) == 3
    assert graceful._stopped == ["int"]
    hard = await _sh(tmp_path, "trap '' INT; while :; do sleep 0.05; done")
    hard.kill()
    assert await asyncio.wait_for(hard.wait(), 30) == 128 + signal.SIGKILL
    assert hard._stopped == ["kill"]


async def test_the_lifeline_closes_only_after_the_supervisor_exited(tmp_path: Path) -> None:
    """Protects `close()`: closing the lifeline early is how the supervisor learns npa died
    (it would stop Terraform), so close() before exit leaves it open, and words sent after
    it was closed are dropped, not raised."""
    go = tmp_path / "go"
    handle = await _sh(tmp_path, f"while [ ! -e {go} ]; do sleep 0.05; done")
    handle.close()
    assert handle.proc.stdin is not None and not handle.proc.stdin.is_closing()
    go.touch()
    assert await asyncio.wait_for(handle.wait(), 30) == 0
    assert handle.proc.stdin.is_closing()  # wait() closed it once the supervisor was gone
    handle.interrupt()
    handle.kill()
    assert handle._stopped == []


async def test_npa_gone_sends_the_rest_of_the_output_to_the_spool(tmp_path: Path) -> None:
    """Protects spawn's `spool`: with the lifeline closed (npa dead) the command's output
    from then on goes to the spool file instead of the pipe nobody reads."""
    spool = supervision.spool_path(tmp_path, "op-1")
    script = "trap 'echo after-npa-died; exit 4' INT; echo started; while :; do sleep 0.05; done"
    handle = await _sh(tmp_path, script, spool=spool)
    assert await asyncio.wait_for(handle.stdout.readline(), 30) == b"started\n"
    assert handle.proc.stdin is not None
    handle.proc.stdin.close()
    assert await asyncio.wait_for(handle.proc.wait(), 30) == 4
    assert "after-npa-died" in spool.read_text()


async def test_without_a_disk_reserve_the_supervisor_is_told_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Protects the empty ballast when the disk was too full for a reserve: the supervisor
    must not be handed a path (such as "None") it would try to remove for a state dump."""
    from npa_sop_tui.home import fsutil

    monkeypatch.setattr(fsutil, "ensure_reserve", lambda folder: None)
    handle = await _sh(tmp_path, "sleep 30")
    try:
        # Until the forked child has exec'd the supervisor, /proc shows the test process's
        # own command line: wait for the supervisor's (its config is the fifth argument).
        await eventually(
            lambda: _supervisor_config(handle.pid) is not None, what="the supervisor's exec"
        )
        assert (_supervisor_config(handle.pid) or {})["ballast"] == ""
    finally:
        handle.kill()
        await asyncio.wait_for(handle.wait(), 30)


class _Lifeline:
    """npa's end of a lifeline whose writes and close fail as a broken pipe or a closed
    event loop make them fail (asyncio raises those only in such edge cases, which a live
    supervisor cannot be made to produce on demand)."""

    def __init__(self, error: BaseException | None = None, closing: bool = False) -> None:
        self.error, self.closing, self.written, self.closed = error, closing, b"", 0

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: bytes) -> None:
        if self.error is not None:
            raise self.error
        self.written += data

    def close(self) -> None:
        self.closed += 1
        if self.error is not None:
            raise self.error


def _handle(stdin: _Lifeline | None, returncode: int | None) -> supervision.Supervised:
    from types import SimpleNamespace

    return supervision.Supervised(SimpleNamespace(stdin=stdin, returncode=returncode), [])  # type: ignore[arg-type]


@pytest.mark.parametrize("error", [BrokenPipeError(32, "Broken pipe"), RuntimeError("loop closed")])
def test_a_broken_lifeline_never_raises_into_npas_cleanup(error: BaseException) -> None:
    """Protects interrupt/kill/close during npa's own teardown: a lifeline that fails to
    write or close is the supervisor already gone, not an error to raise."""
    handle = _handle(_Lifeline(error), returncode=0)
    handle.interrupt()
    handle.kill()
    handle.close()
    assert handle._stopped == ["int", "kill"]


def test_close_closes_an_open_lifeline_once_the_supervisor_exited() -> None:
    line = _Lifeline()
    _handle(line, returncode=None).close()
    assert line.closed == 0  # still running: closing would stop Terraform
    _handle(line, returncode=0).close()
    assert line.closed == 1
    done = _Lifeline(closing=True)
    _handle(done, returncode=0).close()
    assert done.closed == 0  # already closing: left alone
    _handle(None, returncode=0).close()  # no lifeline at all: nothing to do
    words = _Lifeline()
    handle = _handle(words, returncode=None)
    handle.interrupt()
    assert words.written == b"int\n"
