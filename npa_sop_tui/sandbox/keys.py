"""A root login key for sandbox clusters, so a newcomer without ~/.ssh keys can deploy.

The stand-in recipe checks the key like the real one does, but nothing ever logs in with it;
the private half is kept (0600) only so the key is a real pair rather than a made-up string.
"""

from __future__ import annotations

from pathlib import Path

from npa_sop_tui.home.fsutil import SECRET_MODE, atomic_write_bytes, atomic_write_text
from npa_sop_tui.home.paths import sandbox_home
from npa_sop_tui.spec.sshkeys import ResolvedKey, check_public_key


def sandbox_key_paths(home: Path | None = None) -> tuple[Path, Path]:
    """The pair's files under the sandbox home (`home`, else the current sandbox home)."""
    folder = (home or sandbox_home()) / "ssh"
    return folder / "id_ed25519", folder / "id_ed25519.pub"


def sandbox_login_key(home: Path | None = None) -> ResolvedKey:
    """The sandbox's ed25519 public key: created once, then always the same one (a new key
    would make the next deploy plan a replacement of the login node)."""
    private, public = sandbox_key_paths(home)
    if not public.is_file():
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        key = Ed25519PrivateKey.generate()
        atomic_write_bytes(
            private,
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.OpenSSH,
                serialization.NoEncryption(),
            ),
            mode=SECRET_MODE,
        )
        record = key.public_key().public_bytes(
            serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
        )
        atomic_write_text(public, record.decode("ascii") + " npa-sandbox\n")
    return ResolvedKey(check_public_key(public.read_text().strip()), f"sandbox key {public}")
