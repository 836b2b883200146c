#!/usr/bin/env bash
# Install npa-sop-tui into .venv (with the sandbox's local Terraform) and open the app.
# Without a cloud identity in ~/.npa/config.yaml the home screen offers the sandbox;
# `scripts/run.sh --sandbox` goes straight there. Extra arguments go to `npa-sop`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x .venv/bin/python ]]; then
  python3 -m venv .venv
fi
if ! .venv/bin/pip install -q --disable-pip-version-check -e '.[sandbox]' >.venv/pip-install.log 2>&1; then
  grep -v "is ignored: it is neither" .venv/pip-install.log >&2
  echo "pip install failed (full log: .venv/pip-install.log)" >&2
  exit 1
fi
exec .venv/bin/npa-sop "$@"
