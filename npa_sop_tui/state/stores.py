"""Which state store: the one a location, the settings, or the current home and environment
select."""

from __future__ import annotations

from typing import TYPE_CHECKING

from npa_sop_tui.state.location import StateLocation, location_from_settings
from npa_sop_tui.state.store import StateStore

if TYPE_CHECKING:
    from npa_sop_tui.home.settings import Settings

__all__ = ["default_store", "store_at", "store_for"]


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
    from npa_sop_tui.home.settings import resolve_settings

    return store_for(resolve_settings())
