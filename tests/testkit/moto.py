"""A real S3 API on 127.0.0.1 (moto's server mode) for the team-state tests.

`moto_server` is started by the fixture on a free port and stopped after; its buckets live in
its memory, so a restart starts empty (the "bucket went away" tests use that).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from testkit.wait import wait_until

ACCESS_KEY = "npa-test-access"
SECRET_KEY = "npa-test-secret-do-not-log"
REGION = "eu-north1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MotoServer:
    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MotoServer:
        binary = Path(sys.executable).parent / "moto_server"
        self.proc = subprocess.Popen(
            [str(binary), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proc = self.proc

        def answers() -> bool:
            try:
                urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1).close()
                return True
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"moto_server exited with {proc.returncode}") from None
                return False

        wait_until(answers, timeout=30, interval=0.1, what="moto_server to answer")
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def client(self) -> Any:
        import boto3

        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
        )

    def make_bucket(self, name: str) -> str:
        client = self.client()
        client.create_bucket(Bucket=name)
        client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
        return name


def team_env(endpoint: str, bucket: str) -> dict[str, str]:
    return {
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "NPA_STATE_BUCKET": bucket,
        "NPA_STATE_ENDPOINT": endpoint,
        "NPA_STATE_REGION": REGION,
    }


def team_options(server: MotoServer, monkeypatch: Any) -> Any:
    """`options(**extra)` whose environment selects a fresh bucket of `server` by its flags;
    only the keys are in the process environment, so the default store stays this machine's
    local one."""
    import os

    from npa_sop_tui.environment_choice import open_environment
    from npa_sop_tui.lifecycle.api import LifecycleOptions

    from testkit.lifecycle import IDENTITY

    bucket = server.make_bucket(
        f"npa-destroy-{os.getpid()}-{len(server.client().list_buckets()['Buckets'])}"
    )
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    flags = {"state.bucket": bucket, "state.endpoint": server.endpoint, "state.region": REGION}

    def options(**extra: Any) -> LifecycleOptions:
        extra.setdefault("identity", IDENTITY)
        environment = open_environment(sandbox=True, flags=flags, sleep_seconds=0)
        return LifecycleOptions(environment=environment, **extra)

    return options


_ALLOW_ALL = json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
)


class SigningMoto:
    """A moto server that checks every request's signature against keys in its IAM.

    Only keys made by `mint` (what the local Nebius server hands out as Object Storage keys)
    and the admin key the helper keeps for itself are accepted, so a request that gets
    through proves which key signed it.
    """

    def __init__(self, bucket: str) -> None:
        self.server = MotoServer().start()
        self.bucket = bucket
        anon = self.client("setup", "setup", "iam")
        anon.create_user(UserName="state-writer")
        anon.put_user_policy(
            UserName="state-writer",
            PolicyName="everything",
            PolicyDocument=_ALLOW_ALL,
        )
        admin = anon.create_access_key(UserName="state-writer")["AccessKey"]
        self._admin = (admin["AccessKeyId"], admin["SecretAccessKey"])
        s3 = self.admin("s3")
        s3.create_bucket(Bucket=bucket)
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=b"0",  # no more unsigned requests from now on
            method="POST",
            headers={"Content-Type": "text/plain"},
        )
        urllib.request.urlopen(request, timeout=10).close()
        self.minted: list[str] = []

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    def client(self, key_id: str, secret: str, service: str = "s3") -> Any:
        import boto3
        from botocore.config import Config

        return boto3.session.Session().client(
            service,
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=key_id,
            aws_secret_access_key=secret,
            config=Config(s3={"addressing_style": "path"}),
        )

    def admin(self, service: str = "s3") -> Any:
        return self.client(*self._admin, service)

    def mint(self, _service_account: str) -> tuple[str, str]:
        """A new key the server accepts (the local Nebius server's key minter)."""
        iam = self.admin("iam")
        user = f"minted-{len(self.minted) + 1}"  # moto allows two keys per user
        iam.create_user(UserName=user)
        iam.put_user_policy(UserName=user, PolicyName="everything", PolicyDocument=_ALLOW_ALL)
        key = iam.create_access_key(UserName=user)["AccessKey"]
        self.minted.append(key["AccessKeyId"])
        return key["AccessKeyId"], key["SecretAccessKey"]

    def stop(self) -> None:
        self.server.stop()


class InProcessMoto(MotoServer):
    """The same moto S3 API served from a thread of the test process, not a `moto_server`
    child: it answers at once where the child takes seconds to import moto. For test files
    run once per mutant (the mutation run forks a fresh pytest for each): import
    `moto.server` at module level so the fork inherits it, and only the thread starts."""

    def __init__(self) -> None:
        super().__init__(port=0)
        self.threaded: Any = None
        self._client: Any = None

    def start(self) -> InProcessMoto:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # one line per request
        self.threaded = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.threaded.start()
        self.port = self.threaded.get_host_and_port()[1]
        return self

    def client(self) -> Any:
        # One client for the file's buckets: each new one parses botocore's S3 model again.
        if self._client is None:
            self._client = super().client()
        return self._client

    def stop(self) -> None:
        threaded, self.threaded = self.threaded, None
        if threaded is not None:
            threaded.stop()
