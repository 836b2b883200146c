"""npa's known_hosts is read without trusting it: a file that never ends or blocks is
refused at once, saying what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.status.hostkeys import HostKeyEntry, KnownHosts

from testkit.hostile_files import plant


def test_known_hosts_are_read_and_added(npa_home: Path) -> None:
    hosts = KnownHosts()
    assert hosts.lookup("login.example", 22) == []
    hosts.add("login.example", 22, HostKeyEntry("ssh-ed25519", "AAAAC3NzaC1lZDI1NTE5AAAAIK"))
    assert [e.openssh for e in hosts.lookup("login.example", 22)] == [
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIK"
    ]
    assert (npa_home / "known_hosts").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("dev-zero", "is a character device, not a known_hosts"),
        ("sparse", "known_hosts is larger than 4 MiB"),
        ("fifo", "is a named pipe (FIFO), not a known_hosts"),
    ],
)
def test_a_known_hosts_that_never_ends_or_blocks_is_refused_at_once(
    npa_home: Path, kind: str, said: str
) -> None:
    """Defect: known_hosts as /dev/zero or a sparse 3 GB file was read to the end
    (MemoryError), as a FIFO every SSH connection hung before it started."""
    path = plant(npa_home / "known_hosts", kind)
    with pytest.raises(UsageError) as refused:
        KnownHosts().lookup("login.example", 22)
    assert refused.value.message == f"{path}: {said}"
    assert f"rm {path}" in (refused.value.hint or "")
