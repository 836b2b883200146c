"""Agent tools: `infra.soperator.validate|plan|deploy|status|destroy`.

Each tool has a name, a description, JSON Schemas for its input and output (generated from
the pydantic models of tools_soperator.py, tools_fleet.py and tools_jobs.py, so schema and
behaviour cannot drift), examples, and the SDK function it calls. `npa soperator tools
--output json` lists them; workflow files call them by `toolRef`. Tools take JSON-shaped
input and return JSON-shaped output.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from npa_sop_tui.agent import soperator_tools as soperator
from npa_sop_tui.agent.sink import EventSink
from npa_sop_tui.errors import UsageError

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


# ---------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_model: type[BaseModel]
    output_model_factory: Callable[[], type[BaseModel]]
    func: Callable[[Any, EventSink], Awaitable[BaseModel]]
    examples: list[dict[str, Any]] = field(default_factory=list)
    destructive: bool = False
    checks_spec: bool = True

    @property
    def output_model(self) -> type[BaseModel]:
        return self.output_model_factory()

    def input_schema(self) -> dict[str, Any]:
        schema = self.input_model.model_json_schema()
        properties = schema.get("properties", {})
        if "spec" in properties:
            # The inline spec is a plain mapping in the model (so the spec loader can report
            # positions), but agents get the real spec schema to fill it in.
            from npa_sop_tui.spec.model import SoperatorSpec

            spec_schema = SoperatorSpec.model_json_schema(by_alias=True)
            defs = schema.setdefault("$defs", {})
            defs.update(spec_schema.pop("$defs", {}))
            defs["SoperatorSpec"] = spec_schema
            properties["spec"] = {
                "anyOf": [{"$ref": "#/$defs/SoperatorSpec"}, {"type": "null"}],
                "default": None,
                "description": properties["spec"].get("description"),
            }
        return {"$schema": SCHEMA_DIALECT, **schema}

    def output_schema(self) -> dict[str, Any]:
        return {
            "$schema": SCHEMA_DIALECT,
            **self.output_model.model_json_schema(mode="serialization"),
        }

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "destructive": self.destructive,
            "input_schema": self.input_schema(),
            "output_schema": self.output_schema(),
            "examples": self.examples,
        }

    def parse_input(self, args: dict[str, Any]) -> BaseModel:
        """The tool's input model, or `ToolInputError` naming each bad field."""
        try:
            return self.input_model.model_validate(args)
        except ValidationError as exc:
            raise ToolInputError(self.name, exc) from None

    def check(self, args: dict[str, Any], *, root: Any = None) -> dict[str, Any]:
        """Dry run: the input is well-formed and the spec valid; nothing runs."""
        from npa_sop_tui.agent.confinement import CALL_ROOT, workspace_root

        token = CALL_ROOT.set(workspace_root(root))
        try:
            return self._check(args)
        finally:
            CALL_ROOT.reset(token)

    def _check(self, args: dict[str, Any]) -> dict[str, Any]:
        from npa_sop_tui.spec.findings import errors_of
        from npa_sop_tui.spec.model import SpecError

        parsed = self.parse_input(args)
        summary: dict[str, Any] = {"would_run": self.name}
        if isinstance(parsed, soperator.SpecSource):
            spec = soperator.spec_of(parsed)  # SpecError with positions when invalid
            from npa_sop_tui.spec.validate import validate_spec

            found = validate_spec(spec)
            if errors_of(found):
                raise SpecError(found, source=f"spec {spec.name!r}")
            summary["cluster"] = spec.name
            summary["workers"] = sum(w.size for w in spec.workers)
        if isinstance(parsed, soperator.RunSettings):
            summary.update(soperator.run_settings(parsed))
        if isinstance(parsed, soperator.StatusInput | soperator.DestroyInput):
            summary["cluster"] = parsed.name
        return summary

    async def acall(
        self, args: dict[str, Any], *, on_event: EventSink = None, root: Any = None
    ) -> dict[str, Any]:
        """Run the tool; `spec_path` files are read only inside `root` (default: cwd)."""
        from npa_sop_tui.agent.confinement import CALL_ROOT, workspace_root

        token = CALL_ROOT.set(workspace_root(root))
        try:
            parsed = self.parse_input(args)
            result = await self.func(parsed, on_event)
        finally:
            CALL_ROOT.reset(token)
        return result.model_dump(mode="json")

    def call(
        self, args: dict[str, Any], *, on_event: EventSink = None, root: Any = None
    ) -> dict[str, Any]:
        from npa_sop_tui.sdk.soperator import _run

        return _run(self.acall(args, on_event=on_event, root=root), "acall")


