"""Which recipe a spec deploys on, and whether that recipe and Terraform fit the spec.

Selection: `--terraform-dir` (or config `recipe.path`) wins; else `--recipe-ref` / config
`recipe.ref`; else the recipe table's default commit for the spec's `slurm_operator_version`.
Before Terraform runs, `check_recipe` compares the recipe's own version (read from its example
terraform.tfvars) with the spec, and its `required_version` with the Terraform binary. A
mismatch is a `UsageError` (exit 2) naming both sides and the fix.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.recipe.table import DEFAULT_RECIPE_REF, SHA_RE, load_table

EXAMPLE = Path("installations") / "example"
_VERSION = re.compile(r'slurm_operator_version"?\s*[=:]\s*"([^"]+)"')


def recipe_version(example_dir: Path) -> str | None:
    """The Soperator version a recipe's example terraform.tfvars ships, if it says."""
    for name in ("terraform.tfvars", "terraform.tfvars.json"):
        path = example_dir / name
        if path.is_file():
            match = _VERSION.search(path.read_text(encoding="utf-8"))
            if match:
                return match.group(1)
    return None


def check_ref(ref: str) -> str:
    """A `--recipe-ref` value: a full commit SHA (moving refs would change under the table)."""
    ref = ref.strip().lower()
    if not SHA_RE.match(ref):
        raise UsageError(
            f"recipe ref {ref!r} is not a full 40-hex commit SHA",
            hint="branches and tags move; name the commit, e.g. one from docs/spec.md",
        )
    return ref


def ref_for(spec_version: str, explicit: str | None = None, configured: str | None = None) -> str:
    """The commit to deploy: an explicit ref, else the table's default for the version (a
    configured ref counts only when it ships that version, so an old config pin does not
    silently deploy another version), else the configured ref."""
    if explicit:
        return check_ref(explicit)
    table = load_table()
    entry = table.versions.get(spec_version)

    if configured and configured != DEFAULT_RECIPE_REF:  # the default decides nothing
        info = table.commit(configured)
        if info is None or info.version == spec_version or entry is None or not entry.default:
            return check_ref(configured)
    if entry is None or not entry.default:
        raise UsageError(
            f"no known upstream recipe commit ships Soperator {spec_version}",
            hint="pass --recipe-ref SHA (or recipe.ref in ~/.npa/config.yaml) naming a commit "
            f"that ships {spec_version}, or --terraform-dir with such a checkout",
        )
    return entry.default


def check_recipe(
    *,
    example_dir: Path,
    spec_version: str,
    terraform_version: str,
    required: str | None,
    ref: str | None = None,
) -> None:
    """Refuse a recipe that ships another Soperator version, or a Terraform it does not allow."""
    from npa_sop_tui.terraform.runner import satisfies

    where = f"the recipe at {example_dir.parent.parent}" + (f" ({ref[:12]})" if ref else "")
    found = recipe_version(example_dir)
    if found is None:
        raise UsageError(
            f"{where} does not say which Soperator version it ships (no "
            "slurm_operator_version in installations/example/terraform.tfvars)",
            hint=f"point --terraform-dir at a nebius-solutions-library checkout that ships "
            f"Soperator {spec_version}, or drop it to use the table's commit",
        )
    if found != spec_version:
        default = load_table().versions.get(found)
        raise UsageError(
            f"{where} ships Soperator {found}, but the spec asks for {spec_version}",
            hint=f"set slurm_operator_version: {found!r} in the spec, or use a recipe that "
            f"ships {spec_version} (--recipe-ref / --terraform-dir)"
            + (f"; {found} is commit {default.default}" if default and default.default else ""),
        )
    if required and not satisfies(terraform_version, required):
        raise UsageError(
            f"{where} requires Terraform {required}, but the Terraform found is "
            f"{terraform_version}",
            hint=f"install a Terraform that satisfies {required} and set NPA_TERRAFORM_BIN to it",
        )


def settings_for(settings: Any, spec_version: str | None, explicit_ref: str | None) -> Any:
    """The recipe settings with the commit chosen for the spec (a local path needs none)."""
    if settings.path or spec_version is None:
        if explicit_ref and not settings.path:
            return replace(settings, ref=check_ref(explicit_ref))
        return settings
    return replace(settings, ref=ref_for(spec_version, explicit_ref, settings.ref))


def check_recipe_for_spec(recipe: Any, spec: Any, binary: Any) -> str | None:
    """`check_recipe` for a resolved recipe; returns the commit whose contract to render
    (a stand-in's marker commit, or the checkout's HEAD)."""
    from npa_sop_tui.terraform.runner import required_version

    check_recipe(
        example_dir=recipe.example_dir,
        spec_version=spec.slurm_operator_version,
        terraform_version=binary.version,
        required=required_version(recipe.example_dir),
        ref=recipe.ref,
    )
    ref = recipe.standin_commit if recipe.is_standin else recipe.ref
    return ref if isinstance(ref, str) and SHA_RE.match(ref) else None


def render_ref(explicit: str | None, configured: str | None) -> str | None:
    """The commit whose contract a render follows when no recipe is resolved: an explicit
    ref; a configured pin only where the table has a contract for it (an old default pin of
    another version must not change what a spec renders for); else None (the spec's version
    picks)."""
    if explicit:
        return check_ref(explicit)
    if not configured or configured == DEFAULT_RECIPE_REF:
        return None
    info = load_table().commit(configured)
    return configured if info is not None and info.has_contract else None
