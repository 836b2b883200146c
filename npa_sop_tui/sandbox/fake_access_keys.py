"""The key store behind the local Nebius server's IAM access-key service
(`nebius.iam.v2.AccessKeyService`, whose handlers are in fake_access_key_service.py).

npa mints a short-lived Object Storage access key for a service account through it when the
team's state bucket is used without `AWS_*` keys. Keys are issued by `FakeAccessKeys.mint`:
by default a random key pair, or whatever the test's `minter` returns (a key an S3 server
that checks signatures really accepts). Every key issued, read and deleted is recorded, so a
test can prove which key reached the bucket and that npa cleaned up after itself.

Create and Delete answer with an operation of the server (fake_nebius.py), which takes the
state's `operation_seconds` and can be made to fail.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

Minter = Callable[[str], tuple[str, str]]  # service account id → (key id, secret)


@dataclass
class IssuedKey:
    id: str  # the Nebius resource id (accesskey-…)
    parent_id: str
    account_id: str  # the service account it belongs to
    aws_access_key_id: str
    secret: str = field(repr=False)
    expires_at: float  # seconds since the epoch
    description: str


def random_key_pair(_account: str) -> tuple[str, str]:
    return "NAKI" + secrets.token_hex(8).upper(), secrets.token_urlsafe(30)


@dataclass
class FakeAccessKeys:
    minter: Minter = random_key_pair
    issued: dict[str, IssuedKey] = field(default_factory=dict)
    secrets_read: list[str] = field(default_factory=list)  # ids whose secret was fetched
    deleted: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def mint(self, parent_id: str, account_id: str, expires_at: float, text: str) -> IssuedKey:
        aws_id, secret = self.minter(account_id)
        with self.lock:
            key = IssuedKey(
                id=f"accesskey-{len(self.issued) + 1:04d}",
                parent_id=parent_id,
                account_id=account_id,
                aws_access_key_id=aws_id,
                secret=secret,
                expires_at=expires_at,
                description=text,
            )
            self.issued[key.id] = key
            return key
