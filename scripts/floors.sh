#!/usr/bin/env bash
# The lowest versions pyproject.toml allows really install and work: a venv of its own gets
# every runtime dependency at its floor (`>=` of its line; scripts/floors.py makes them pip
# constraints), the package and its test extra on top, and the cloud, state and SDK tests run
# there. CI runs this after the suite (scripts/test.sh); it needs the substrate no more than
# those tests do. The venv is made with uv (from PyPI, beside it): it resolves and installs the
# ~130 packages in about a minute where pip takes ten on a busy 2-core machine.
# NPA_FLOORS_VENV moves the venv (default: a temporary folder, removed after).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${NPA_FLOORS_VENV:-}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
VENV=${VENV:-$WORK/floors}
PY=${PYTHON:-python3}
echo "==> the dependency floors in $VENV"
"$PY" -m pip install -q --disable-pip-version-check --target "$WORK/uv" uv 2>&1 \
  | grep -v "is ignored: it is neither" >&2 || true
UV="$WORK/uv/bin/uv"
[[ -x $UV ]] || { echo "could not install uv from PyPI" >&2; exit 1; }
rm -rf "$VENV"
"$UV" venv -q --python "$PY" "$VENV"
"$PY" scripts/floors.py >"$VENV/floors.txt"
sed 's/^/    /' "$VENV/floors.txt"
if ! "$UV" pip install -q --python "$VENV/bin/python" -c "$VENV/floors.txt" -e '.[test]' \
  >"$VENV/install.log" 2>&1; then
  cat "$VENV/install.log" >&2
  echo "the floors above do not install together: raise the one named in pyproject.toml" >&2
  exit 1
fi
"$UV" pip check -q --python "$VENV/bin/python"
"$PY" scripts/floors.py --check "$VENV/bin/python"
echo "==> the cloud, state and SDK tests on the floors"
# Without the Terraform-driven (and other slow) ones by default: they reach the same library
# calls as the fast tests of their modules, and cost most of the time (arguments replace it).
MARKS=(-m "not slow and not terraform")
[[ $# -gt 0 ]] && MARKS=()
NPA_REQUIRE_SUBSTRATE=${NPA_REQUIRE_SUBSTRATE:-1} "$VENV/bin/pytest" -q -p no:cacheprovider \
  -n "${NPA_TEST_WORKERS:-2}" --dist loadgroup "${MARKS[@]}" tests/cloud tests/state tests/sdk "$@"
