"""Self-recovery at the start and end of every operation.

What an earlier, killed or crashed, run can leave behind, and what happens to it here:

- the cluster lock, still held by that run's Terraform supervisor while Terraform saves
  state: the lock refuses at once and names it (locks.py);
- an inventory record still `running` (cluster `deploying`/`destroying`): once we hold the
  lock its process is provably gone, so it becomes `interrupted` (or `destroy-incomplete`)
  with the next step spelled out;
- the rest of Terraform's output after npa died (`.npa-run/<op>.orphaned.log`): named;
- temp files of atomic writes (`.<name>.<pid>-*.tmp`) whose writer is gone: removed;
- processes of a run whose supervisor is gone (only if the supervisor itself was killed;
  it reaps them otherwise): stopped and named;
- `errored.tfstate`, the state Terraform could not save (disk full): pushed back into
  Terraform's state before anything else runs, so a resource it created is never forgotten.

And before anything is written, enough free disk space is checked for, so a deploy does not
start on a disk it is bound to fill.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import NpaError, OperationError
from npa_sop_tui.home import fsutil, inventory
from npa_sop_tui.home.fsutil import DiskFull, free_bytes, is_disk_full, sweep_temp_files
from npa_sop_tui.home.paths import cluster_dir, npa_home
from npa_sop_tui.state.store import Lock, StateStore
from npa_sop_tui.terraform import supervision
from npa_sop_tui.terraform._supervisor import MARK_ENV

MIN_FREE_BYTES = 16 * 1024 * 1024  # logs, plans, variables, state backups of a small cluster
STATE_FILE = "terraform.tfstate"
ERRORED_GLOB = "errored*.tfstate"


def required_free_bytes(install_dir: Path | None) -> int:
    """A plan file and a state backup are each about the state's size; keep room for both
    and for the state itself."""
    state = 0
    if install_dir is not None:
        with contextlib.suppress(OSError):
            state = (install_dir / STATE_FILE).stat().st_size
    return MIN_FREE_BYTES + 3 * state


def check_free_space(folder: Path, install_dir: Path | None) -> None:
    """`DiskFull` (before anything is written) when the disk cannot take the operation."""
    needed = required_free_bytes(install_dir)
    for where in {folder, *([install_dir] if install_dir else [])}:
        free = free_bytes(where)
        if free is not None and free < needed:
            raise DiskFull(where, needed=needed, free=free)


def begin(lock: Lock, name: str, store: StateStore | None = None) -> list[str]:
    """Take the cluster's lock and tidy up after any earlier run; returns notes for the user.

    Raises `ClusterBusy` (naming the holder, or the Terraform a killed run left) or
    `DiskFull`; the lock is not held when it raises.
    """
    lock.acquire()
    try:
        return _tidy(name, store)
    except BaseException:
        lock.release()
        raise


def _tidy(name: str, store: StateStore | None) -> list[str]:
    notes: list[str] = []
    entry = inventory.get(name, store=store)
    from npa_sop_tui.home.recorded_paths import trusted

    # housekeeping only inside this home: a record's path is data (a copy, a crafted file)
    install_dir = trusted(entry.install_dir) if entry is not None else None
    folders = [npa_home(), cluster_dir(name)]
    if install_dir is not None:
        folders += [install_dir, supervision.run_dir(install_dir)]
    removed = [p for folder in folders for p in sweep_temp_files(folder)]
    if removed:
        notes.append(f"removed {len(removed)} temp file(s) left by interrupted writes")
    if install_dir is not None:
        notes += reap_orphans(install_dir)
    check_free_space(
        cluster_dir(name), install_dir if install_dir and install_dir.is_dir() else None
    )
    if entry is not None:
        dead = entry.last_operation
        note = inventory.settle_dead_operation(entry)
        if note is not None:
            inventory.save(entry, store=store)
            notes.append(note)
            if dead is not None and install_dir is not None:
                notes += _orphan_report(install_dir, dead.id)
    return notes


def _proc_field(pid: str, name: str) -> str:
    try:
        if name == "cwd":
            return os.readlink(f"/proc/{pid}/cwd")
        with open(f"/proc/{pid}/{name}", "rb") as handle:
            return handle.read().decode(errors="replace")
    except OSError:
        return ""


def reap_orphans(install_dir: Path) -> list[str]:
    """Stop processes of an earlier run in `install_dir` whose supervisor is gone.

    Normally the supervisor reaps everything Terraform leaves; only if the supervisor itself
    was killed can a provider plugin or a provisioner linger. Each process of a run carries
    its supervisor's pid and start time (`NPA_SUPERVISOR`), so nothing else is touched.
    Linux only (/proc); elsewhere a no-op.
    """
    root = str(install_dir.resolve())
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []
    # The environment is read only for the processes in the folder: they are few.
    orphans = [
        pid
        for pid in pids
        if _inside(_proc_field(pid, "cwd"), root) and _supervisor_gone(_proc_field(pid, "environ"))
    ]
    return _stop_orphans(orphans)


def _inside(cwd: str, root: str) -> bool:
    """`cwd` is the folder `root` or one below it (not a sibling sharing its prefix)."""
    return cwd == root or cwd.startswith(root + os.sep)


def _supervisor_gone(environ: str) -> bool:
    """The process (its NUL-separated environment) belongs to a supervised run whose
    supervisor is gone: `NPA_SUPERVISOR=<pid>:<start ticks>` names a pid that no longer runs,
    or runs as another process (a recycled pid: its start differs). An unmarked process, or a
    mark that names no pid, is not a run's."""
    from npa_sop_tui.home.locks import process_alive

    mark = next((v for v in environ.split("\0") if v.startswith(f"{MARK_ENV}=")), None)
    if mark is None:
        return False
    sup_pid, _, start = mark.partition("=")[2].partition(":")
    if not sup_pid.isdigit():
        return False
    return not process_alive(int(sup_pid), int(start) if start.isdigit() else None)


