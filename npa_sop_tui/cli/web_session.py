"""One served session's app process: `python -m npa_sop_tui.cli.web_session [npa-sop flags]`.

textual-serve starts this once per browser tab, with the web driver in its environment;
it is `npa-sop` itself, so the session reads the same settings, state store and login
resolver as the terminal app. It gets no token: the server checked it already.
"""

from __future__ import annotations

import sys

from npa_sop_tui.cli.entry import tui_main

if __name__ == "__main__":
    raise SystemExit(tui_main(sys.argv[1:]))
