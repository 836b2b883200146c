"""`compute.v1.FilesystemService` Create and Delete on the fake Nebius (Get is with the reads).

Follows `nebius` 0.6.29's messages (`nebius.api.nebius.compute.v1`): a `CreateFilesystemRequest`
with `metadata.parent_id`/`name` and a `spec` (type, one of the sizes, block size), a
`DeleteFilesystemRequest` by ID; both answer an `Operation` whose `resource_id` is the
filesystem. As the cloud does: a name is unique in its project, a size is required. With the
`destroy-leftover` scenario the Delete operation succeeds but the filesystem stays, which is
what a destroy that leaves a filesystem looks like from outside.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from npa_sop_tui.cloud.model import Filesystem
from npa_sop_tui.sandbox.nebius_provider.filesystem import filesystem_id

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_nebius_host import ServiceHost


def handlers(fake: ServiceHost, rpc: Callable[..., Any]) -> list[Any]:
    import grpc
    from nebius.api.nebius.common.v1 import Operation
    from nebius.api.nebius.compute import v1 as compute

    s = fake.state

    def create(req: Any, ctx: Any) -> Any:
        parent, name = req.metadata.parent_id, req.metadata.name
        if parent != s.project_id:
            ctx.abort(grpc.StatusCode.PERMISSION_DENIED, f"no access to {parent}")
        if not name:
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "metadata.name is empty")
        spec = req.spec
        if not (spec.size_bytes or spec.size_gibibytes or spec.size_kibibytes
                or spec.size_mebibytes):  # fmt: skip
            ctx.abort(grpc.StatusCode.INVALID_ARGUMENT, "spec.size is required")
        fs_id = filesystem_id(parent, name)
        with s.lock:
            if any(f.name == name and f.parent_id == parent for f in s.filesystems.values()):
                ctx.abort(grpc.StatusCode.ALREADY_EXISTS, f"filesystem {name!r} already exists")
            s.filesystems[fs_id] = Filesystem(fs_id, name, parent, "ready")
        return fake.operation("compute.v1.FilesystemService/Create", fs_id)

    def delete(req: Any, ctx: Any) -> Any:
        with s.lock:
            if req.id not in s.filesystems:
                ctx.abort(grpc.StatusCode.NOT_FOUND, f"filesystem {req.id} not found")
            if "destroy-leftover" not in s.scenario:
                del s.filesystems[req.id]
        return fake.operation("compute.v1.FilesystemService/Delete", req.id)

    service = "nebius.compute.v1.FilesystemService"
    return [
        rpc(service, "Create", compute.CreateFilesystemRequest, Operation, create),
        rpc(service, "Delete", compute.DeleteFilesystemRequest, Operation, delete),
    ]
