"""`from npa.sdk import soperator`: the npa SDK namespace, backed by npa_sop_tui.sdk."""

from npa_sop_tui.sdk import *  # noqa: F403
from npa_sop_tui.sdk import __all__  # noqa: F401
