#!/usr/bin/env bash
# Install npa-sop-tui into .venv (with the sandbox's local Terraform) and open the app.
# Without a cloud identity in ~/.npa/config.yaml the home screen offers the sandbox;
# `scripts/run.sh --sandbox` goes straight there. Extra arguments go to `npa-sop`.
#
# pip runs only when needed: on the first run, when pyproject.toml changed, or when .venv
# was recreated (the stamp lives inside it). Its own progress is shown as it goes.
set -euo pipefail
# The app works where it was started from (./cluster.yaml, paths typed into `o`): only the
# install runs in the repository.
caller="$PWD"
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

say() { printf '==> %s\n' "$*" >&2; }

if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv with $(python3 --version) (first run only)"
  python3 -m venv .venv
fi

STAMP=.venv/.npa-run-installed
wanted="$(sha256sum pyproject.toml | cut -d' ' -f1) sandbox"
if [[ ! -x .venv/bin/npa-sop || ! -f $STAMP || "$(cat "$STAMP")" != "$wanted" ]]; then
  say "installing npa-sop-tui and its dependencies into .venv (a minute or two the first" \
    "time; later runs skip this until pyproject.toml changes)"
  rm -f "$STAMP"
  if ! .venv/bin/pip install --disable-pip-version-check --progress-bar on -e '.[sandbox]'; then
    say "pip install failed (the lines above say why); nothing was started"
    exit 1
  fi
  printf '%s\n' "$wanted" >"$STAMP"
fi

say "starting npa-sop $*"
cd "$caller"
exec "$repo/.venv/bin/npa-sop" "$@"