def _stop_orphans(pids: list[str]) -> list[str]:
    """SIGKILL each process, with a note naming it; one that exited since it was found (or
    cannot be signalled) is passed over without a note."""
    notes: list[str] = []
    for pid in pids:
        argv0 = os.path.basename(_proc_field(pid, "cmdline").split("\0", 1)[0])
        with contextlib.suppress(OSError):
            os.kill(int(pid), signal.SIGKILL)
            notes.append(f"stopped {argv0} (pid {pid}), left running by an earlier run")
    return notes


def _orphan_report(install_dir: Path, operation_id: str) -> list[str]:
    spool = supervision.spool_path(install_dir, operation_id)
    try:
        lines = spool.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    ended = [line for line in lines if line.startswith("# npa supervisor: Terraform exited")]
    how = ended[-1].removeprefix("# npa supervisor: ") if ended else "Terraform did not report"
    return [
        f"after npa stopped, its supervisor stopped Terraform gracefully ({how}); "
        f"Terraform's output from then on is in {spool}"
    ]


def _errored_dumps(install_dir: Path) -> list[Path]:
    """State Terraform could not save (`errored*.tfstate`, non-empty), oldest first."""
    found = [p for p in install_dir.glob(ERRORED_GLOB) if p.is_file() and p.stat().st_size > 0]
    return sorted(found, key=lambda p: p.stat().st_mtime)


def _set_aside(path: Path, label: str) -> Path:
    kept = supervision.run_dir(path.parent) / f"{path.stem}-{label}-{int(time.time())}{path.suffix}"
    fsutil.ensure_dir(kept.parent)
    os.replace(path, kept)
    return kept