class ToolInputError(UsageError):
    def __init__(self, tool: str, exc: ValidationError) -> None:
        problems = []
        for err in exc.errors(include_url=False):
            where = ".".join(str(p) for p in err["loc"]) or "(input)"
            problems.append(f"{where}: {err['msg']}")
        super().__init__(
            f"bad input for tool {tool}: " + "; ".join(problems),
            hint=f"`npa soperator tools --output json` shows {tool}'s input schema",
        )
        self.problems = problems

    def json_extra(self) -> dict[str, object]:
        return {"problems": self.problems}


_TOOLS: tuple[Tool, ...] = (
    Tool(
        name="infra.soperator.validate",
        description="Check a Soperator cluster spec; returns every finding with file:line. "
        "Changes nothing.",
        input_model=soperator.ValidateInput,
        output_model_factory=soperator.validate_output,
        func=soperator.validate,
        examples=[
            {"input": {"spec": soperator.EXAMPLE_SPEC}},
            {"input": {"spec_path": "cluster.yaml"}},
        ],
    ),
    Tool(
        name="infra.soperator.plan",
        description="Terraform plan for a Soperator cluster: what deploy would add, change "
        "or destroy. Changes nothing in the cloud.",
        input_model=soperator.PlanInput,
        output_model_factory=soperator.plan_output,
        func=soperator.plan,
        examples=[
            {"input": {"spec_path": "cluster.yaml"}},
            {"input": {"spec": soperator.EXAMPLE_SPEC, "sandbox": True}},
        ],
    ),
    Tool(
        name="infra.soperator.deploy",
        description="Create or update a Soperator (Slurm on Kubernetes) cluster and wait "
        "until Terraform finishes. Refuses destructive plans unless allow_destructive.",
        input_model=soperator.DeployInput,
        output_model_factory=soperator.deploy_output,
        func=soperator.deploy,
        examples=[
            {"input": {"spec_path": "cluster.yaml"}},
            {"input": {"spec": soperator.EXAMPLE_SPEC, "sandbox": True}},
        ],
    ),
    Tool(
        name="infra.soperator.status",
        description="One live status snapshot of a cluster: Kubernetes node groups and "
        "Soperator pods, Slurm partitions and nodes, with a verdict.",
        input_model=soperator.StatusInput,
        output_model_factory=soperator.status_output,
        func=soperator.status,
        examples=[{"input": {"name": "demo"}}],
        checks_spec=False,
    ),
    Tool(
        name="infra.soperator.destroy",
        description="Destroy a cluster from the inventory, deleting its resources and data. "
        "Requires confirm equal to the cluster name.",
        input_model=soperator.DestroyInput,
        output_model_factory=soperator.destroy_output,
        func=soperator.destroy,
        examples=[{"input": {"name": "demo", "confirm": "demo"}}],
        destructive=True,
        checks_spec=False,
    ),
)


def _fleet_tools() -> tuple[Tool, ...]:
    from npa_sop_tui.agent import fleet_tools as tools_fleet

    return (
        Tool(
            name="infra.fleet.deploy",
            description="Deploy every selected target of a fleet file (npa.fleet/v0.0.1); one "
            "target's failure is its own entry, the others go on. Returns the fleet report.",
            input_model=tools_fleet.FleetDeployInput,
            output_model_factory=tools_fleet.output_model,
            func=tools_fleet.deploy,
            examples=[{"input": {"spec_path": "fleet.yaml", "sandbox": True}}],
            checks_spec=False,
        ),
    )


def registry() -> dict[str, Tool]:
    """Every tool by name. New tool families register here with one line each."""
    from npa_sop_tui.agent.job_tools import job_tools

    jobs = tuple(Tool(**kw) for kw in job_tools())
    return {tool.name: tool for tool in (*_TOOLS, *_fleet_tools(), *jobs)}


def get_tool(name: str) -> Tool:
    tools = registry()
    if name not in tools:
        from npa_sop_tui.spec.findings import one_of_hint

        raise UsageError(f"unknown tool {name!r}", hint=one_of_hint(name, tools))
    return tools[name]


ToolName = Literal[
    "infra.soperator.validate",
    "infra.soperator.plan",
    "infra.soperator.deploy",
    "infra.soperator.status",
    "infra.soperator.destroy",
    "infra.soperator.run",
    "infra.soperator.logs",
    "infra.fleet.deploy",
]
