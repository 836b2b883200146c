"""`npa soperator validate | render | schema | example`: the headless spec commands.

Nothing heavy is imported at module level; handlers import the spec core when they run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from npa_sop_tui.cli.common import (
    add_output_flag,
    add_recipe_ref_flag,
    capacity_flag,
    emit_json,
    open_environment,
    say,
    wants_json,
)

EXAMPLES = ("cluster", "cpu-minimal", "gpu-reserved")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "validate",
        help="check a cluster spec: every problem with file:line:col",
        description="Validate a npa.soperator/v0.0.1 spec. Exit 0 if usable, 2 if not.",
    )
    p.add_argument("--spec", "-f", required=True, metavar="FILE", help="cluster spec YAML")
    _capacity_flag(p)
    add_output_flag(p)
    p.set_defaults(handler=cmd_validate)

    p = subparsers.add_parser(
        "render",
        help="render a spec into the recipe's terraform.tfvars.json",
        description=(
            "Render a spec into the soperator recipe's variables (JSON). Identity goes to "
            "Terraform as TF_VAR_* environment, never into the file. Without --out the "
            "variables are printed with reservation IDs redacted."
        ),
    )
    p.add_argument("--spec", "-f", required=True, metavar="FILE", help="cluster spec YAML")
    p.add_argument("--out", metavar="DIR", help="write DIR/terraform.tfvars.json (mode 0600)")
    add_recipe_ref_flag(p)
    p.add_argument(
        "--recipe-version",
        metavar="VERSION",
        help="recipe/Soperator version to render for (default: the spec's)",
    )
    _capacity_flag(p)
    p.add_argument(
        "--root-login-ssh-public-key-file",
        metavar="FILE",
        help="public key for root on the login node (see docs/spec.md for the lookup order)",
    )
    add_output_flag(p)
    p.set_defaults(handler=cmd_render)

    p = subparsers.add_parser(
        "schema",
        help="print the JSON Schema of the spec (for editors)",
        description="Print the JSON Schema of npa.soperator/v0.0.1 specs.",
    )
    add_output_flag(p)
    p.set_defaults(handler=cmd_schema)

    p = subparsers.add_parser(
        "example",
        help="print an example spec",
        description="Print an example spec: " + ", ".join(EXAMPLES),
    )
    p.add_argument("name", nargs="?", default="cluster", choices=EXAMPLES)
    add_output_flag(p)
    p.set_defaults(handler=cmd_example)


def _capacity_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--capacity-block-group",
        action="append",
        default=[],
        metavar="POOL=ID",
        help="reserved capacity for a GPU pool (repeatable); also NPA_CAPACITY_BLOCK_GROUPS",
    )


def _err(line: str) -> None:
    say(line, err=True)


def cmd_validate(args: argparse.Namespace) -> int:
    from npa_sop_tui.errors import EXIT_BAD_INPUT
    from npa_sop_tui.spec.findings import summary_line
    from npa_sop_tui.spec.lean import load_spec  # the models' schema without pydantic's machinery
    from npa_sop_tui.spec.reading import SpecError

    capacity = capacity_flag(args)
    try:
        loaded = load_spec(args.spec, capacity=capacity)
    except SpecError as exc:
        if wants_json(args):
            emit_json(
                {
                    "ok": False,
                    "error": type(exc).__name__,
                    "message": exc.message,
                    "findings": [f.to_dict() for f in exc.findings],
                    "name": None,
                    "kube_context": None,
                    "sizing_tier": None,
                    "workers": [],
                }
            )
        else:
            for finding in exc.findings:
                _err(finding.render())
            _err(f"{args.spec}: invalid ({summary_line(exc.findings)})")
        return EXIT_BAD_INPUT
    spec = loaded.spec
    if wants_json(args):
        summary = spec.summary(capacity)
        emit_json(
            {
                "ok": True,
                "findings": [f.to_dict() for f in loaded.findings],
                "name": spec.name,
                "kube_context": spec.kube_context,
                "sizing_tier": spec.sizing_tier,
                "recipe_version": spec.slurm_operator_version,
                "worker_count": spec.worker_count,
                "workers": summary["workers"],
            }
        )
        return 0
    for finding in loaded.findings:
        say(finding.render())
    print(
        f"{args.spec}: ok ({summary_line(loaded.findings)}) — cluster {spec.name}, "
        f"{len(spec.workers)} pool(s), {spec.worker_count} worker(s), sizing tier "
        f"{spec.sizing_tier}, Soperator {spec.slurm_operator_version}, kube context "
        f"{spec.kube_context}"
    )
    return 0


def _render_key(environment: Any, spec: Any) -> tuple[Any, str | None]:
    """The root login key, or a placeholder marked as such (and the hint naming where a real
    one goes): rendering only shows what would be applied, and needs no key."""
    from npa_sop_tui.spec.sshkeys import KeyNotFound, placeholder_key

    try:
        return environment.root_login_key(spec), None
    except KeyNotFound as exc:
        return placeholder_key(), exc.hint or exc.message


def cmd_render(args: argparse.Namespace) -> int:
    from npa_sop_tui.errors import UsageError
    from npa_sop_tui.recipe.compat import render_ref
    from npa_sop_tui.recipe.render import TFVARS_FILE, render
    from npa_sop_tui.spec.model import load_spec

    capacity = capacity_flag(args)
    loaded = load_spec(args.spec, capacity=capacity)
    spec = loaded.spec
    environment = open_environment(args)
    key, missing = _render_key(environment, spec)
    rendered = render(
        spec,
        identity=environment.settings.identity(spec),
        recipe_version=args.recipe_version,
        recipe_ref=render_ref(*environment.recipe_refs()),
        capacity=capacity,
        root_login_key=key,
    )
    target: Path | None = None
    if args.out:
        try:
            target = rendered.write(args.out)
        except OSError as exc:
            # A bad --out is a user mistake; the write is atomic, so nothing was changed.
            out = Path(args.out)
            if out.exists() and not out.is_dir():
                raise UsageError(
                    f"--out {args.out} is a file, not a folder",
                    hint=f"--out names the folder that gets {TFVARS_FILE}",
                ) from None
            raise UsageError(
                f"--out {args.out}: cannot write {TFVARS_FILE} there: {exc.strerror or exc}",
                hint="--out takes a folder you can write to (it is created if missing); "
                "any previous file there is unchanged",
            ) from None
    env_view: dict[str, str | None] = {name: rendered.env.get(name) for name in rendered.env_names}
    if wants_json(args):
        doc: dict[str, Any] = {
            "ok": True,
            "path": str(target) if target else None,
            "name": spec.name,
            "kube_context": rendered.kube_context,
            "sizing_tier": rendered.sizing_tier,
            "recipe_version": rendered.recipe_version,
            "recipe_commit": rendered.recipe_commit,
            "env": env_view,
            "root_login_key": {
                "fingerprint": key.fingerprint,
                "source": key.source,
                "placeholder": missing is not None,
                **({"hint": missing} if missing is not None else {}),
            },
            "workers": spec.summary(capacity)["workers"],
            "findings": [f.to_dict() for f in loaded.findings],
        }
        if target is None:
            import json

            doc["tfvars"] = json.loads(rendered.redacted_json())
        emit_json(doc)
        return 0
    info = say if target else _err  # keep stdout pure JSON when the tfvars go there
    for finding in loaded.findings:
        info(finding.render())
    if target is None:
        sys.stdout.write(rendered.redacted_json())
    else:
        info(f"wrote {target} (mode 0600)")
    if missing is not None:
        info(f"root login key: a PLACEHOLDER (no SSH public key found); deploy needs one: "
             f"{missing}")  # fmt: skip
    info(f"kube context:   {rendered.kube_context}")
    info(f"sizing tier:    {rendered.sizing_tier}")
    info(f"recipe version: {rendered.recipe_version} (contract of {rendered.recipe_commit})")
    info(f"root login key: {key.describe()}")
    info("from the environment (TF_VAR_*, not in the file):")
    for name, value in env_view.items():
        shown = "(not set; resolved at deploy)" if value is None else repr(value)
        info(f"  {name} = {shown}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from npa_sop_tui.spec.model import API_VERSION, SoperatorSpec

    schema = SoperatorSpec.model_json_schema(by_alias=True)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://nebius.com/schemas/{API_VERSION}.json",
        **schema,
        "title": f"{API_VERSION} cluster spec",
    }
    sys.stdout.write(json.dumps(schema, indent=None if wants_json(args) else 2) + "\n")
    return 0


def example_text(name: str) -> str:
    from importlib import resources

    return (
        resources.files("npa_sop_tui.spec.data").joinpath(f"example-{name}.yaml").read_text("utf-8")
    )


def cmd_example(args: argparse.Namespace) -> int:
    text = example_text(args.name)
    if wants_json(args):
        from npa_sop_tui.spec.model import parse_spec_text

        loaded = parse_spec_text(text, source=f"example-{args.name}.yaml")
        emit_json(
            {
                "ok": True,
                "name": args.name,
                "yaml": text,
                "spec": loaded.spec.model_dump(mode="json", by_alias=True, exclude_unset=True),
            }
        )
        return 0
    sys.stdout.write(text)
    return 0
