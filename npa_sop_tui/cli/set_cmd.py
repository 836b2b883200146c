"""`npa soperator set --spec F KEY=VALUE…`: change fields of a spec file in place.

The same round-trip writer as the app's wizard (`spec/roundtrip.py`): comments, key order,
quoting and flow style are kept and only the changed lines change. The result is validated
first; when it is invalid nothing is written (exit 2, every problem with file:line).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from npa_sop_tui.cli.common import add_output_flag, emit_json, say, wants_json


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "set",
        help="change fields of a spec file in place (comments and layout kept)",
        description=(
            "Set fields of a cluster spec, e.g. `workers[1].size=4` or "
            "`control_plane.login.preset=32vcpu-128gb`. Values are read as YAML "
            "(4 is a number, true a boolean; version fields stay strings). Only the changed "
            "lines of the file change. The result is validated first: if it is invalid, "
            "nothing is written and the problems are listed (exit 2)."
        ),
    )
    p.add_argument("--spec", "-f", required=True, metavar="FILE", help="cluster spec YAML")
    p.add_argument("assignments", nargs="*", metavar="KEY=VALUE", help="fields to set")
    p.add_argument(
        "--unset", action="append", default=[], metavar="KEY", help="remove a field (repeatable)"
    )
    p.add_argument("--dry-run", action="store_true", help="show the change, write nothing")
    p.add_argument(
        "--capacity-block-group",
        action="append",
        default=[],
        metavar="POOL=ID",
        help="reserved capacity for a GPU pool, for validation only (never written)",
    )
    add_output_flag(p)
    p.set_defaults(handler=cmd_set)


def parse_assignment(text: str) -> tuple[str, Any]:
    """`workers[1].size=4` → ("workers[1].size", 4); the value is read as YAML."""
    import yaml

    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.spec.model import VERSION_FIELDS
    from npa_sop_tui.spec.spec_paths import PathError, parse_path

    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise UsageError(
            f"{text!r} is not KEY=VALUE",
            hint="for example workers[1].size=4 or control_plane.login.preset=32vcpu-128gb",
        )
    try:
        parts = parse_path(key)
    except PathError as exc:
        raise UsageError(str(exc), hint="keys look like workers[1].size") from None
    if raw.strip() == "":
        raise UsageError(f"{key}= has no value", hint=f"to remove the field use --unset {key}")
    if parts[-1] in VERSION_FIELDS:
        return key, raw.strip().strip("\"'")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        value = raw  # not YAML on its own (e.g. `a: b`): take the text as it is
    return key, value


def cmd_set(args: argparse.Namespace) -> int:
    from npa_sop_tui.cli.common import capacity_flag
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.home.file_edit import editing

    if not args.assignments and not args.unset:
        raise UsageError("nothing to set", hint="pass KEY=VALUE (or --unset KEY)")
    changes = [parse_assignment(a) for a in args.assignments]
    capacity = capacity_flag(args)
    # Held from the read to the write: a second `set` of the same file waits, then reads
    # what this one wrote, so neither edit is lost (`file_edit`).
    with editing(args.spec):
        return _edit(args, changes, capacity)


def _edit(
    args: argparse.Namespace, changes: list[tuple[str, Any]], capacity: dict[str, str] | None
) -> int:
    from npa_sop_tui.errors import EXIT_BAD_INPUT, UsageError
    from npa_sop_tui.spec.findings import summary_line
    from npa_sop_tui.spec.model import SpecError
    from npa_sop_tui.spec.roundtrip import SpecDocument
    from npa_sop_tui.spec.spec_paths import PathError

    doc = SpecDocument.read(args.spec)
    try:
        for key, value in changes:
            doc.set(key, value)
        for key in args.unset:
            doc.delete(key)
    except PathError as exc:
        raise UsageError(f"{args.spec}: {exc}") from None
    try:
        doc.validated_text(capacity=capacity)
    except SpecError as exc:
        if wants_json(args):
            emit_json(
                {
                    "ok": False,
                    "error": type(exc).__name__,
                    "message": f"{args.spec} not written: the result would be invalid",
                    "findings": [f.to_dict() for f in exc.findings],
                    "diff": doc.diff(),
                }
            )
        else:
            for finding in exc.findings:
                say(finding.render(), err=True)
            sys.stderr.write(
                f"{args.spec}: not written: the result would be invalid "
                f"({summary_line(exc.findings)}); line numbers are those of the changed file\n"
            )
        return EXIT_BAD_INPUT
    diff = doc.diff()
    changed = list(doc.changed)
    written = bool(diff) and not args.dry_run
    if written:
        doc.write(capacity=capacity)
    if wants_json(args):
        emit_json(
            {"ok": True, "path": args.spec, "changed": changed, "written": written, "diff": diff}
        )
        return 0
    if not diff:
        print(f"{args.spec}: already so; nothing to change")
        return 0
    sys.stdout.write(diff)
    verb = "would change" if args.dry_run else "changed"
    print(f"{args.spec}: {verb} {', '.join(changed)}")
    return 0
