"""`home_files`: the one owner of the npa home's files (modes, symlinks, a read-only home)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home.files import HomeSymlink, ensure_dir, make_link, open_private
from npa_sop_tui.home.fsutil import atomic_write_text
from npa_sop_tui.home.locks import ClusterLock

ROOT = Path(__file__).resolve().parents[2]
NPA = Path(sys.executable).parent / "npa"


def _outside(tmp_path: Path) -> Path:
    victim = tmp_path / "outside" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text("keep me\n")
    victim.chmod(0o644)
    return victim


def _untouched(victim: Path) -> bool:
    info = victim.stat()
    return victim.read_text() == "keep me\n" and info.st_mode & 0o777 == 0o644


def test_planted_symlinks_never_damage_outside_files(
    npa_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = _outside(tmp_path)
    # a `.lock` planted as a symlink: refused, not truncated on release
    cluster = npa_home / "soperator" / "demo"
    cluster.mkdir(parents=True)
    (cluster / ".lock").symlink_to(victim)
    with pytest.raises(HomeSymlink, match=r"\.lock is a symlink inside the npa home"):
        ClusterLock("demo", operation="deploy").acquire()
    assert _untouched(victim)
    # the debug log planted as a symlink: the command runs, the link is reported, not used
    (npa_home / "logs").mkdir()
    (npa_home / "logs" / "npa-debug.log").symlink_to(victim)
    assert main(["soperator", "list", "--debug"]) == 0
    err = capsys.readouterr().err
    assert "npa-debug.log is a symlink inside the npa home" in err
    assert _untouched(victim)
    # a folder on the way planted as a symlink: nothing is written through it
    (npa_home / "cache").symlink_to(victim.parent)
    with pytest.raises(HomeSymlink, match="cache is a symlink"):
        atomic_write_text(npa_home / "cache" / "x.json", "{}")
    with pytest.raises(HomeSymlink):
        open_private(npa_home / "cache" / "y.log", os.O_WRONLY | os.O_CREAT)
    assert sorted(p.name for p in victim.parent.iterdir()) == ["precious.txt"]
    assert _untouched(victim)


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


_READ_ONLY_SCRIPT = """
set -e
mount --bind "$NPA_HOME" "$NPA_HOME"
mount -o remount,bind,ro "$NPA_HOME"
shift
exec "$@"
"""


def _on_read_only_home(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`npa soperator ARGS` with `home` mounted read-only in a private mount namespace (the
    machine's mounts are untouched; root ignores file modes, so modes cannot show this)."""
    env = {
        **os.environ,
        "NPA_HOME": str(home),
        "NPA_TENANT_ID": "tenant-e00aaaaaaaaaaaaaaaa",
        "NPA_PROJECT_ID": "project-e00aaaaaaaaaaaaaaaa",
        "NPA_SUBNET_ID": "vpcsubnet-e00aaaaaaaaaaaaaaaa",
    }
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", _READ_ONLY_SCRIPT, "sh", "-", str(NPA), "soperator", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.mark.slow
def test_read_only_home_is_reported_once(npa_home: Path) -> None:
    if shutil.which("unshare") is None or _on_read_only_home(npa_home, "--help").returncode:
        pytest.skip("needs root and `unshare -m` to mount the home read-only")
    from npa_sop_tui.home.inventory import InventoryEntry, save

    install = npa_home.parent / "install"
    install.mkdir()
    entry = InventoryEntry(name="demo", kube_context="nebius-demo-slurm", state="deployed")
    save(entry.model_copy(update={"install_dir": str(install)}))
    spec = str(ROOT / "assets" / "cpu-minimal.yaml")
    for args in (["list"], ["validate", "--spec", spec], ["list", "--debug"]):
        done = _on_read_only_home(npa_home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
    assert "debug log: not written: the npa home" in done.stderr
    assert "demo" in _on_read_only_home(npa_home, "list").stdout
    for args in (
        ["plan", "--spec", spec],
        ["deploy", "--yes", "--spec", spec],
        ["destroy", "--name", "demo", "--yes"],
    ):
        done = _on_read_only_home(npa_home, *args)
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
    "npa_sop_tui/terraform/_supervisor.py": "a standalone process (imports nothing of npa); "
    "its spool and state copies are O_CREAT 0600 in folders home_files made",
    "npa_sop_tui/sandbox/standin.py": "the stand-in recipe's packaged files (generator)",
    "npa_sop_tui/sandbox/slurm_login.py": "the sandbox's fake login node tools",
    "npa_sop_tui/sandbox/local_jobs.py": "the sandbox's simulated jobs: their scripts, outputs "
    "and records, in a 0700 folder per job",
    "npa_sop_tui/sandbox/local_terraform.py": "the sandbox's provider binary (0755)",
    "npa_sop_tui/recipe/source.py": "the recipe checkout: copies, links and a state chmod",
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
