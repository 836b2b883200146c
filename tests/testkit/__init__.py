"""Helpers shared by the test folders: waiting on conditions, the local substrate, test data.

`tests/` is on `sys.path` (pytest's `pythonpath` setting), so tests import `testkit.…`.
"""