def restore_state_file(install_dir: Path, note: Callable[[str], None]) -> None:
    """Before `terraform init`: when terraform.tfstate is missing, empty or cut short (a disk
    that filled while Terraform wrote it) and a saved dump exists, the newest dump becomes
    terraform.tfstate again; Terraform itself would refuse to start on a broken state."""
    dumps = _errored_dumps(install_dir)
    if not dumps:
        return
    state = install_dir / STATE_FILE
    try:
        json.loads(state.read_text(encoding="utf-8"))
        return  # a readable state: the dumps are pushed after init, with Terraform's checks
    except (OSError, ValueError):
        pass
    newest = dumps[-1]
    broken = _set_aside(state, "unreadable") if state.exists() else None
    fsutil.atomic_write_bytes(state, newest.read_bytes(), mode=fsutil.SECRET_MODE)
    kept = [_set_aside(dump, "restored") for dump in dumps]
    where = f" (the unreadable one is kept as {broken})" if broken else ""
    note(
        f"restored terraform.tfstate from the state Terraform could not save ({newest.name})"
        f"{where}; the saved dumps are kept in {kept[-1].parent}"
    )


async def push_errored_state(
    capture: Callable[..., Any], install_dir: Path, note: Callable[[str], None]
) -> None:
    """After `terraform init`: push `errored*.tfstate` back into a readable state, oldest
    first. Terraform refuses a state of another lineage or an older serial, so nothing newer
    is overwritten; then this raises with the commands to finish by hand.
    """
    for dump in _errored_dumps(install_dir):
        args = ["state", "push", dump.name]
        if _newer_of_same_lineage(dump, install_dir / STATE_FILE):
            # Terraform refuses a push of the same serial; a write that failed mid-apply
            # leaves exactly that: the dump (its final state) is the newer one.
            args.insert(2, "-force")
        code, _out, err = await capture(args, cwd=install_dir)
        if code != 0:
            raise OperationError(
                f"Terraform's saved state {dump} could not be pushed back: "
                f"{err.strip()[-400:] or f'exit {code}'}",
                hint=f"compare it with {install_dir / STATE_FILE}; if it is the newer one, "
                f"`cd {install_dir} && terraform state push -force {dump.name}`, then run "
                "the command again",
            )
        kept = _set_aside(dump, "pushed")
        note(
            f"pushed the state Terraform could not save ({dump.name}) back into its state; "
            f"the file is kept as {kept}"
        )


def _newer_of_same_lineage(dump: Path, state: Path) -> bool:
    """True if `dump` continues `state` (same lineage) at the same or a higher serial."""
    try:
        mine, theirs = json.loads(dump.read_text()), json.loads(state.read_text())
    except (OSError, ValueError):
        return False
    same = mine.get("lineage") and mine.get("lineage") == theirs.get("lineage")
    return bool(same) and int(mine.get("serial", 0)) >= int(theirs.get("serial", 0))


def translate_error(exc: BaseException, install_dir: Path | None = None) -> BaseException:
    """A raw "no space left" (ours or Terraform's) becomes one `DiskFull`; others unchanged.

    The disk measured is the one the failed write was on: a path Terraform names relative
    to its folder (`terraform.tfstate`) is taken in the folder it ran in (`install_dir`, or
    the one the failure records), never in this process's working folder."""
    if isinstance(exc, DiskFull):
        return exc
    install_dir = install_dir or getattr(exc, "install_dir", None)
    if is_disk_full(exc):
        assert isinstance(exc, OSError)
        where = Path(exc.filename) if exc.filename else (install_dir or npa_home())
        return DiskFull(where, needed=required_free_bytes(install_dir))
    errored = getattr(exc, "errored_state", None)
    if getattr(exc, "no_space", False) and isinstance(exc, NpaError):
        # Terraform names the file it could not write ("write terraform.tfstate: no space…").
        named = re.search(r"(?:open|write) (\S+?):? no space left on device", exc.message)
        where = Path(named.group(1)) if named else (install_dir or npa_home())
        if not where.is_absolute() and install_dir is not None:
            where = install_dir / where
        full = DiskFull(where, needed=required_free_bytes(install_dir))
        if errored:
            full.message += (
                f"; Terraform could not save its state, npa kept it in {errored} and pushes it "
                "back on the next run"
            )
        full.errored_state = errored  # type: ignore[attr-defined]
        return full
    return exc


def log_warning(log: inventory.EventLog | None) -> str | None:
    if log is None or log.failed is None:
        return None
    return f"the operation log {log.path} is incomplete: {log.failed.strerror or log.failed}"
