"""What the fake Nebius server's service modules need from the server that hosts them.

The services (reads, filesystems, access keys) are registered by `fake_nebius.FakeNebius`
and reach it only through this interface, so none of them imports the server module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from npa_sop_tui.sandbox.fake_cloud_state import FakeCloudState


class ServiceHost(Protocol):
    state: FakeCloudState

    def page(self, items: list[Any], request: Any) -> tuple[list[Any], str]:
        """One page of `items` as the request's page size and token ask."""
        ...

    def operation(self, method: str, resource_id: str) -> Any:
        """A completed long-running operation for `resource_id`."""
        ...
