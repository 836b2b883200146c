"""Fixtures for the team-state tests: a real S3 API on 127.0.0.1 (moto's server mode)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from testkit.moto import ACCESS_KEY, REGION, SECRET_KEY, MotoServer, free_port, team_env

__all__ = ["ACCESS_KEY", "REGION", "SECRET_KEY", "MotoServer", "free_port", "team_env"]


@pytest.fixture(scope="session")
def moto() -> Iterator[MotoServer]:
    server = MotoServer().start()
    try:
        yield server
    finally:
        server.stop()


_COUNTER = iter(range(10**6))


@pytest.fixture
def bucket_env(moto: MotoServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh versioned bucket and the environment that selects it (as a team would)."""
    name = moto.make_bucket(f"npa-team-{os.getpid()}-{next(_COUNTER)}")
    env = team_env(moto.endpoint, name)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    return env
