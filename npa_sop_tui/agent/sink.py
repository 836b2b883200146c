"""How a tool reports progress: a callable handed each lifecycle event, or None for silence.

Its own module so the tool modules and the registry share it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EventSink = Callable[[Any], None] | None
