"""The stand-in provider's cloud when Terraform runs against a (fake) Nebius API: filesystems
are created, grown and deleted through the official `nebius` SDK (`compute.v1.FilesystemService`
Create/Update/Delete, each an operation waited for) and read with Get (a filesystem gone from
the cloud reads as None), signed in with `NEBIUS_IAM_TOKEN`, calls sent to
`NPA_STANDIN_NEBIUS_ENDPOINT` (the `address=host:port,…` map `NPA_NEBIUS_ENDPOINT` takes).
Without that variable the provider keeps the sandbox's naming rule (`filesystem.DerivedCloud`).
"""

from __future__ import annotations

import asyncio
from typing import Any

ENDPOINT_ENV = "NPA_STANDIN_NEBIUS_ENDPOINT"
TOKEN_ENV = "NEBIUS_IAM_TOKEN"
WAIT_SECONDS = 120.0


class SdkCloud:
    def __init__(self, endpoint: str, token: str) -> None:
        self.endpoint = endpoint
        self.token = token

    def create(self, state: dict[str, Any]) -> str:
        return asyncio.run(self._create(state))

    def delete(self, fs_id: str) -> None:
        asyncio.run(self._delete(fs_id))

    def resize(self, fs_id: str, size_bytes: int) -> None:
        asyncio.run(self._resize(fs_id, size_bytes))

    def get(self, fs_id: str) -> dict[str, Any] | None:
        return asyncio.run(self._get(fs_id))

    async def _sdk(self) -> Any:
        from npa_sop_tui.cloud.signin import new_sdk, sign_in

        return new_sdk(sign_in(iam_token=self.token), self.endpoint)

    async def _create(self, state: dict[str, Any]) -> str:
        from nebius.api.nebius.common.v1 import ResourceMetadata
        from nebius.api.nebius.compute import v1 as compute

        kind = compute.FilesystemSpec.FilesystemType
        spec: dict[str, Any] = {"type": kind[state["type"]]}
        if state.get("size_bytes") is not None:
            spec["size_bytes"] = int(state["size_bytes"])
        else:
            spec["size_gibibytes"] = int(state["size_gibibytes"])
        if state.get("block_size_bytes") is not None:
            spec["block_size_bytes"] = int(state["block_size_bytes"])
        request = compute.CreateFilesystemRequest(
            metadata=ResourceMetadata(
                parent_id=state["parent_id"], name=state["name"], labels=state.get("labels") or {}
            ),
            spec=compute.FilesystemSpec(**spec),
        )
        sdk = await self._sdk()
        try:
            op = await compute.FilesystemServiceClient(sdk).create(request)
            await _finished(op, f"create filesystem {state['name']}")
            return str(op.resource_id)
        finally:
            await sdk.close()

    async def _delete(self, fs_id: str) -> None:
        from nebius.api.nebius.compute import v1 as compute

        sdk = await self._sdk()
        try:
            op = await compute.FilesystemServiceClient(sdk).delete(
                compute.DeleteFilesystemRequest(id=fs_id)
            )
            await _finished(op, f"delete filesystem {fs_id}")
        finally:
            await sdk.close()

    async def _fetch(self, sdk: Any, fs_id: str) -> Any:
        from nebius.aio.service_error import RequestError
        from nebius.api.nebius.compute import v1 as compute

        try:
            return await compute.FilesystemServiceClient(sdk).get(
                compute.GetFilesystemRequest(id=fs_id)
            )
        except RequestError as exc:
            from npa_sop_tui.cloud.signin import request_failure

            if request_failure(exc)[0] == "NOT_FOUND":
                return None
            raise

    async def _get(self, fs_id: str) -> dict[str, Any] | None:
        sdk = await self._sdk()
        try:
            item = await self._fetch(sdk, fs_id)
        finally:
            await sdk.close()
        if item is None:
            return None
        spec, st = item.spec, item.status
        return {
            "id": item.metadata.id,
            "parent_id": item.metadata.parent_id,
            "name": item.metadata.name,
            "labels": dict(item.metadata.labels) or None,
            "type": spec.type.name,
            "size_bytes": int(spec.size_bytes) or None,
            "size_gibibytes": None,
            "block_size_bytes": int(spec.block_size_bytes) or None,
            "forbid_deletion": bool(spec.forbid_deletion),
            "status": {
                "state": st.state.name,
                "size_bytes": int(st.size_bytes),
                "reconciling": bool(st.reconciling),
            },
        }

    async def _resize(self, fs_id: str, size_bytes: int) -> None:
        from nebius.api.nebius.compute import v1 as compute

        sdk = await self._sdk()
        try:
            item = await self._fetch(sdk, fs_id)
            if item is None:
                raise RuntimeError(f"filesystem {fs_id} not found")
            spec = item.spec
            spec.size_bytes = size_bytes
            op = await compute.FilesystemServiceClient(sdk).update(
                compute.UpdateFilesystemRequest(metadata=item.metadata, spec=spec)
            )
            await _finished(op, f"grow filesystem {fs_id}")
        finally:
            await sdk.close()


async def _finished(op: Any, what: str) -> None:
    await op.wait(interval=0.2, timeout=WAIT_SECONDS)
    if not op.successful():
        status = op.status()
        raise RuntimeError(f"{what}: {getattr(status, 'message', '') or 'failed'}")


def cloud_from_env(env: dict[str, str]) -> SdkCloud | None:
    endpoint = env.get(ENDPOINT_ENV, "").strip()
    if not endpoint:
        return None
    return SdkCloud(endpoint, env.get(TOKEN_ENV, ""))
