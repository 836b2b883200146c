"""The root login SSH public key: validation, fingerprint, and where it comes from.

The recipe needs at least one non-empty key for root on the login node. Only the key's
source and SHA256 fingerprint are ever shown; the key record itself is not a secret but is
long and noisy, and the private key is never read.
"""

from __future__ import annotations

import base64
import binascii
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from npa_sop_tui.errors import UsageError

KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)
DEFAULT_KEY_FILES = ("id_ed25519.pub", "id_rsa.pub", "id_ecdsa.pub")


class KeyNotFound(UsageError):
    """No source offered a root login key (as opposed to a named source being broken)."""


ENV_INLINE = "NPA_SOPERATOR_ROOT_LOGIN_SSH_PUBLIC_KEY"
ENV_FILE = "NPA_SOPERATOR_ROOT_LOGIN_SSH_PUBLIC_KEY_FILE"
ENV_GENERIC = "NPA_SSH_PUBLIC_KEY"
_PREFIX = "root login SSH key"


class KeyProblem(ValueError):
    """A public-key record that the recipe (or sshd) would not accept."""


def check_public_key(record: str) -> str:
    """Return the normalised `type blob [comment]` record, or raise `KeyProblem`."""
    lines = [line for line in record.strip().splitlines() if line.strip()]
    if len(lines) != 1:
        raise KeyProblem(f"{_PREFIX} must be exactly one non-empty public-key record")
    parts = lines[0].split()
    if len(parts) < 2 or parts[0] not in KEY_TYPES:
        raise KeyProblem(
            f"{_PREFIX} must start with a supported OpenSSH key type and contain one base64 "
            f"key blob (supported: {', '.join(KEY_TYPES)}; option prefixes are not allowed)"
        )
    try:
        blob = base64.b64decode(parts[1], validate=True)
    except (binascii.Error, ValueError):
        raise KeyProblem(f"{_PREFIX} has an invalid base64 blob") from None
    if not blob:
        raise KeyProblem(f"{_PREFIX} has an empty key blob")
    # The blob starts with its own type name; a mismatch (or a blob too short to hold it)
    # means a corrupted, truncated or pasted-wrong key.
    (length,) = struct.unpack(">I", blob[:4]) if len(blob) >= 4 else (-1,)
    if blob[4 : 4 + length] != parts[0].encode():
        raise KeyProblem(f"{_PREFIX} blob does not match its key type {parts[0]}")
    if len(blob) < 4 + length + 5:  # the key material follows as another length-prefixed field
        raise KeyProblem(f"{_PREFIX} blob holds no key material (truncated key?)")
    return " ".join(parts)


def fingerprint(record: str) -> str:
    """OpenSSH-style `SHA256:…` fingerprint of a public-key record."""
    import hashlib  # here, not at the top: spec validation reads keys but never hashes them

    blob = base64.b64decode(record.split()[1])
    digest = base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")
    return f"SHA256:{digest}"


@dataclass(frozen=True)
class ResolvedKey:
    key: str
    source: str  # e.g. "spec", "--root-login-ssh-public-key-file /p", "~/.ssh/id_ed25519.pub"

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key)

    def describe(self) -> str:
        return f"{self.fingerprint} (from {self.source})"


def _read_key_file(path: Path, source: str) -> ResolvedKey:
    try:
        text = path.expanduser().read_text("utf-8")
    except FileNotFoundError:
        raise UsageError(f"SSH public key file not found: {path} ({source})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read SSH public key file {path} ({source}): {exc}") from None
    if "PRIVATE KEY" in text:
        raise UsageError(
            f"{path} is a private key ({source})", hint="point at the .pub file instead"
        )
    try:
        return ResolvedKey(check_public_key(text), f"{source} {path}")
    except KeyProblem as exc:
        raise UsageError(f"{exc} ({source} {path})") from None


def _inline(record: str, source: str) -> ResolvedKey:
    try:
        return ResolvedKey(check_public_key(record), source)
    except KeyProblem as exc:
        raise UsageError(f"{exc} ({source})") from None


HOW_TO_PROVIDE = (
    "set root_login_ssh_public_key in the spec, pass --root-login-ssh-public-key-file PATH, "
    f"set {ENV_INLINE} (the key) or {ENV_FILE} / {ENV_GENERIC} (a path), set "
    "ssh_public_key_path in ~/.npa/config.yaml, or create ~/.ssh/id_ed25519.pub "
    "(ssh-keygen -t ed25519)"
)


def resolve_root_login_key(
    *,
    spec_key: str | None = None,
    cli_file: str | Path | None = None,
    config_path: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> ResolvedKey:
    """Find the root login key in the existing npa's order, then our config.

    Order: `--root-login-ssh-public-key-file`, the spec's key, `NPA_SOPERATOR_ROOT_LOGIN_
    SSH_PUBLIC_KEY` (inline), `…_FILE`, `NPA_SSH_PUBLIC_KEY` (path), config
    `ssh_public_key_path`, then `~/.ssh/id_ed25519.pub`, `id_rsa.pub`, `id_ecdsa.pub`.
    An explicitly named source that is broken is an error, never silently skipped.
    """
    env = os.environ if env is None else env
    if cli_file:
        return _read_key_file(Path(cli_file), "--root-login-ssh-public-key-file")
    if spec_key:
        return _inline(spec_key, "spec root_login_ssh_public_key")
    if env.get(ENV_INLINE, "").strip():
        return _inline(env[ENV_INLINE], ENV_INLINE)
    for var in (ENV_FILE, ENV_GENERIC):
        if env.get(var, "").strip():
            return _read_key_file(Path(env[var].strip()), var)
    if config_path:
        return _read_key_file(Path(config_path), "config ssh_public_key_path")
    ssh_dir = (home or Path.home()) / ".ssh"
    for name in DEFAULT_KEY_FILES:
        candidate = ssh_dir / name
        if candidate.is_file():
            return _read_key_file(candidate, "default")
    raise KeyNotFound(
        "soperator login-node root access requires one SSH public key: none was found",
        hint=HOW_TO_PROVIDE,
    )


PLACEHOLDER_SOURCE = "placeholder"
"""The source of `placeholder_key()`: what `render` shows when no key was found."""


def placeholder_key() -> ResolvedKey:
    """A well-formed ed25519 record whose key is all zeros (no private key exists for it),
    commented as a placeholder: lets `render` show the tfvars without an SSH key. Deploy never
    uses it: it resolves a real key or stops."""
    import base64
    import struct

    kind = b"ssh-ed25519"
    blob = struct.pack(">I", len(kind)) + kind + struct.pack(">I", 32) + bytes(32)
    record = f"ssh-ed25519 {base64.b64encode(blob).decode()} npa-placeholder-not-a-real-key"
    return ResolvedKey(record, PLACEHOLDER_SOURCE)
