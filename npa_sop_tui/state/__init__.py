"""Team state: where clusters' records, logs, locks and Terraform state live.

`store_for(settings)` gives the store the settings select (`state.backend`: local or s3);
`default_store()` the one the environment and config file select, for readers that have no
`Environment` at hand. See store.py for the interface, location.py for the bucket layout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from npa_sop_tui.state.location import StateLocation, location_from_settings
from npa_sop_tui.state.store import StateStore

if TYPE_CHECKING:
    from npa_sop_tui.settings import Settings

__all__ = ["StateLocation", "StateStore", "default_store", "store_at", "store_for"]


def store_at(location: StateLocation) -> StateStore:
    if location.backend == "s3":
        from npa_sop_tui.state.s3 import S3Store

        return S3Store(location)
    from npa_sop_tui.state.local import LocalStore

    return LocalStore(location)


def store_for(settings: Settings) -> StateStore:
    return store_at(location_from_settings(settings))


def default_store() -> StateStore:
    """The store of the current npa home's config and the environment (no flags)."""
    from npa_sop_tui.settings import resolve_settings

    return store_for(resolve_settings())
