"""The Python SDK: `from npa.sdk import soperator` and `from npa.sdk import fleet`.

Owns: the SDK's calls (`soperator`: validate, plan, deploy, destroy, status, jobs), the
names and result shapes of the existing npa SDK (`compat`), fleets (`fleet`), jobs (`jobs`)
and the validation helpers agents call (`validate`). A front door: it may import the
lifecycle, status, jobs, fleet and the home, never the TUI, the screens, the CLI or the
agent tools.
"""
