#!/usr/bin/env bash
# The lowest versions pyproject.toml allows really install and work: a venv of its own gets
# every runtime dependency at its floor (`>=` of its line; scripts/floors.py makes them pip
# constraints), the package and its test extra on top, and the cloud, state and SDK tests run
# there. CI runs this after the suite (scripts/test.sh); it needs the substrate no more than
# those tests do. NPA_FLOORS_VENV moves the venv (default: a temporary folder, removed after).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${NPA_FLOORS_VENV:-}
if [[ -z $VENV ]]; then
  VENV=$(mktemp -d)/floors
  trap 'rm -rf "$(dirname "$VENV")"' EXIT
fi
PY=${PYTHON:-python3}
echo "==> the dependency floors in $VENV"
"$PY" -m venv --clear "$VENV"
"$PY" scripts/floors.py >"$VENV/floors.txt"
sed 's/^/    /' "$VENV/floors.txt"
if ! "$VENV/bin/pip" install -q --disable-pip-version-check -c "$VENV/floors.txt" -e '.[test]' \
  >"$VENV/pip.log" 2>&1; then
  grep -v "is ignored: it is neither" "$VENV/pip.log" >&2
  echo "the floors above do not install together: raise the one pip names in pyproject.toml" >&2
  exit 1
fi
"$VENV/bin/pip" check
"$PY" scripts/floors.py --check "$VENV/bin/python"
echo "==> the cloud, state and SDK tests on the floors"
# Without the Terraform-driven (and other slow) ones by default: they reach the same library
# calls as the fast tests of their modules, and cost most of the time (arguments replace it).
MARKS=(-m "not slow and not terraform")
[[ $# -gt 0 ]] && MARKS=()
NPA_REQUIRE_SUBSTRATE=${NPA_REQUIRE_SUBSTRATE:-1} "$VENV/bin/pytest" -q -p no:cacheprovider \
  -n "${NPA_TEST_WORKERS:-2}" --dist loadgroup "${MARKS[@]}" tests/cloud tests/state tests/sdk "$@"
