"""The home's `f` key that opens the fleet's node states. Its own module so home binds the
key without importing the fleet screen, whose chart reads status models (pydantic), before
the first frame."""

from __future__ import annotations

from textual.binding import Binding


def fleet_binding() -> Binding:
    return Binding(
        "f",
        "fleet",
        "Fleet",
        tooltip="Node states of every live cluster, side by side",
        show=False,
        id="home.fleet",
    )
