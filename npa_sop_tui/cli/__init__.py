"""`npa` and `npa-sop` console entries: argument parsing and dispatch only.

Each command group lives in its own module with a `register(subparsers)` function. Those
modules import nothing heavy at import time (no Textual, kubernetes or asyncssh), and a call
builds only the parser of the command it runs (`parser.py`), so `npa soperator validate`
stays fast; handlers import what they need when they run.
"""
