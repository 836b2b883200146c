"""`home_files`: the one owner of the npa home's files (modes, symlinks, a read-only home)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home.files import HomeNotRegular, HomeSymlink, ensure_dir, make_link, open_private
from npa_sop_tui.home.fsutil import atomic_write_text
from npa_sop_tui.home.locks import ClusterLock

from testkit.hostile_files import untouched
from testkit.hostile_files import victim as outside_file
from testkit.read_only_home import on_read_only_home, read_only_mounts_work

ROOT = Path(__file__).resolve().parents[2]


def test_planted_symlinks_never_damage_outside_files(
    npa_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = outside_file(tmp_path)
    # a `.lock` planted as a symlink: refused, not truncated on release
    cluster = npa_home / "soperator" / "demo"
    cluster.mkdir(parents=True)
    (cluster / ".lock").symlink_to(victim)
    with pytest.raises(HomeSymlink, match=r"\.lock is a symlink inside the npa home"):
        ClusterLock("demo", operation="deploy").acquire()
    assert untouched(victim)
    # the debug log planted as a symlink: the command runs, the link is reported, not used
    (npa_home / "logs").mkdir()
    (npa_home / "logs" / "npa-debug.log").symlink_to(victim)
    assert main(["soperator", "list", "--debug"]) == 0
    err = capsys.readouterr().err
    assert "npa-debug.log is a symlink inside the npa home" in err
    assert untouched(victim)
    # a folder on the way planted as a symlink: nothing is written through it
    (npa_home / "cache").symlink_to(victim.parent)
    with pytest.raises(HomeSymlink, match="cache is a symlink"):
        atomic_write_text(npa_home / "cache" / "x.json", "{}")
    with pytest.raises(HomeSymlink):
        open_private(npa_home / "cache" / "y.log", os.O_WRONLY | os.O_CREAT)
    assert sorted(p.name for p in victim.parent.iterdir()) == ["precious.txt"]
    assert untouched(victim)


def test_debug_creates_home_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["example"], ["list"]):
        home = tmp_path / f"fresh-{command[0]}" / "npa"
        monkeypatch.setenv("NPA_HOME", str(home))
        monkeypatch.setattr(os, "umask", os.umask)  # restored below whatever happens
        old = os.umask(0o022)
        try:
            assert main(["soperator", *command, "--debug"]) == 0
        finally:
            os.umask(old)
        capsys.readouterr()
        assert home.stat().st_mode & 0o777 == 0o700
        assert (home / "logs").stat().st_mode & 0o777 == 0o700
        assert (home / "logs" / "npa-debug.log").stat().st_mode & 0o777 == 0o600


def test_files_under_the_home_are_private_whatever_mode_is_asked(npa_home: Path) -> None:
    atomic_write_text(npa_home / "known_hosts", "x\n", mode=0o644)
    assert (npa_home / "known_hosts").stat().st_mode & 0o777 == 0o600
    assert ensure_dir(npa_home / "a" / "b").stat().st_mode & 0o777 == 0o700


@pytest.mark.slow
def test_read_only_home_is_reported_once(npa_home: Path) -> None:
    if not read_only_mounts_work(npa_home):
        pytest.skip("needs root and `unshare -m` to mount the home read-only")
    from npa_sop_tui.home.inventory import InventoryEntry, save

    install = npa_home / "soperator" / "demo" / "install" / "installations" / "demo"
    install.mkdir(parents=True)
    entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm", state="deployed")
    save(entry.model_copy(update={"install_dir": str(install)}))
    spec = str(ROOT / "assets" / "cpu-minimal.yaml")
    for args in (["list"], ["validate", "--spec", spec], ["list", "--debug"]):
        done = on_read_only_home(npa_home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert "debug log: not written: the npa home" in done.stderr
    assert "demo" in on_read_only_home(npa_home, "list").stdout
    for args in (
        ["plan", "--spec", spec],
        ["deploy", "--yes", "--spec", spec],
        ["destroy", "--name", "demo", "--yes"],
    ):
        done = on_read_only_home(npa_home, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.count(f"the npa home {npa_home} is not writable") == 1
        assert "point NPA_HOME at a writable folder" in done.stderr
        assert "Traceback" not in done.stderr


# Writes that do not go through `home_files`/`fsutil`, each with why it may (every other
# module must use them for anything under the npa home).
_DIRECT_WRITERS = {
    "npa_sop_tui/home/files.py": "the owner",
    "npa_sop_tui/home/fsutil.py": "atomic replace and the disk reserve, under home_files' rules",
    "npa_sop_tui/home/bounded_read.py": "opens read-only",
    "npa_sop_tui/home/file_edit.py": "edits the user's own files (specs), not the home",
    "npa_sop_tui/cli/interrupts.py": "/dev/null",
    "npa_sop_tui/agent/mcp_stdio.py": "/dev/null, read-only, in place of stdin while serving",
    "npa_sop_tui/terraform/_supervisor.py": "a standalone process (imports nothing of npa); "
    "its spool and state copies are O_CREAT 0600 in folders home_files made",
    "npa_sop_tui/sandbox/standin.py": "the stand-in recipe's packaged files (generator)",
    "npa_sop_tui/sandbox/slurm_login.py": "the sandbox's fake login node tools",
    "npa_sop_tui/sandbox/local_jobs.py": "the sandbox's simulated jobs: their scripts, outputs "
    "and records, in a 0700 folder per job",
    "npa_sop_tui/sandbox/local_terraform.py": "the sandbox's provider binary (0755)",
    "npa_sop_tui/recipe/source.py": "the recipe clone, renamed into place once fetched",
    "npa_sop_tui/recipe/installation.py": "links to the recipe's folders and a state chmod, "
    "after its links were refused",
    "npa_sop_tui/state/backend.py": "renames an errored state file beside itself",
    "npa_sop_tui/state/migrate.py": "renames state aside and back while migrating",
    "npa_sop_tui/state/local.py": "renames a stray file aside",
    "npa_sop_tui/lifecycle/recovery.py": "renames a damaged state file aside",
}
_DIRECT_WRITE = re.compile(
    r"\.write_text\(|\.write_bytes\(|os\.replace\(|os\.rename\(|\.mkdir\(|makedirs\(|"
    r"(?<!fd)open\([^)]*['\"][wax]b?\+?['\"]|os\.open\(|FileHandler\(|\.touch\(|"
    r"os\.chmod\(|\.chmod\(|symlink_to\(|shutil\.(copy|move|copytree|copyfile|copy2)\("
)


def test_nothing_else_writes_under_the_home() -> None:
    offenders = []
    allowed_used = set()
    for source in sorted((ROOT / "npa_sop_tui").rglob("*.py")):
        rel = source.relative_to(ROOT).as_posix()
        for number, line in enumerate(source.read_text("utf-8").splitlines(), start=1):
            code = line.split("#", 1)[0]
            if _DIRECT_WRITE.search(code) and "def write_text" not in code:
                if rel in _DIRECT_WRITERS:
                    allowed_used.add(rel)
                else:
                    offenders.append(f"{rel}:{number}: {line.strip()}")
    assert allowed_used == set(_DIRECT_WRITERS)  # the list names no file that stopped writing
    assert offenders == [], "write through npa_sop_tui.home.files / fsutil:\n" + "\n".join(
        offenders
    )


def test_a_provider_link_gets_a_private_folder_and_never_goes_through_a_planted_link(
    npa_home: Path, tmp_path: Path
) -> None:
    provider = tmp_path / "cache" / "hashicorp" / "null"
    provider.mkdir(parents=True)
    link = npa_home / "install" / ".terraform" / "providers" / "hashicorp" / "null"
    make_link(link, provider)
    assert link.is_symlink() and link.resolve() == provider.resolve()
    assert (link.parent.stat().st_mode & 0o777) == 0o700
    outside = tmp_path / "outside"
    outside.mkdir()
    (npa_home / "planted").symlink_to(outside, target_is_directory=True)
    with pytest.raises(HomeSymlink):
        make_link(npa_home / "planted" / "providers" / "null", provider)
    assert list(outside.iterdir()) == []


# -- the home's owner: foreign homes, links, modes (each a defect reproduced) ---------------

SPEC = ROOT / "assets" / "cpu-minimal.yaml"


def _modes(root: Path) -> dict[str, int]:
    """Mode of every path under `root` (links not followed), by its relative name."""
    found = {".": root.lstat().st_mode}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = path.lstat().st_mode
    return found


def test_npa_home_pointed_at_an_existing_folder_changes_no_mode_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defect: NPA_HOME set to an existing folder re-permissioned everything under it to 0700
    (a `.git`, a sticky 1777 folder) on any command writing the cache, `validate` too."""
    work = tmp_path / "work"
    (work / ".git" / "objects").mkdir(parents=True)
    (work / "shared").mkdir()
    (work / "notes.txt").write_text("mine\n")
    os.chmod(work, 0o755)
    os.chmod(work / ".git", 0o755)
    os.chmod(work / ".git" / "objects", 0o775 & ~0o020)
    os.chmod(work / "shared", 0o1777)
    os.chmod(work / "notes.txt", 0o644)
    before = _modes(work)
    monkeypatch.setenv("NPA_HOME", str(work))
    assert main(["soperator", "validate", "--spec", str(SPEC)]) == 0
    assert main(["soperator", "list", "--debug"]) == 0
    capsys.readouterr()
    after = _modes(work)
    assert {name: after[name] for name in before} == before
    created = sorted(set(after) - set(before))
    assert "cache" in created and "logs" in created
    for name in ("cache", "logs"):  # what npa made there is private
        assert after[name] & 0o777 == 0o700


