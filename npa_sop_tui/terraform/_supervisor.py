"""The supervisor between npa and one Terraform command (standard library only).

npa runs `python -I -S _supervisor.py CONFIG_JSON`; this process starts Terraform in a
process group of its own and relays its stdout and stderr line by line. It exists so that
Terraform can always finish writing its state, whatever happens to npa:

- Terraform never writes into a pipe whose reader may die. Go programs die of SIGPIPE on
  their next write to a broken stdout, and Terraform's next line comes *before* it saves
  state; this process keeps reading until Terraform exits.
- npa's end of our stdin is the lifeline. A line `int` asks for a graceful stop (SIGINT to
  Terraform's group, like a terminal Ctrl-C), `kill` for a hard one (SIGKILL). End of file
  means npa is gone (killed, crashed): Terraform gets SIGINT, its remaining output goes to
  the spool file instead of the dead pipe, and this process waits for it to exit.
- Terraform's emergency state dump (`"Emergency state dump"` with a `state` object, printed
  when it cannot write terraform.tfstate) is saved to `errored.tfstate` (0600) here, before
  anything else can lose it; npa gets a short `npa_errored_state` line instead of the state.
- When Terraform exits, whatever is left in its group (provider plugins, provisioners) is
  killed, and reaped: this process is their subreaper.
- Terraform gets a parent-death signal (SIGTERM, which Terraform treats like Ctrl-C), so it
  never runs on unsupervised even if this process itself is killed.

Our own exit code is Terraform's (128+N when a signal N ended it). Terminal signals
(SIGINT, SIGHUP) are ignored here: npa decides; SIGTERM is treated as `int`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STATE_DUMP_MARK = b'"Emergency state dump"'
ORPHAN_GRACE = 3600.0  # seconds an orphaned Terraform gets to stop before SIGKILL
READ_SIZE = 1 << 16
MARK_ENV = "NPA_SUPERVISOR"  # pid:start-ticks of the supervisor, in each process of a run


def _start_ticks(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
        return raw[raw.rfind(b")") + 2 :].split()[19].decode()
    except (OSError, IndexError):
        return "?"


def _prctl() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    return libc.prctl


PRCTL = _prctl()


def _tie_to_parent() -> None:
    """preexec_fn of Terraform (this process is single-threaded, so it is safe here)."""
    # We ignore the terminal's signals; an ignored signal stays ignored across exec, and
    # Terraform's provisioners must still be stoppable by the SIGINT we send.
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    if PRCTL is not None:
        # SIGTERM, which Terraform treats like Ctrl-C, if this supervisor dies.
        PRCTL(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class Supervisor:
    def __init__(self, config: dict[str, object]) -> None:
        self.argv = [str(a) for a in config["argv"]]  # type: ignore[union-attr]
        self.spool_path = str(config.get("spool") or "")
        self.ballast = str(config.get("ballast") or "")
        self.state_name = str(config.get("state_file") or "errored.tfstate")
        self.parent = os.getppid()
        self.orphaned = False
        self.stop_requested = 0.0  # when the graceful stop was sent (monotonic)
        self.spool: int | None = None
        self.out_buf = b""
        self.err_buf = b""
        self.proc: subprocess.Popen[bytes] | None = None

    # -- output -----------------------------------------------------------------------------

    def _emit(self, fd: int, data: bytes) -> None:
        if not self.orphaned:
            try:
                _write_all(fd, data)
                return
            except OSError:
                self._orphan("npa's pipe is broken")
        self._to_spool(data)

    def _to_spool(self, data: bytes) -> None:
        if not self.spool_path:
            return
        try:
            if self.spool is None:
                os.makedirs(os.path.dirname(self.spool_path) or ".", mode=0o700, exist_ok=True)
                self.spool = os.open(self.spool_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            _write_all(self.spool, data)
        except OSError:
            pass  # a full disk must not stop us draining Terraform

    def _stdout_line(self, line: bytes) -> None:
        if STATE_DUMP_MARK in line and b'"state"' in line:
            line = self._save_state_dump(line)
        self._emit(1, line)

    def _save_state_dump(self, line: bytes) -> bytes:
        try:
            message = json.loads(line)
            state = message.pop("state")
        except (ValueError, KeyError, TypeError):
            return line
        data = (json.dumps(state, indent=2) + "\n").encode()
        saved, errors = _save_private(data, self._state_candidates(), self.ballast)
        note = {
            "type": "npa_errored_state",
            "@level": "error",
            "@message": "Terraform could not save its state; npa kept the state it printed",
            "path": saved,
            "bytes": len(data),
            "errors": errors,
        }
        if saved is None:
            # Nowhere to put it: the state must not be lost, so it goes to npa after all.
            note["state"] = state
        return (json.dumps(note) + "\n").encode()

    def _state_candidates(self) -> list[str]:
        """errored.tfstate beside the state (Terraform's own name for it), unless an earlier
        one is still there to be pushed; then a dated name beside it, then the temp folder."""
        here = os.path.abspath(self.state_name)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        with contextlib.suppress(OSError):
            if os.path.getsize(here) > 0:
                stem, ext = os.path.splitext(here)
                here = f"{stem}-{stamp}{ext}"
        spare = os.path.join(tempfile.gettempdir(), f"npa-errored-{os.getpid()}-{stamp}.tfstate")
        return [here, spare]

    def _orphan(self, why: str) -> None:
        if self.orphaned:
            return
        self.orphaned = True
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        self._to_spool(
            f"# npa supervisor {os.getpid()}: {why} at {stamp}; "
            f"stopping Terraform gracefully\n".encode()
        )
        self.interrupt()

    # -- control ----------------------------------------------------------------------------

    def _signal_group(self, sig: int) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)

    def interrupt(self) -> None:
        if not self.stop_requested:
            self.stop_requested = time.monotonic()
        self._signal_group(signal.SIGINT)

    def kill(self) -> None:
        self._signal_group(signal.SIGKILL)

    def _control(self, data: bytes) -> None:
        for word in data.split():
            if word == b"int":
                self.interrupt()
            elif word == b"kill":
                self.kill()

    # -- main loop --------------------------------------------------------------------------

    def run(self) -> int:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: self.interrupt())
        if PRCTL is not None:
            PRCTL(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        # Every process of this run (Terraform, plugins, provisioners) carries this mark, so
        # the next npa can find and stop them should this supervisor itself be killed.
        env = dict(os.environ, **{MARK_ENV: f"{os.getpid()}:{_start_ticks(os.getpid())}"})
        try:
            self.proc = subprocess.Popen(
                self.argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
                preexec_fn=_tie_to_parent,
            )
        except OSError as exc:
            _write_all(2, f"cannot run {self.argv[0]}: {exc.strerror}\n".encode())
            return 127
        assert self.proc.stdout is not None and self.proc.stderr is not None
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout.fileno(), selectors.EVENT_READ, "out")
        sel.register(self.proc.stderr.fileno(), selectors.EVENT_READ, "err")
        sel.register(0, selectors.EVENT_READ, "ctl")
        exit_fd = _pidfd(self.proc.pid)
        if exit_fd is not None:
            sel.register(exit_fd, selectors.EVENT_READ, "exit")
        self._pump(sel)
        if exit_fd is not None:
            os.close(exit_fd)
        code = self.proc.wait()
        self._reap_group()
        rc = code if code >= 0 else 128 - code
        if self.orphaned:
            self._to_spool(f"# npa supervisor: Terraform exited with {rc}\n".encode())
        return rc

    def _pump(self, sel: selectors.BaseSelector) -> None:
        """Relay until Terraform has exited and its output is drained.

        Not just until its pipes close: a provisioner's child that escaped the interrupt can
        hold them open for as long as it lives. Once Terraform itself is gone, what is left
        of its group is killed, so the pipes close soon after.
        """
        open_streams = 2
        drain_until: float | None = None
        while open_streams:
            timeout = 0.5  # without a pidfd, Terraform's exit is noticed by polling
            if self.orphaned and self.stop_requested:
                remaining = ORPHAN_GRACE - (time.monotonic() - self.stop_requested)
                if remaining <= 0:
                    self.kill()
                timeout = min(timeout, max(remaining, 0.1))
            if drain_until is None and self.proc is not None and self.proc.poll() is not None:
                self._reap_group()
                drain_until = time.monotonic() + 5
            if drain_until is not None and time.monotonic() > drain_until:
                return  # whatever still holds the pipes is not Terraform's output
            for key, _ in sel.select(timeout):
                if key.data == "exit":
                    sel.unregister(key.fd)
                    continue  # poll() above takes it from here
                fd = int(key.fd)  # type: ignore[arg-type]
                try:
                    chunk = os.read(fd, READ_SIZE)
                except OSError:
                    chunk = b""
                if key.data == "ctl":
                    if chunk:
                        self._control(chunk)
                    else:
                        sel.unregister(0)
                        self._orphan("npa went away (its end of the lifeline closed)")
                    continue
                if not chunk:
                    sel.unregister(fd)
                    open_streams -= 1
                    self._flush_partial(key.data)
                    continue
                self._relay(key.data, chunk)

    def _relay(self, stream: str, chunk: bytes) -> None:
        if stream == "out":
            self.out_buf += chunk
            *lines, self.out_buf = self.out_buf.split(b"\n")
            for line in lines:
                self._stdout_line(line + b"\n")
        else:
            self.err_buf += chunk
            head, sep, self.err_buf = self.err_buf.rpartition(b"\n")
            if sep:
                self._emit(2, head + sep)

    def _flush_partial(self, stream: str) -> None:
        if stream == "out" and self.out_buf:
            self._stdout_line(self.out_buf)
            self.out_buf = b""
        elif stream == "err" and self.err_buf:
            self._emit(2, self.err_buf)
            self.err_buf = b""

    def _reap_group(self) -> None:
        """Kill what Terraform left in its group and reap what was re-parented to us."""
        assert self.proc is not None
        self.kill()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break  # no children left at all
            if pid == 0:
                try:
                    os.killpg(self.proc.pid, 0)
                except ProcessLookupError:
                    break  # the group is empty and nothing is ours to reap
                time.sleep(0.01)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), else None."""
    try:
        return os.pidfd_open(pid)  # type: ignore[attr-defined,no-any-return]
    except (AttributeError, OSError):
        return None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _save_private(data: bytes, paths: list[str], ballast: str) -> tuple[str | None, list[str]]:
    """Write `data` (0600) to the first path that takes it; a full disk first gives up the
    ballast file npa keeps for exactly this. Returns the path used and the errors met."""
    errors: list[str] = []
    for path in paths:
        for attempt in (1, 2):
            try:
                _write_file(path, data)
                return path, errors
            except OSError as exc:
                errors.append(f"{path}: {exc.strerror or exc}")
                full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
                if attempt == 1 and full and ballast and os.path.exists(ballast):
                    with contextlib.suppress(OSError):
                        os.unlink(ballast)
                    continue
                break
    return None, errors


def _write_file(path: str, data: bytes) -> None:
    # The temp name follows npa's pattern (.<name>.<pid>-*.tmp), so a sweep can clean it up.
    folder, name = os.path.split(path)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}-dump.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def main() -> int:
    config = json.loads(sys.argv[1])
    return Supervisor(config).run()


if __name__ == "__main__":
    sys.exit(main())
