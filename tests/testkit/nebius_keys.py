"""A Nebius service-account credentials file, as `nebius iam auth-public-key generate` writes it
(`{"subject-credentials": {"type": "JWT", "alg": "RS256", "private-key", "kid", "iss", "sub"}}`,
read by the SDK's `nebius.base.service_account.credentials_file.Reader`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState


def key_file(path: Path, state: FakeCloudState | None, *, kid: str = "publickey-ci") -> Path:
    """A fresh RSA key written to `path`; its public key registered with the local Nebius
    server's state when `state` is given."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    account = "serviceaccount-ci"
    if state is not None:
        state.public_keys[kid] = (account, public)
    subject = {"alg": "RS256", "private-key": private, "kid": kid, "iss": account, "sub": account}
    path.write_text(json.dumps({"subject-credentials": {"type": "JWT", **subject}}))
    return path
