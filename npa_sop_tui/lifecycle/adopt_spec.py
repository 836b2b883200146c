"""An adopted installation's variables as a spec: built, checked against a render of itself,
and written as a cluster.yaml whose comments say what was defaulted and what is kept."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.recipe import adopted
from npa_sop_tui.safe_text import safe_text

if TYPE_CHECKING:
    from npa_sop_tui.environment import Environment
    from npa_sop_tui.recipe.source import Recipe
    from npa_sop_tui.spec.findings import Finding
    from npa_sop_tui.spec.model import SoperatorSpec

# What a default means, for the comments of the written file.
_DEFAULT_MEANS = {
    "root_login_ssh_public_key": "npa's key lookup decides (flag, environment, ~/.ssh)",
    "control_plane.controller.preset": "the sizing tier decides",
    "control_plane.login.preset": "16vcpu-64gb",
    "control_plane.accounting.preset": "the sizing tier decides",
    "jail_size_gib": "512 (the installation's jail is an existing filesystem)",
    "slurm_operator_version": "4.1.6",
    "k8s_version": "the recipe's default",
    "node_group_version": "the recipe's default",
}


@dataclass
class Reversed:
    spec: SoperatorSpec
    spec_yaml: str  # the spec as deployed (stored with the record)
    kept: list[str] = field(default_factory=list)
    kept_variables: list[str] = field(default_factory=list)
    defaulted: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    mismatch: list[tuple[str, Any, Any]] = field(default_factory=list)

    def annotated(self, install_dir: Path, variables_file: Path, npa: bool) -> str:
        """The cluster.yaml to hand the user: the spec, headed by what it cannot say."""
        who = "the existing npa deployed" if npa else "deployed with the recipe directly"
        lines = [
            f"# Adopted by `npa soperator adopt` on {time.strftime('%Y-%m-%d')} from a cluster "
            f"{who} in",
            f"#   {install_dir}",
            "# Terraform keeps running there with its own state; this file decides the fields",
            "# below from now on (npa soperator plan|deploy --spec this-file).",
        ]
        if self.defaulted:
            lines.append("# Not in the installation's variables, so defaulted:")
            lines += [f"#   {f}: {_DEFAULT_MEANS.get(f, 'the default')}" for f in self.defaulted]
        if self.mismatch:
            lines.append("# Kept as deployed, since this file cannot say it:")
            lines += [
                f"#   {where} = {_short(old)} (would be {_short(new)})"
                for where, old, new in self.mismatch
            ]
        if self.kept_variables:
            lines.append(
                "# Kept as deployed (recipe settings this file does not have; the variables as"
            )
            lines.append(f"# deployed are in {variables_file}):")
            lines += _wrapped(self.kept_variables)
        if self.findings:
            lines.append("# Findings (fix them before the next deploy):")
            lines += [f"#   {f.render()}" for f in self.findings]
        # one comment line each, whatever the paths and values carry (a newline in a folder
        # name must not end the comment and start YAML)
        return "\n".join(safe_text(line) for line in lines) + "\n" + self.spec_yaml


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _wrapped(names: list[str], width: int = 88) -> list[str]:
    out: list[str] = []
    line = "#  "
    for name in names:
        if len(line) + len(name) + 2 > width:
            out.append(line.rstrip(","))
            line = "#  "
        line += f" {name},"
    out.append(line.rstrip(","))
    return out


async def reverse(
    variables: dict[str, Any], identity: dict[str, str], recipe: Recipe, environment: Environment
) -> Reversed:
    from npa_sop_tui.recipe.compat import check_recipe_for_spec
    from npa_sop_tui.recipe.render import render
    from npa_sop_tui.spec.findings import errors_of
    from npa_sop_tui.spec.model import spec_from_mapping
    from npa_sop_tui.spec.validate import validate_spec
    from npa_sop_tui.spec.yaml_dump import dump_spec_yaml

    mapping, defaulted = adopted.spec_from_variables(variables, identity)
    try:
        spec = spec_from_mapping(mapping, source="the installation's variables", validate=False)
    except NpaError as exc:
        raise UsageError(
            f"the installation's variables cannot be written as a cluster spec: {exc.message}",
            hint="this recipe installation uses settings the spec has no field for",
        ) from None
    setup = await environment.terraform(recipe)
    ref = check_recipe_for_spec(recipe, spec, setup.binary)
    key = environment.root_login_key(spec, recipe)
    try:
        rendered = render(spec, recipe_ref=ref, root_login_key=key, validate=False)
    except NpaError as exc:
        raise UsageError(
            f"the spec read back from the installation does not render: {exc.message}",
            hint="adopt it with the recipe version it was deployed with",
        ) from None
    mismatch = adopted.mismatches(variables, rendered.tfvars)
    kept_variables = sorted(  # what a render from scratch would set otherwise
        name
        for name, value in variables.items()
        if name != adopted.WORKERS and rendered.tfvars.get(name, value) != value
    )
    findings = validate_spec(spec)
    return Reversed(
        spec=spec,
        spec_yaml=dump_spec_yaml(spec),
        kept=[where for where, _, _ in mismatch],
        kept_variables=kept_variables,
        defaulted=defaulted,
        findings=errors_of(findings),
        mismatch=mismatch,
    )
