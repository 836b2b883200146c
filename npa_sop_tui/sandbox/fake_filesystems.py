"""`compute.v1.FilesystemService` on the fake Nebius: Create, Get, Update and Delete.

Follows `nebius` 0.6.29's messages (`nebius.api.nebius.compute.v1`): a `CreateFilesystemRequest`
with `metadata.parent_id`/`name` and a `spec` (type, one of the sizes, block size, deletion
protection), an `UpdateFilesystemRequest` (metadata with the ID, the new spec), a
`DeleteFilesystemRequest` by ID; each answers an `Operation` whose `resource_id` is the
filesystem. As the cloud does: a name is unique in its project, a size is required, a size
only grows (a smaller one is INVALID_ARGUMENT), and a filesystem with `forbid_deletion` is not
deleted. With the `destroy-leftover` scenario the Delete operation succeeds but the
filesystem stays, which is what a destroy that leaves a filesystem looks like from outside.

What the product reads (`cloud.model.Filesystem`) is in `FakeCloudState.filesystems`; the
spec the API keeps with it (type, bytes, block size, protection) in `filesystem_specs`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from npa_sop_tui.cloud.model import Filesystem
from npa_sop_tui.sandbox.nebius_provider.filesystem import filesystem_id

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_nebius_host import ServiceHost

_UNITS = {"size_bytes": 1, "size_kibibytes": 2**10, "size_mebibytes": 2**20,
          "size_gibibytes": 2**30}  # fmt: skip


def _bytes(spec: Any) -> int:
    for field, unit in _UNITS.items():
        value = getattr(spec, field)
        if value:
            return int(value) * unit
    return 0


def handlers(fake: ServiceHost, rpc: Callable[..., Any]) -> list[Any]:
    import grpc
    from nebius.api.nebius.common.v1 import Operation, ResourceMetadata
    from nebius.api.nebius.compute import v1 as compute

    s = fake.state

    def create(req: Any, ctx: Any) -> Any:
        parent, name = req.metadata.parent_id, req.metadata.name
        if parent != s.project_id:
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to {parent}")
        if not name:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "metadata.name is empty")
        spec = req.spec
        if not _bytes(spec):
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "spec.size is required")
        fs_id = filesystem_id(parent, name)
        with s.lock:
            if any(f.name == name and f.parent_id == parent for f in s.filesystems.values()):
                ctx.abort(grpc.StatusCode.ALREADY_EXISTS, f"filesystem {name!r} already exists")
            s.filesystems[fs_id] = Filesystem(fs_id, name, parent, "ready")
            s.filesystem_specs[fs_id] = {
                "type": spec.type.name, "size_bytes": _bytes(spec),
                "block_size_bytes": int(spec.block_size_bytes),
                "forbid_deletion": bool(spec.forbid_deletion),
                "labels": dict(req.metadata.labels),
            }  # fmt: skip
        return fake.operation("compute.v1.FilesystemService/Create", fs_id)

    def get(req: Any, ctx: Any) -> Any:
        with s.lock:
            fs = s.filesystems.get(req.id)
            kept = dict(s.filesystem_specs.get(req.id, {}))
        if fs is None:
            ctx.abort(grpc.StatusCode.NOT_FOUND, f"filesystem {req.id} not found")
        kind = compute.FilesystemSpec.FilesystemType[kept.get("type") or "NETWORK_SSD"]
        size = int(kept.get("size_bytes") or 0)
        return compute.Filesystem(
            metadata=ResourceMetadata(id=fs.id, name=fs.name, parent_id=fs.parent_id,
                                      labels=kept.get("labels") or {}),
            spec=compute.FilesystemSpec(type=kind, size_bytes=size,
                                        block_size_bytes=int(kept.get("block_size_bytes") or 0),
                                        forbid_deletion=bool(kept.get("forbid_deletion"))),
            status=compute.FilesystemStatus(
                state=compute.FilesystemStatus.State[fs.state.upper()], size_bytes=size
            ),
        )  # fmt: skip

    def update(req: Any, ctx: Any) -> Any:
        fs_id = req.metadata.id
        with s.lock:
            kept = s.filesystem_specs.get(fs_id)
            if fs_id not in s.filesystems or kept is None:
                ctx.abort(grpc.StatusCode.NOT_FOUND, f"filesystem {fs_id} not found")
            size = _bytes(req.spec)
            if size < kept["size_bytes"]:
                ctx.abort(grpc.StatusCode.INVALID_ARGUMENT,
                          f"filesystem size cannot be decreased (from {kept['size_bytes']} "
                          f"to {size} bytes)")  # fmt: skip
            kept.update(size_bytes=size, forbid_deletion=bool(req.spec.forbid_deletion))
        return fake.operation("compute.v1.FilesystemService/Update", fs_id)

    def delete(req: Any, ctx: Any) -> Any:
        with s.lock:
            if req.id not in s.filesystems:
                ctx.abort(grpc.StatusCode.NOT_FOUND, f"filesystem {req.id} not found")
            if s.filesystem_specs.get(req.id, {}).get("forbid_deletion"):
                ctx.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"filesystem {req.id} is protected from deletion")  # fmt: skip
            if "destroy-leftover" not in s.scenario:
                del s.filesystems[req.id]
                s.filesystem_specs.pop(req.id, None)
        return fake.operation("compute.v1.FilesystemService/Delete", req.id)

    service = "nebius.compute.v1.FilesystemService"
    return [
        rpc(service, "Create", compute.CreateFilesystemRequest, Operation, create),
        rpc(service, "Get", compute.GetFilesystemRequest, compute.Filesystem, get),
        rpc(service, "Update", compute.UpdateFilesystemRequest, Operation, update),
        rpc(service, "Delete", compute.DeleteFilesystemRequest, Operation, delete),
    ]
