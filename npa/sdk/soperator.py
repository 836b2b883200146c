"""`from npa.sdk import soperator`: the npa SDK namespace, backed by npa_sop_tui.sdk.soperator."""

from npa_sop_tui.sdk.soperator import *  # noqa: F403
from npa_sop_tui.sdk.soperator import __all__  # noqa: F401
