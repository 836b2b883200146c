#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian machine and run the whole suite:
# Debian packages (slurm-wlm parts, munge, openssh-server, tmux), a venv with the test extra,
# the local Slurm + sshd substrate, then ruff, the import rules (lint-imports) and pytest.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
PKGS=(slurmctld slurmd slurm-client munge openssh-server tmux git)
missing=()
for pkg in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "==> apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "==> creating .venv"
  python3 -m venv .venv
fi
echo "==> pip install -e .[test]"
if ! .venv/bin/pip install -q --disable-pip-version-check -e '.[test]' >.venv/pip-install.log 2>&1; then
  grep -v "is ignored: it is neither" .venv/pip-install.log >&2
  echo "pip install failed (full log: .venv/pip-install.log)" >&2
  exit 1
fi
.venv/bin/python -c "import npa_sop_tui, textual, kubernetes, asyncssh" # fail fast if the install broke

echo "==> starting the local substrate (munge, slurmctld, slurmd, sshd on 127.0.0.1:2222)"
if bash scripts/substrate.sh status >/dev/null 2>&1; then
  echo "    (already running; left running afterwards)"
else
  bash scripts/substrate.sh start
  trap 'bash "$ROOT/scripts/substrate.sh" stop || true' EXIT
fi

echo "==> ruff"
.venv/bin/ruff check .

echo "==> import rules (lint-imports; contracts in pyproject.toml)"
.venv/bin/lint-imports

echo "==> pytest"
set +e
NPA_REQUIRE_SUBSTRATE=1 .venv/bin/pytest "$@"
rc=$?
set -e
if [[ $rc -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
exit $rc
