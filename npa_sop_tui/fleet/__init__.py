"""`npa.fleet/v0.0.1`: many soperator clusters across projects, through the one lifecycle.

model    the file's shape and resolved targets
loader   file → targets, every problem with file:line before anything runs
select   `--select` expressions
network  one fleet-owned network per project
state    the fleet's inventory file and lock
runner   plan / deploy / status / destroy over targets, at most N at once
"""
