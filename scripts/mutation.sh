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
# --each runs --module --no-slurm for every listed module, each judged by the test files
# [tool.npa-mutation.tests] names for it (else its importers' tests), keeps each module's log
# and survivors in mutants-each/ and ends with every score line and the time taken: exit 1
# when one is below 90 %. It runs --lanes N modules side by side (default 2, one worker each
# unless --jobs says otherwise), each lane in its own copy of the tree under mutants-each/:
# a module's run spends minutes on one core (mutants generated, every judging test traced
# once, then run clean), and the other lane fills the second core meanwhile. --only REGEX
# keeps the listed modules whose path matches.
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
each=0
jobs=""
lanes=2
only=""
module=""
narrow=()
while (($#)); do
  case "$1" in
    --keep) keep=1 ;;
    --each) each=1 ;;
    --jobs) jobs="$2"; shift ;;
    --lanes) lanes="$2"; shift ;;
    --only) only="$2"; shift ;;
    --module) module="$2"; shift ;;
    --no-slurm) narrow+=(--no-slurm) ;;
    --direct) narrow+=(--direct) ;;
    --tests) narrow+=(--tests); shift; while (($#)) && [[ "$1" != --* ]]; do narrow+=("$1"); shift; done; continue ;;
    *) echo "usage: scripts/mutation.sh [--keep] [--jobs N] [--each [--lanes N] [--only REGEX] | --module PATH [--no-slurm] [--direct] [--tests FILE...]]" >&2
       exit 2 ;;
  esac
  shift
done

if [[ ! -x .venv/bin/mutmut ]]; then
  echo "==> pip install -e .[test,dev]"
  .venv/bin/pip install -q --disable-pip-version-check -e '.[test,dev]'
fi

if ((each)); then
  plan=$(.venv/bin/python scripts/mutation_module.py --plan | grep -E -- "${only:-.}" || true)
  [[ -n "$plan" ]] || { echo "no listed module matches ${only}" >&2; exit 2; }
  rm -rf mutants-each && mkdir mutants-each
  printf '%s\n' "$plan" >mutants-each/plan.txt
  echo 0 >mutants-each/taken
  : >mutants-each/failed  # the modules whose run failed: below 90 %, a stale equivalent, a crash
  : >mutants-each/scores.txt
  # One lane: its own copy of the tree (mutmut works in ./mutants of where it runs), then the
  # next module nobody has taken, until none is left.
  lane() {
    local dir="mutants-each/lane-$1" n listed tests name
    mkdir -p "$dir"
    tar --exclude=./.git --exclude=./.venv --exclude='./mutants*' -cf - . | tar -xf - -C "$dir"
    ln -s "$PWD/.venv" "$dir/.venv"
    while true; do
      n=$(flock mutants-each/taken sh -c 'n=$(($(cat mutants-each/taken) + 1)); echo $n >mutants-each/taken; echo $n')
      listed="" tests=""
      IFS=$'\t' read -r listed tests < <(sed -n "${n}p" mutants-each/plan.txt) || true
      [[ -n "$listed" ]] || return 0
      name=${listed//\//.}
      echo "==> ${listed} (lane $1)"
      # shellcheck disable=SC2086 # the test files are one space-separated field of the plan
      (cd "$dir" && bash scripts/mutation.sh --jobs "${jobs:-1}" --module "$listed" --no-slurm \
        --tests $tests) >"mutants-each/${name}.log" 2>&1 \
        || echo "$listed" | flock mutants-each/failed tee -a mutants-each/failed >/dev/null
      cp "$dir/mutants/survivors.txt" "mutants-each/${name}.survivors.txt" 2>/dev/null || true
      { grep -E '^(mutation score|    done in)' "mutants-each/${name}.log" \
          || echo "    no score for ${listed}: see mutants-each/${name}.log"; } \
        | flock mutants-each/scores.txt tee -a mutants-each/scores.txt
    done
  }
  for ((i = 1; i <= lanes; i++)); do lane "$i" & done
  wait
  rm -rf mutants-each/lane-*
  echo "==> every listed module (mutants-each/scores.txt)"
  status=0
  grep '^mutation score' mutants-each/scores.txt | sort || true
  # A module run exits 1 below 90 % (or on a stale equivalent, or a crash); one that never
  # printed its score (a lane that died) leaves the count short.
  [[ $(grep -c '^mutation score' mutants-each/scores.txt) -eq $(wc -l <mutants-each/plan.txt) ]] \
    || status=1
  if [[ -s mutants-each/failed ]]; then
    status=1
    echo "==> these modules' runs failed (their logs in mutants-each/ say why):"
    sed 's/^/    /' mutants-each/failed
  fi
  # The wall time is the budget's figure (under 2 hours on 2 cores) and grows with whatever
  # else the machine runs; the CPU time (every module's, its tests and Terraform included) is
  # what the run itself used.
  awk -v wall="$SECONDS" -v lanes="$lanes" '/done in/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+m[0-9]+s$/ && i > 4) {
        split($i, t, /[ms]/); cpu += t[1] * 60 + t[2] } }
      END { printf "==> --each: %d min wall (%d lanes); CPU %d min\n", wall / 60, lanes, cpu / 60 }' \
    mutants-each/scores.txt | tee -a mutants-each/scores.txt
  exit "$status"
fi
((keep)) || rm -rf mutants

echo "==> mutmut run on ${jobs:-2} workers (nice 10; results in ./mutants, browse with .venv/bin/mutmut browse)"
# Low priority: on a shared machine the mutants wait, not other people's tests. The
# per-mutant progress goes to a log; the scores below are the result. CPU time is reported
# beside the wall time because a loaded machine stretches the latter.
TIMEFORMAT="    done in %0lR wall; CPU %0lU user + %0lS system"
status=0
run=(.venv/bin/mutmut run --max-children "${jobs:-2}")
[[ -z "$module" ]] || run=(.venv/bin/python scripts/mutation_module.py "$module" --jobs "${jobs:-2}" "${narrow[@]}")
{ time nice -n 10 "${run[@]}" >mutants.log 2>&1; } 2>mutants.time || status=$?
if ((status)); then
  tail -c 3000 mutants.log | tr '\r' '\n' | tail -n 30 >&2  # the spinner rewrites one line
  echo "mutmut run failed (exit ${status}); full log: mutants.log" >&2
  exit 1
fi
mv mutants.log mutants/run.log
cat mutants.time && rm mutants.time

.venv/bin/python scripts/mutation_report.py --survivors mutants/survivors.txt ${module:+--module "$module"}