def test_hard_linked_lock_and_debug_log_never_touch_the_outside_file(
    npa_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defect: a hard-linked `.lock` or `logs/npa-debug.log` truncated or appended to the
    file outside the home that shares its inode, and changed its mode."""
    victim = outside_file(tmp_path)
    cluster = npa_home / "sandbox" / "soperator" / "cpu-min"
    cluster.mkdir(parents=True)
    os.link(victim, cluster / ".lock")
    (npa_home / "logs").mkdir()
    os.link(victim, npa_home / "logs" / "npa-debug.log")
    # the debug log: reported once, the command runs without it
    assert main(["soperator", "list", "--debug"]) == 0
    err = capsys.readouterr().err
    assert "npa-debug.log has 3 hard links" in err  # the victim, the log, the lock
    assert "Traceback" not in err
    # the lock: the plan is refused before anything runs (exit 2, what to do)
    code = main(["soperator", "plan", "--spec", str(SPEC), "--sandbox"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{cluster / '.lock'} has 3 hard links" in err
    assert f"rm {cluster / '.lock'}" in err and "Traceback" not in err
    assert untouched(victim)


def test_a_fifo_where_npa_keeps_a_file_is_refused_without_waiting(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A FIFO planted as a cluster's `.lock` would block `open()` forever: refused at once."""
    cluster = npa_home / "soperator" / "demo"
    cluster.mkdir(parents=True)
    os.mkfifo(cluster / ".lock")
    with pytest.raises(HomeNotRegular, match=r"\.lock is a named pipe \(FIFO\), not a file"):
        ClusterLock("demo", operation="deploy").acquire()
    from npa_sop_tui.home.locks import is_locked

    assert is_locked("demo") is False  # `list` probes the lock read-only: no wait either


def test_run_as_root_npa_does_not_write_into_a_home_of_another_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Defect: run as root, npa wrote into a home owned by another user (and it would as
    anyone whom modes do not stop). Writing commands are refused (exit 2, why, what to do);
    reading ones still work and write nothing there."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the home to another user")
    home = tmp_path / "someone"
    home.mkdir(mode=0o700)
    os.chown(home, 12345, 12345)
    monkeypatch.setenv("NPA_HOME", str(home))
    assert main(["soperator", "validate", "--spec", str(SPEC)]) == 0
    assert main(["soperator", "list"]) == 0
    capsys.readouterr()
    assert list(home.iterdir()) == []  # no cache, no sandbox home: nothing written
    code = main(["soperator", "deploy", "--spec", str(SPEC), "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"the npa home {home} belongs to uid 12345, not to you (uid 0)" in err
    assert "point NPA_HOME at a folder of your own" in err and "Traceback" not in err
    assert list(home.iterdir()) == []


def test_a_home_others_can_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A home another account can write (a shared 1777 folder) is refused for writing: that
    account could swap a file between npa's check and its write."""
    home = tmp_path / "open"
    home.mkdir()
    os.chmod(home, 0o1777)
    monkeypatch.setenv("NPA_HOME", str(home))
    code = main(["soperator", "deploy", "--spec", str(SPEC), "--sandbox", "--yes"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"the npa home {home} is writable by others (mode 1777)" in err
    assert f"chmod go-w {home}" in err
    assert list(home.iterdir()) == []
    assert stat.S_IMODE(home.stat().st_mode) == 0o1777  # and its mode is the user's business


def test_a_folder_only_your_own_group_may_write_is_yours(npa_home: Path) -> None:
    """On a `umask 002` system every folder is group-writable by the user's own private
    group: that is the user alone, so npa writes there; a group with other members is not."""
    import grp

    from npa_sop_tui.home.files import HomeNotYours

    if grp.getgrgid(os.getegid()).gr_mem not in ([], [os.environ.get("USER", "")]):
        pytest.skip("the primary group has other members here")
    mine = npa_home / "soperator"
    mine.mkdir(mode=0o775)
    mine.chmod(0o775)
    atomic_write_text(mine / "a" / "x.json", "{}")
    assert (mine / "a" / "x.json").read_text() == "{}"
    if os.geteuid() != 0:
        return  # giving the folder to another group needs root
    os.chown(mine, os.geteuid(), 12345)
    with pytest.raises(HomeNotYours, match=r"soperator \(inside the npa home\) is writable by"):
        atomic_write_text(mine / "a" / "y.json", "{}")
