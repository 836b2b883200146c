#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian machine and run the whole suite:
# Debian packages (slurm-wlm parts, munge, openssh-server, tmux, mmdebstrap), a venv with the
# test extra, the local Slurm + sshd substrate, then ruff, the import rules (lint-imports), the
# cloud, state and SDK tests on the dependency floors (scripts/floors.sh), and last the whole
# suite with pytest.
# Extra arguments go to pytest.
#
# This changes the machine (root or sudo needed): apt installs slurmctld, slurmd,
# slurm-client, munge, openssh-server, tmux, git, mmdebstrap and chromium (Debian enables the ssh, munge
# and slurm services); scripts/substrate.sh builds a Debian sid root for Slurm 26.05 (once,
# cached in /var/cache/npa-substrate/sid-root) and writes /etc/slurm/slurm.conf and gres.conf,
# creates /etc/munge/munge.key if missing and adds the user slurmops; its own files go to
# $NPA_SUBSTRATE_DIR (default /tmp/npa-substrate). A substrate this script started is
# stopped at the end; `bash scripts/substrate.sh purge` removes what it created.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

SUDO=""
[[ $(id -u) -eq 0 ]] || SUDO="sudo"
PKGS=(slurmctld slurmd slurm-client munge openssh-server tmux git mmdebstrap)
PKGS+=(chromium) # the browser tests (tests/web): Playwright drives Debian's chromium
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

# The Debian sid root for Slurm 26.05 (cached after the first run) downloads while pip
# installs: both mostly wait on the network.
echo "==> building the Slurm 26.05 root in the background (when not cached yet)"
SID_LOG=$(mktemp)
$SUDO bash scripts/substrate.sh build >"$SID_LOG" 2>&1 &
SID_BUILD=$!
trap 'kill "$SID_BUILD" 2>/dev/null || true; rm -f "$SID_LOG"' EXIT

if [[ ! -x .venv/bin/python ]]; then
  echo "==> creating .venv"
  python3 -m venv .venv
fi
echo "==> pip install -e .[test] (pip's progress below)"
.venv/bin/pip install --disable-pip-version-check --progress-bar on -e '.[test]' 2>&1 \
  | grep --line-buffered -v "is ignored: it is neither"
.venv/bin/python -c "import npa_sop_tui, textual, kubernetes, asyncssh" # fail fast if the install broke
if ! wait "$SID_BUILD"; then
  cat "$SID_LOG" >&2
  echo "building the Debian sid root for Slurm 26.05 failed (log above)" >&2
  exit 1
fi
sed 's/^/    /' "$SID_LOG"
rm -f "$SID_LOG"
trap - EXIT

echo "==> starting the local substrate (munge, slurmctld, slurmd, sshd on 127.0.0.1:2222;" \
  "the GPU lab on :2223 and the Slurm 26.05 lab on :2224;" \
  "files in ${NPA_SUBSTRATE_DIR:-${LAB:-/tmp/npa-substrate}})"
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

# The lowest dependency versions pyproject.toml allows, in a venv of their own, first: the
# whole suite's closing line is then the last line of the log.
set +e
bash scripts/floors.sh
floors_rc=$?

echo "==> pytest"
# --durations: every CI log names the slowest tests (where CI time goes).
# -n: worker processes (pytest-xdist). Most tests wait on subprocesses, SSH and Terraform
# rather than compute; one worker a core (NPA_TEST_WORKERS overrides,
# 0: one process). --dist loadgroup keeps the tests that share one piece of the substrate
# (each Slurm lab, the :2222 slurmctld) in one worker, one after another (tests/conftest.py).
WORKERS=${NPA_TEST_WORKERS:-$(nproc)}
NPA_REQUIRE_SUBSTRATE=1 NPA_NO_SKIPS=1 .venv/bin/pytest -n "$WORKERS" --dist loadgroup \
  --durations=25 "$@"
rc=$?
set -e
if [[ $rc -eq 5 ]]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi
if [[ $floors_rc -ne 0 ]]; then
  echo "the tests on the dependency floors failed (scripts/floors.sh, above the suite)" >&2
  [[ $rc -ne 0 ]] || rc=$floors_rc
fi
exit $rc
