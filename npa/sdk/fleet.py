"""`from npa.sdk import fleet`: the npa SDK's fleet namespace, backed by npa_sop_tui.sdk_fleet."""

from npa_sop_tui.sdk_fleet import *  # noqa: F403
from npa_sop_tui.sdk_fleet import __all__  # noqa: F401
