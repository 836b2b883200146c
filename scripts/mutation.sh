#!/usr/bin/env bash
# Mutation testing: do the tests catch a broken rule?
#
# mutmut (the `dev` extra) changes the code of the modules listed in pyproject.toml (the spec
# rules, the renderer, the Slurm parsers, the verdict, secrets, locks, teardown, …) one small
# edit at a time (`<` to `<=`, a message text, `and` to `or`, …) and runs every test that
# reaches the edited function, in any folder; a mutant that leaves them green is a rule the
# tests cannot tell from a broken one. The modules
# and the test selection are [tool.mutmut] in pyproject.toml; mutants that cannot change
# behaviour are listed, each with its reason, in tests/mutation/equivalent.txt.
#
# Prints `mutation score <module>: <killed>/<total> = <pct>%` per module and exits 1 when one
# is below 90 %. Not part of CI: it takes hours on 2 cores (`bash scripts/mutation.sh`, README).
# Options: --keep reuses ./mutants from the last run (only changed functions are re-mutated;
# survivors are not re-tested), --jobs N sets the worker count (default 2), --module PATH
# mutates that listed module alone, judged by the tests that import it or a direct importer
# of it (scripts/mutation_module.py: minutes instead of hours; a lower bound of the score),
# --no-slurm (with --module) leaves out the tests on the shared Slurm labs, --direct keeps
# only the test files importing the module itself (a module every lifecycle test reaches),
# --tests FILE... (with --module) judges by those test files alone (still a lower bound).
# --each runs --module --no-slurm for every listed module in turn, each judged by the test
# files [tool.npa-mutation.tests] names for it (else its importers' tests), keeps each
# module's log and survivors in mutants-each/ and ends with every score line and the time
# taken: exit 1 when one is below 90 %.
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
each=0
jobs=2
module=""
narrow=()
while (($#)); do
  case "$1" in
    --keep) keep=1 ;;
    --each) each=1 ;;
    --jobs) jobs="$2"; shift ;;
    --module) module="$2"; shift ;;
    --no-slurm) narrow+=(--no-slurm) ;;
    --direct) narrow+=(--direct) ;;
    --tests) narrow+=(--tests); shift; while (($#)) && [[ "$1" != --* ]]; do narrow+=("$1"); shift; done; continue ;;
    *) echo "usage: scripts/mutation.sh [--keep] [--jobs N] [--each | --module PATH [--no-slurm] [--direct] [--tests FILE...]]" >&2
       exit 2 ;;
  esac
  shift
done

if [[ ! -x .venv/bin/mutmut ]]; then
  echo "==> pip install -e .[test,dev]"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test,dev]'
fi

if ((each)); then
  plan=$(.venv/bin/python scripts/mutation_module.py --plan)
  rm -rf mutants-each && mkdir mutants-each
  status=0
  while IFS=$'\t' read -r listed tests; do
    name=${listed//\//.}
    echo "==> ${listed}"
    # shellcheck disable=SC2086 # the test files are one space-separated field of the plan
    bash "$0" --jobs "$jobs" --module "$listed" --no-slurm --tests $tests >"mutants-each/${name}.log" 2>&1 || status=1
    cp mutants/survivors.txt "mutants-each/${name}.survivors.txt" 2>/dev/null || true
    grep -E '^(mutation score|    done in)' "mutants-each/${name}.log" | tee -a mutants-each/scores.txt \
      || { echo "    no score: see mutants-each/${name}.log" | tee -a mutants-each/scores.txt; status=1; }
  done <<<"$plan"
  echo "==> every listed module (mutants-each/scores.txt)"
  grep '^mutation score' mutants-each/scores.txt
  # The wall time is the budget's figure (under 2 hours on 2 cores) and grows with whatever
  # else the machine runs; the CPU time (every module's, its tests and Terraform included) is
  # what the run itself used.
  awk -v wall="$SECONDS" '/done in/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+m[0-9]+s$/ && i > 4) {
        split($i, t, /[ms]/); cpu += t[1] * 60 + t[2] } }
      END { printf "==> --each: %d min wall; CPU %d min\n", wall / 60, cpu / 60 }' \
    mutants-each/scores.txt | tee -a mutants-each/scores.txt
  exit "$status"
fi
((keep)) || rm -rf mutants

echo "==> mutmut run on ${jobs} workers (nice 10; results in ./mutants, browse with .venv/bin/mutmut browse)"
# Low priority: on a shared machine the mutants wait, not other people's tests. The
# per-mutant progress goes to a log; the scores below are the result. CPU time is reported
# beside the wall time because a loaded machine stretches the latter.
TIMEFORMAT="    done in %0lR wall; CPU %0lU user + %0lS system"
status=0
run=(.venv/bin/mutmut run --max-children "$jobs")
[[ -z "$module" ]] || run=(.venv/bin/python scripts/mutation_module.py "$module" --jobs "$jobs" "${narrow[@]}")
{ time nice -n 10 "${run[@]}" >mutants.log 2>&1; } 2>mutants.time || status=$?
if ((status)); then
  tail -c 3000 mutants.log | tr '\r' '\n' | tail -n 30 >&2  # the spinner rewrites one line
  echo "mutmut run failed (exit ${status}); full log: mutants.log" >&2
  exit 1
fi
mv mutants.log mutants/run.log
cat mutants.time && rm mutants.time

.venv/bin/python scripts/mutation_report.py --survivors mutants/survivors.txt ${module:+--module "$module"}
