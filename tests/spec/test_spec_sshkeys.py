"""sshkeys.py: the root login key, checked as sshd would read it, found in the documented
order, fingerprinted as OpenSSH does (checked against real ssh-keygen)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.sshkeys import (
    ENV_FILE,
    ENV_GENERIC,
    ENV_INLINE,
    KeyNotFound,
    KeyProblem,
    check_public_key,
    fingerprint,
    resolve_root_login_key,
)


def _keypair(folder: Path, name: str, kind: str = "ed25519") -> str:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["ssh-keygen", "-q", "-t", kind, "-N", "", "-C", name, "-f", str(folder / name)],
        check=True,
    )
    return (folder / f"{name}.pub").read_text().strip()


@pytest.mark.parametrize("kind", ["ed25519", "rsa", "ecdsa"])
def test_fingerprint_is_what_ssh_keygen_prints(tmp_path: Path, kind: str) -> None:
    record = _keypair(tmp_path, f"id_{kind}", kind)
    printed = subprocess.run(
        ["ssh-keygen", "-l", "-E", "sha256", "-f", str(tmp_path / f"id_{kind}.pub")],
        capture_output=True, text=True, check=True,
    ).stdout.split()[1]  # fmt: skip
    assert check_public_key(record) == record
    assert fingerprint(record) == printed


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("", "exactly one"),
        ("ssh-ed25519 AAAA\nssh-ed25519 BBBB", "exactly one"),
        ('command="x" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5', "supported OpenSSH key type"),
        ("ssh-ed25519 !!notbase64", "invalid base64"),
        ("ssh-rsa AAAAC3NzaC1lZDI1NTE5", "does not match its key type"),
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", "no key material"),
    ],
)
def test_records_sshd_would_refuse_are_refused(record: str, message: str) -> None:
    with pytest.raises(KeyProblem, match=message):
        check_public_key(record)


def test_sources_in_order_and_a_broken_named_source_is_an_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    default = _keypair(home / ".ssh", "id_ed25519")
    flag = _keypair(tmp_path / "k", "flag")
    env_file = _keypair(tmp_path / "k", "envfile")
    inline = _keypair(tmp_path / "k", "inline")
    spec_key = _keypair(tmp_path / "k", "spec")

    def pick(**kw: object) -> str:
        return resolve_root_login_key(home=home, **kw).key  # type: ignore[arg-type]

    everything = {ENV_INLINE: inline, ENV_FILE: str(tmp_path / "k" / "envfile.pub")}
    assert pick(cli_file=tmp_path / "k" / "flag.pub", spec_key=spec_key, env=everything) == flag
    assert pick(spec_key=spec_key, env=everything) == spec_key
    assert pick(env=everything) == inline
    assert pick(env={ENV_FILE: str(tmp_path / "k" / "envfile.pub")}) == env_file
    assert pick(env={ENV_GENERIC: str(tmp_path / "k" / "envfile.pub")}) == env_file
    assert pick(env={}, config_path=tmp_path / "k" / "flag.pub") == flag
    found = resolve_root_login_key(env={}, home=home)
    assert found.key == default and found.source == f"default {home / '.ssh' / 'id_ed25519.pub'}"
    assert found.describe().startswith("SHA256:")
    # a named source that is broken is never skipped for a later one
    with pytest.raises(UsageError, match="not found"):
        pick(env={ENV_FILE: str(tmp_path / "missing.pub")})
    with pytest.raises(UsageError, match="is a private key"):
        pick(cli_file=tmp_path / "k" / "flag")


def test_no_key_anywhere_says_every_way_to_give_one(tmp_path: Path) -> None:
    with pytest.raises(KeyNotFound) as caught:
        resolve_root_login_key(env={}, home=tmp_path)
    hint = caught.value.hint or ""
    for way in ("root_login_ssh_public_key", "--root-login-ssh-public-key-file", ENV_INLINE,
                "ssh-keygen -t ed25519"):  # fmt: skip
        assert way in hint
