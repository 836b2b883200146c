"""Score a finished `mutmut run` per module, against the target and the equivalent-mutant list.

Run from the repository root after `mutmut run` (scripts/mutation.sh does both). Prints one line
per mutated module, `mutation score <module>: <killed>/<total> = <pct>%`, and exits 1 when a
module is below the target or the equivalent-mutant list does not match this run.

A mutant counts as killed when a test failed or it timed out (a mutant that hangs is caught).
Survivors and mutants no test reaches count against the score. Mutants listed in
tests/mutation/equivalent.txt are left out of both numbers, but only while the listed diff line
still matches and the mutant still survives, so an entry cannot hide a different mutant after
the code moves.

`--survivors FILE` writes every counted survivor's diff there, for writing the missing tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

TARGET = 90.0
EQUIVALENT_FILE = Path("tests/mutation/equivalent.txt")
KILLED = {1, 3, 24, -24, 152, 255, 36}  # a failing test, pytest's own error, or a timeout
NOT_REACHED = {33, 5}


def killed(code: int | None) -> bool:
    """A failing run: one of KILLED, or a test process that died of a signal (-N: e.g. a
    mutated liveness probe that sends SIGHUP instead of signal 0 hangs up pytest itself)."""
    return code in KILLED or (code is not None and code < 0)


@dataclass(frozen=True)
class Equivalent:
    mutant: str
    line: str  # the mutated line, stripped, as `mutmut show` prints it after "+"
    reason: str
    lineno: int


def module_paths() -> list[str]:
    config = tomllib.loads(Path("pyproject.toml").read_text("utf-8"))
    return list(config["tool"]["mutmut"]["only_mutate"])


def load_equivalents(path: Path) -> list[Equivalent]:
    """`<mutant> | <mutated line> | <reason>` per line; `#` starts a comment."""
    out: list[Equivalent] = []
    for lineno, raw in enumerate(path.read_text("utf-8").splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        # the mutated line may itself contain " | " (a set union); the reason must not
        mutant, _, rest = raw.partition(" | ")
        line, _, reason = rest.rpartition(" | ")
        parts = [mutant.strip(), line.strip(), reason.strip()]
        if not all(parts):
            raise SystemExit(f"{path}:{lineno}: expected `<mutant> | <mutated line> | <reason>`")
        out.append(Equivalent(parts[0], parts[1], parts[2], lineno))
    return out


def mutated_line(mutant: str, source_path: str) -> str:
    """The mutant's first added line, stripped, or `deleted: <first removed line>` for a
    mutant that only removes ("" if mutmut cannot show it)."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    try:
        diff = get_diff_for_mutant(mutant, path=source_path).splitlines()
    except Exception:  # the mutant is gone: the caller reports the entry as stale
        return ""
    added = [ln[1:].strip() for ln in diff if ln.startswith("+") and not ln.startswith("+++")]
    removed = [ln[1:].strip() for ln in diff if ln.startswith("-") and not ln.startswith("---")]
    if added and added[0]:
        return added[0]
    return f"deleted: {removed[0]}" if removed else ""


def diff_of(mutant: str, source_path: str) -> str:
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    return get_diff_for_mutant(mutant, path=source_path)


def exit_codes(source_path: str) -> dict[str, int | None]:
    meta = Path("mutants") / f"{source_path}.meta"
    if not meta.exists():
        raise SystemExit(f"no results for {source_path}: run `mutmut run` first ({meta})")
    return json.loads(meta.read_text("utf-8"))["exit_code_by_key"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--survivors", type=Path, help="write the counted survivors' diffs here")
    parser.add_argument("--target", type=float, default=TARGET)
    parser.add_argument("--module", help="score only this listed path (a per-module run)")
    args = parser.parse_args(argv)
    paths = [args.module] if args.module else module_paths()
    prefixes = tuple(p.removesuffix(".py").replace("/", ".") + "." for p in paths)

    equivalents = load_equivalents(EQUIVALENT_FILE) if EQUIVALENT_FILE.exists() else []
    by_name = {e.mutant: e for e in equivalents}
    used: set[str] = set()
    problems: list[str] = []
    survivor_diffs: list[str] = []
    ok = True
    for source_path in paths:
        codes = exit_codes(source_path)
        module = source_path.removesuffix(".py").replace("/", ".")
        tally: Counter[str] = Counter()
        for mutant, code in codes.items():
            entry = by_name.get(mutant)
            if entry is not None:
                used.add(mutant)
                if killed(code):
                    problems.append(
                        f"{EQUIVALENT_FILE}:{entry.lineno}: {mutant} is killed now; remove the "
                        "entry"
                    )
                elif mutated_line(mutant, source_path) != entry.line:
                    problems.append(
                        f"{EQUIVALENT_FILE}:{entry.lineno}: {mutant} is no longer "
                        f"`{entry.line}` (the code moved); re-check it and update the entry"
                    )
                else:
                    tally["equivalent"] += 1
                    continue
            if killed(code):
                tally["killed"] += 1
            else:
                tally["not reached" if code in NOT_REACHED else "survived"] += 1
                if args.survivors:
                    diff = diff_of(mutant, source_path)
                    survivor_diffs.append(f"# {mutant} (exit {code})\n{diff}")
        total = tally["killed"] + tally["survived"] + tally["not reached"]
        pct = 100.0 * tally["killed"] / total if total else 100.0
        print(f"mutation score {module}: {tally['killed']}/{total} = {pct:.1f}%")
        details = [f"{tally[k]} {k}" for k in ("survived", "not reached", "equivalent") if tally[k]]
        if details:
            print(f"    ({', '.join(details)})")
        ok &= pct >= args.target
    for entry in equivalents:
        if entry.mutant not in used and entry.mutant.startswith(prefixes):
            problems.append(
                f"{EQUIVALENT_FILE}:{entry.lineno}: {entry.mutant} is not a mutant of this run"
            )
    if args.survivors:
        args.survivors.write_text("\n".join(survivor_diffs), "utf-8")
    for problem in problems:
        print(problem, file=sys.stderr)
    count = sum(1 for e in equivalents if e.mutant in used)
    mine = sum(1 for e in equivalents if e.mutant.startswith(prefixes))
    print(f"equivalent mutants listed: {mine} ({EQUIVALENT_FILE}), applied: {count}")
    if not ok:
        print(f"below target: every module needs {args.target:g}%", file=sys.stderr)
    return 0 if ok and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
