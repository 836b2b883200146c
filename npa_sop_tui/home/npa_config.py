"""The existing npa's sections of `config.yaml`, read beside ours (nothing here writes).

The existing npa (nebius-physical-ai) keeps one stanza per Nebius project in the same file:

    projects:
      dev: {project_id: project-…, tenant_id: tenant-…, region: eu-north1, workbenches: {…}}
    default_project: dev

and, from older versions, `workbenches: {<name>: {environment: {project_id, …}}}` or a single
`workbench:`. Identity comes from the section npa itself would pick: `projects.<alias>` for
`--project <alias>`, else `projects.<default_project>` (npa's default alias is `default`),
else the only project, else the first legacy workbench's `environment`. npa reads
`project_id`, `tenant_id` and `region` there; the rest of its keys (`default_workbench`,
`skypilot`, `workflows`, `container_registry`, the workbenches' own settings) are accepted
as they are and left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from npa_sop_tui.errors import UsageError
from npa_sop_tui.spec.identity import identifier_problem

if TYPE_CHECKING:
    from pathlib import Path

    from npa_sop_tui.home.config import NpaConfig

# What npa reads from a project stanza (clients/config.py's resolve_environment).
SECTION_FIELDS = ("project_id", "tenant_id", "region")
DEFAULT_ALIAS = "default"  # npa's `default_project` when the key is absent
PROJECT_ID_PREFIX = "project-"


class NpaProject(BaseModel):
    """One `projects.<alias>` stanza: the identity fields are typed, npa's other keys
    (workbenches, terraform_state, …) are kept as they are."""

    model_config = ConfigDict(extra="allow", strict=True)

    project_id: str | None = None
    tenant_id: str | None = None
    region: str | None = None

    @field_validator("project_id", "tenant_id", "region")
    @classmethod
    def _identifier(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Checked as the file is read (the finding names its line), before a value
        becomes part of a path or a line: `../x` is not a region."""
        problem = identifier_problem(info.field_name or "", value.strip()) if value else None
        if problem is not None:
            raise PydanticCustomError("identifier", problem)
        return value


@dataclass(frozen=True)
class Section:
    """The npa section identity is read from: its label (`projects.dev`), why it was chosen,
    and its non-empty identity values."""

    label: str
    why: str
    values: dict[str, str]
    alias: str | None = None  # the project alias (None for a legacy workbench)


def _values(data: Any, label: str) -> dict[str, str]:
    fields = data.model_dump() if isinstance(data, BaseModel) else data
    if not isinstance(fields, dict):
        return {}
    values = {k: v.strip() for k in SECTION_FIELDS if isinstance(v := fields.get(k), str) and v}
    for key, value in values.items():  # a legacy workbench's environment is not typed
        problem = identifier_problem(key, value)
        if problem is not None:
            raise UsageError(
                f"config.yaml {label}.{key}: {problem}",
                hint="fix the value in config.yaml (npa reads it from there too)",
            )
    return values


def aliases(config: NpaConfig) -> list[str]:
    return list(config.projects)


def is_alias(config: NpaConfig, value: str) -> bool:
    return value in config.projects


def chosen_section(config: NpaConfig, alias: str | None = None) -> Section | None:
    """The section npa would read identity from (None: npa would have none).

    An `alias` that is not a configured project is refused, naming the aliases there are."""
    projects = config.projects
    if alias is not None:
        if alias not in projects:
            known = ", ".join(projects) or "none"
            raise UsageError(
                f"--project {alias!r} is neither a project ID nor a project alias of the "
                f"config (aliases: {known})",
                hint="pass a project ID (project-…) or one of the aliases under `projects:` "
                "in config.yaml",
            )
        return Section(
            f"projects.{alias}",
            f"--project {alias}",
            _values(projects[alias], f"projects.{alias}"),
            alias,
        )
    if projects:
        default = config.default_project or DEFAULT_ALIAS
        if default in projects:
            why = "default_project" if config.default_project else f"the alias {DEFAULT_ALIAS!r}"
            return Section(
                f"projects.{default}",
                why,
                _values(projects[default], f"projects.{default}"),
                default,
            )
        if len(projects) == 1:
            (only,) = projects
            return Section(
                f"projects.{only}",
                "the only project",
                _values(projects[only], f"projects.{only}"),
                only,
            )
        return None  # several and no default: npa asks for --project; so does `config show`
    for name, workbench in config.workbenches.items():
        environment = workbench.get("environment") if isinstance(workbench, dict) else None
        if isinstance(environment, dict):
            label = f"workbenches.{name}.environment"
            return Section(label, "legacy workbenches", _values(environment, label))
    return None


def ambiguity(config: NpaConfig) -> str | None:
    """Why no npa section is chosen although npa's projects exist, else None."""
    if not config.projects or chosen_section(config) is not None:
        return None
    return (
        f"several projects ({', '.join(config.projects)}) and no default_project: "
        "pass --project ALIAS"
    )


def describe(section: Section, config_file: Path | None) -> str:
    """A value's source: the file and the section it was read from."""
    where = f"config {config_file}" if config_file else "config"
    return f"{where} {section.label} ({section.why})"
