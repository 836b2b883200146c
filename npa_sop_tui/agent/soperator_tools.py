"""The Soperator agent tools' parts: `infra.soperator.validate|plan|deploy|status|destroy`'s
input models, output models and the SDK calls they make. tools.py registers them (`Tool`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from npa_sop_tui.agent.sink import EventSink

# ---------------------------------------------------------------------------------------
# Inputs


class _Input(BaseModel):
    # strict: `sandbox: "yes"` is not a boolean and "2" is not a number; agents get an error
    model_config = ConfigDict(extra="forbid", strict=True)


class SpecSource(_Input):
    """Exactly one of `spec` (inline mapping), `spec_yaml` (text) or `spec_path` (file)."""

    spec: dict[str, Any] | None = Field(
        default=None, description="the cluster spec as a mapping (npa.soperator/v0.0.1)"
    )
    spec_yaml: str | None = Field(default=None, description="the cluster spec as YAML text")
    spec_path: str | None = Field(
        default=None,
        description="path to a cluster.yaml file inside the workspace root (the workflow's "
        "folder, the MCP server's --root, else the current folder)",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> SpecSource:
        given = [k for k in ("spec", "spec_yaml", "spec_path") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of spec, spec_yaml or spec_path"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self


class RunSettings(_Input):
    """Where Terraform runs: the configured recipe, an explicit folder, or the sandbox."""

    sandbox: bool = Field(
        default=False, description="run the packaged stand-in recipe offline (no cloud)"
    )
    terraform_dir: str | None = Field(
        default=None,
        description="a local checkout of the recipe's soperator/ folder, inside the "
        "workspace root (not taken with sandbox: the sandbox runs its own stand-in recipe)",
    )


class ValidateInput(SpecSource):
    pass


class PlanInput(SpecSource, RunSettings):
    pass


class DeployInput(SpecSource, RunSettings):
    allow_destructive: bool = Field(
        default=False, description="apply even if the plan deletes or replaces resources"
    )


class StatusInput(_Input):
    name: str = Field(description="cluster name (as in the inventory)")
    sandbox: bool = Field(default=False, description="a cluster of the sandbox (this machine)")


class DestroyInput(RunSettings):
    name: str = Field(description="cluster name (as in the inventory)")
    confirm: str = Field(
        description="must repeat the cluster name: destroy deletes the cluster and its data"
    )

    @model_validator(mode="after")
    def _confirmed(self) -> DestroyInput:
        if self.confirm != self.name:
            raise ValueError("confirm must equal name to destroy the cluster")
        return self


# ---------------------------------------------------------------------------------------
# Outputs (lifecycle/status models are reused as they are)


def validate_output() -> type[BaseModel]:
    from npa_sop_tui.sdk.soperator import ValidationResult

    return ValidationResult


def plan_output() -> type[BaseModel]:
    from npa_sop_tui.lifecycle.api import PlanResult

    return PlanResult


def deploy_output() -> type[BaseModel]:
    from npa_sop_tui.lifecycle.api import DeployResult

    return DeployResult


def destroy_output() -> type[BaseModel]:
    from npa_sop_tui.lifecycle.api import DestroyResult

    return DestroyResult


def status_output() -> type[BaseModel]:
    # What `sdk.astatus` returns: the snapshot plus npa's `status` and `backend`.
    from npa_sop_tui.sdk.compat import SoperatorStatus

    return SoperatorStatus


# ---------------------------------------------------------------------------------------
# The calls


def spec_of(args: SpecSource) -> Any:
    from npa_sop_tui.sdk.soperator import load
    from npa_sop_tui.spec.model import SpecError, parse_spec_text

    if args.spec_yaml is not None:
        return parse_spec_text(args.spec_yaml, source="<spec_yaml>").spec
    if args.spec is not None:
        return load(args.spec)
    assert args.spec_path is not None
    from npa_sop_tui.agent.confinement import not_a_spec, read_spec_text

    _, text = read_spec_text(args.spec_path, None)  # inside the call's workspace root only
    if text is None:
        raise SpecError([not_a_spec(args.spec_path)])
    return parse_spec_text(text, source=args.spec_path).spec


def run_settings(args: RunSettings) -> dict[str, Any]:
    """`sandbox` and `terraform_dir` for the SDK; a `terraform_dir` is confined to the
    call's workspace root and refused in the sandbox (agent/confinement.py)."""
    from npa_sop_tui.agent.confinement import recipe_in_root

    folder = args.terraform_dir
    recipe = str(recipe_in_root(folder, None, sandbox=args.sandbox)) if folder else None
    return {"sandbox": args.sandbox, "terraform_dir": recipe}


async def validate(args: ValidateInput, on_event: EventSink) -> BaseModel:
    from npa_sop_tui.sdk import soperator as sdk

    if args.spec is not None:
        return sdk.validate(args.spec)
    source = "<spec_yaml>" if args.spec_yaml is not None else str(args.spec_path)
    try:
        spec = spec_of(args)
    except sdk.SpecError as exc:
        return sdk.ValidationResult(ok=False, source=source, findings=list(exc.findings))
    return sdk.validate(spec).model_copy(update={"source": source})


async def plan(args: PlanInput, on_event: EventSink) -> BaseModel:
    from npa_sop_tui.sdk import soperator as sdk

    return await sdk.aplan(spec_of(args), on_event=on_event, **run_settings(args))


async def deploy(args: DeployInput, on_event: EventSink) -> BaseModel:
    from npa_sop_tui.sdk import soperator as sdk

    return await sdk.adeploy(
        spec_of(args),
        on_event=on_event,
        allow_destructive=args.allow_destructive,
        **run_settings(args),
    )


async def status(args: StatusInput, on_event: EventSink) -> BaseModel:
    from npa_sop_tui.sdk import soperator as sdk

    return await sdk.astatus(args.name, sandbox=args.sandbox)  # type: ignore[no-any-return]


async def destroy(args: DestroyInput, on_event: EventSink) -> BaseModel:
    from npa_sop_tui.sdk import soperator as sdk

    # An incomplete teardown is the tool's error (isError, a failed workflow step), not a
    # result an agent could read as done.
    return await sdk.adestroy(
        args.name, on_event=on_event, raise_incomplete=True, **run_settings(args)
    )


EXAMPLE_SPEC: dict[str, Any] = {
    "apiVersion": "npa.soperator/v0.0.1",
    "name": "demo",
    "workers": [{"name": "cpu", "platform": "cpu-d3", "preset": "8vcpu-32gb", "size": 2}],
}
