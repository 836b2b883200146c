"""Run mutmut on ONE module of [tool.mutmut], judged by the tests that can reach it by import.

`scripts/mutation.sh` judges every listed module by the whole test selection at once; on a
shared 2-core machine that first full run (mutmut traces every test to map functions to the
tests that call them) takes hours. This runs one module at a time instead:

- only that module is mutated;
- the tests are every test file that imports the module itself, or a module that imports it
  directly (read statically from the import statements; the mirrored tests, the callers'
  tests and the CLI tests of its commands), with `[tool.mutmut]`'s own pytest arguments;
- mutmut then judges each mutant by every one of those tests that reaches its function.

A test left out can only kill more mutants, never fewer, so the score printed here is a lower
bound of the all-tests score. Usage (from the repository root; `scripts/mutation.sh --module
PATH` wraps it): `python scripts/mutation_module.py npa_sop_tui/status/hostlist.py [--jobs N]
[--list] [--no-slurm]` (`--list` prints the chosen test files and stops; `--no-slurm` also
leaves out the tests on the shared Slurm labs, which wait for a free lab per test: still a
lower bound). `--tests FILE...` judges by those test files alone (a module whose importers'
tests each run real Terraform for minutes: say which files in the figure; a lower bound too).

`--plan` prints, for `scripts/mutation.sh --each`, one line per listed module: the module, a
tab, and the test files judging it: the files `[tool.npa-mutation.tests]` names for it, else
the test files importing the module or a direct importer of it.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE = "npa_sop_tui"


@cache
def _imported_modules(path: Path) -> frozenset[str]:
    """Every module a test file names in its imports (read once per file: `--plan` asks for
    each listed module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return frozenset(found)


@cache
def _graph() -> Any:
    import grimp

    return grimp.build_graph(PACKAGE, cache_dir=None)


def tests_reaching(module_path: str, *, direct: bool = False) -> list[str]:
    """Test files importing the module or one of its direct importers (`direct`: the
    module itself only)."""
    graph = _graph()
    module = module_path.removesuffix(".py").replace("/", ".")
    if module not in graph.modules:
        raise SystemExit(f"{module_path}: not a module of {PACKAGE}")
    near = {module} if direct else graph.find_modules_that_directly_import(module) | {module}
    tests = sorted(Path("tests").rglob("test_*.py"))
    return [str(t) for t in tests if _imported_modules(t) & near]


def _pyproject() -> dict[str, Any]:
    return tomllib.loads(Path("pyproject.toml").read_text("utf-8"))


def plan() -> list[tuple[str, list[str]]]:
    """Every module of [tool.mutmut] only_mutate with the test files judging it one at a time.

    A module named in [tool.npa-mutation.tests] gets those files (or folders): the importers'
    tests of a module every lifecycle test reaches re-run real Terraform per mutant (hours).
    A name there that is not a listed module, or a test file that does not exist, stops the
    plan: a renamed file would otherwise judge a module by nothing."""
    tool = _pyproject()["tool"]
    listed: list[str] = tool["mutmut"]["only_mutate"]
    chosen: dict[str, list[str]] = tool.get("npa-mutation", {}).get("tests", {})
    if unknown := sorted(set(chosen) - set(listed)):
        raise SystemExit(f"[tool.npa-mutation.tests] names modules mutmut does not list: {unknown}")
    if missing := sorted(f for files in chosen.values() for f in files if not Path(f).exists()):
        raise SystemExit(f"[tool.npa-mutation.tests] names missing test files: {missing}")
    return [(module, chosen.get(module) or tests_reaching(module)) for module in listed]


def _marker_expression(args: list[str]) -> str:
    """The configured `-m` expression ("" → every test)."""
    marks = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-m"]
    return marks[-1] if marks else "not slurm or slurm"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", nargs="?", help="a path listed in [tool.mutmut] only_mutate")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="print the test files and stop")
    parser.add_argument(
        "--no-slurm",
        action="store_true",
        help="leave out the tests on the shared Slurm labs (they wait for a lab per test)",
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="only the test files that import the module itself (for a module every "
        "lifecycle test reaches, such as redact.py)",
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        metavar="FILE",
        help="judge by these test files only (instead of the importers' tests)",
    )
    parser.add_argument(
        "--plan",
        action="store_true",
        help="print each listed module and its test files (tab-separated) and stop",
    )
    args = parser.parse_args(argv)
    if args.plan:
        for module, tests in plan():
            print(f"{module}\t{' '.join(tests)}")
        return 0
    if args.module is None:
        parser.error("a module (or --plan) is required")
    listed = _pyproject()["tool"]["mutmut"]
    if args.module not in listed["only_mutate"]:
        raise SystemExit(f"{args.module} is not listed in [tool.mutmut] only_mutate")
    tests = args.tests or tests_reaching(args.module, direct=args.direct)
    if args.list or not tests:
        print("\n".join(tests) or f"no test imports {args.module}")
        return 0 if tests else 1

    from mutmut import __main__ as mutmut_cli
    from mutmut.configuration import config

    cfg = config()
    cfg.only_mutate = [args.module]
    cfg.pytest_add_cli_args_test_selection = tests
    if args.no_slurm:  # a later -m replaces the configured one
        marks = _marker_expression(cfg.pytest_add_cli_args)
        cfg.pytest_add_cli_args = [*cfg.pytest_add_cli_args, "-m", f"({marks}) and not slurm"]
    print(f"==> {args.module}: {len(tests)} test files", flush=True)
    mutmut_cli.cli(["run", "--max-children", str(args.jobs)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
