"""`from npa.sdk import fleet`: the npa SDK's fleet namespace, backed by npa_sop_tui.sdk.fleet."""

from npa_sop_tui.sdk.fleet import *  # noqa: F403
from npa_sop_tui.sdk.fleet import __all__  # noqa: F401
