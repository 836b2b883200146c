"""Workflow files: tools called by `toolRef`, run through the registry.

Two formats, each under its own apiVersion (one name, one format):

- `npa.workflow/v0.0.1` is the existing npa's state machine (`kind: Workflow`, `metadata`,
  `config`, `initial`, `states` with `toolRef`/`next`/`terminal`), run here for the states
  whose toolRef is ours (`workflow_states.py`).
- `npa-sop.workflow/v0.0.1` is this product's compact list of steps:

```yaml
apiVersion: npa-sop.workflow/v0.0.1
name: stand-in
steps:
  - name: deploy
    toolRef: infra.soperator.deploy
    with:
      spec_path: cluster.yaml        # relative to this file; or `spec: {…}` inline
      sandbox: true
```

Steps run in order and the run stops at the first failed step. Spec files are read only
inside the workflow file's folder. A dry run checks every step (the tool exists, its input
matches the tool's schema, the spec is valid) and says what would run, without running.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from npa_sop_tui.errors import NpaError, UsageError
from npa_sop_tui.spec.findings import Finding, error, errors_of
from npa_sop_tui.spec.yaml_positions import Positions, YamlProblem, load_yaml_mapping

WORKFLOW_API_VERSION = "npa.workflow/v0.0.1"  # npa's state machine
STEPS_API_VERSION = "npa-sop.workflow/v0.0.1"  # this product's steps list


class WorkflowStep(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = None
    tool_ref: str = Field(alias="toolRef")
    with_: dict[str, Any] = Field(default_factory=dict, alias="with")


class WorkflowFile(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    api_version: Literal["npa-sop.workflow/v0.0.1"] = Field(alias="apiVersion")
    name: str
    steps: list[WorkflowStep] = Field(min_length=1)


class StepResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int
    name: str
    tool: str
    status: Literal["ok", "failed", "would-run", "not-run"]
    input: dict[str, Any]
    output: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    duration: float = 0.0


class WorkflowResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    source: str
    dry_run: bool
    ok: bool
    steps: list[StepResult]


class WorkflowError(UsageError):
    """The workflow file is wrong; nothing ran."""

    def __init__(self, findings: list[Finding], *, source: str) -> None:
        errs = errors_of(findings) or findings
        super().__init__(
            f"{source}: {len(errs)} problem(s) in the workflow file\n"
            + "\n".join(f"  {f.render()}" for f in errs),
            hint="fix the steps named above; no step was run",
        )
        self.findings = errs

    def json_extra(self) -> dict[str, object]:
        return {"findings": [f.to_dict() for f in self.findings]}


class LoadedWorkflow(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    file: WorkflowFile
    source: str
    base_dir: str
    # Each step's input, checked against its tool's input model, paths made absolute.
    inputs: list[dict[str, Any]]
    format: Literal["states", "steps"] = "steps"


def load_workflow(path: str | Path) -> LoadedWorkflow:
    path = Path(path)
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text
    from npa_sop_tui.spec.yaml_positions import MAX_BYTES

    try:  # a regular file of at most 1 MiB: a device or FIFO is refused before any read
        text = read_regular_text(path, limit=MAX_BYTES, what="workflow file")
    except Unreadable as exc:
        if exc.missing:
            raise UsageError(f"workflow file {str(path)!r} does not exist") from None
        raise UsageError(f"{path}: {exc.reason}", hint=exc.hint) from None
    return parse_workflow_text(text, source=str(path), base_dir=path.resolve().parent)


def parse_workflow_text(text: str, *, source: str, base_dir: Path) -> LoadedWorkflow:
    from npa_sop_tui.agent import registry as tools
    from npa_sop_tui.spec.model import findings_from_validation_error

    try:
        doc = load_yaml_mapping(text, source=source, what="workflow file")
    except YamlProblem as exc:
        raise WorkflowError(exc.findings, source=source) from None
    positions = doc.positions
    data, form = _converted(doc.data, positions, source)
    try:
        file = WorkflowFile.model_validate(data)
    except ValidationError as exc:
        raise WorkflowError(
            findings_from_validation_error(exc, WorkflowFile, positions), source=source
        ) from None
    findings: list[Finding] = []
    inputs: list[dict[str, Any]] = []
    registry = tools.registry()
    for i, step in enumerate(file.steps):
        tool = registry.get(step.tool_ref)
        base = f"steps[{i}]"
        if tool is None:
            from npa_sop_tui.spec.findings import one_of_hint

            findings.append(
                _placed(
                    error(
                        f"{base}.toolRef",
                        f"unknown tool {step.tool_ref!r}",
                        one_of_hint(step.tool_ref, registry),
                    ),
                    positions,
                )
            )
            inputs.append({})
            continue
        args = _absolute_paths(dict(step.with_), base_dir)
        try:
            tool.input_model.model_validate(args)
        except ValidationError as exc:
            for f in findings_from_validation_error(exc, tool.input_model, None):
                path = f"{base}.with.{f.path}" if f.path else f"{base}.with"
                findings.append(_placed(error(path, f.message, f.hint), positions))
        findings += [_placed(f, positions) for f in _missing_paths(args, base, base_dir)]
        inputs.append(args)
    if findings:
        raise WorkflowError(findings, source=source)
    return LoadedWorkflow(
        file=file, source=source, base_dir=str(base_dir), inputs=inputs, format=form
    )


def _converted(
    data: dict[str, Any], positions: Positions, source: str
) -> tuple[dict[str, Any], Literal["states", "steps"]]:
    """npa's state machine as steps, or the steps document as it is; a steps list under
    npa's apiVersion is refused (that name means the state machine)."""
    from npa_sop_tui.agent.workflow_states import is_state_machine, to_steps

    api = data.get("apiVersion")
    if api == WORKFLOW_API_VERSION:
        if not is_state_machine(data):
            raise WorkflowError(
                [
                    _placed(
                        error(
                            "apiVersion",
                            f"{WORKFLOW_API_VERSION} is npa's state-machine format (kind: "
                            "Workflow, initial, states); a steps list is "
                            f"{STEPS_API_VERSION}",
                            f"set apiVersion: {STEPS_API_VERSION} for this file",
                        ),
                        positions,
                    )
                ],
                source=source,
            )
        steps, findings = to_steps(data)
        if findings:
            raise WorkflowError([_placed(f, positions) for f in findings], source=source)
        return {"apiVersion": STEPS_API_VERSION, **steps}, "states"
    if api != STEPS_API_VERSION:
        raise WorkflowError(
            [
                _placed(
                    error(
                        "apiVersion",
                        f"unsupported apiVersion {api!r}; expected {WORKFLOW_API_VERSION} "
                        f"(npa's states) or {STEPS_API_VERSION} (steps)",
                    ),
                    positions,
                )
            ],
            source=source,
        )
    return data, "steps"


def _missing_paths(args: dict[str, Any], base: str, root: Path) -> list[Finding]:
    """Files a step names must exist before any step runs: a wrong path is a mistake in the
    workflow file (exit 2), not a step failing halfway through the run."""
    out: list[Finding] = []
    hint = "paths are relative to the workflow file"
    for key in ("spec_path", "terraform_dir"):
        value = args.get(key)
        if not isinstance(value, str) or not value:
            continue
        real = Path(value).resolve()
        if real != root.resolve() and root.resolve() not in real.parents:
            out.append(
                error(
                    f"{base}.with.{key}",
                    f"{value} is outside the workflow's folder; tools read files and run "
                    "recipes only inside it",
                    "move it next to the workflow (or below it)",
                )
            )
    if out:
        return out
    spec_path = args.get("spec_path")
    if isinstance(spec_path, str) and spec_path and not Path(spec_path).is_file():
        what = "is a folder, not a spec file" if Path(spec_path).is_dir() else "does not exist"
        out.append(error(f"{base}.with.spec_path", f"spec file {spec_path} {what}", hint))
    terraform_dir = args.get("terraform_dir")
    if isinstance(terraform_dir, str) and terraform_dir and not Path(terraform_dir).is_dir():
        out.append(error(f"{base}.with.terraform_dir", f"{terraform_dir} is not a folder", hint))
    return out


def _placed(finding: Finding, positions: Positions) -> Finding:
    return positions.place(finding, prefer_key=True)


def _absolute_paths(args: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """Paths in a workflow are relative to the workflow file, not to the caller's cwd."""
    for key in ("spec_path", "terraform_dir"):
        value = args.get(key)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            args[key] = str((base_dir / value).resolve())
    return args


def _step_name(loaded: LoadedWorkflow, index: int) -> str:
    step = loaded.file.steps[index]
    return step.name or f"step-{index + 1}"


async def run_workflow(
    loaded: LoadedWorkflow,
    *,
    dry_run: bool = False,
    on_event: Callable[[int, Any], None] | None = None,
    sandbox: bool = False,
) -> WorkflowResult:
    """Run (or check) every step; stop at the first failure, leaving later steps not-run.
    `sandbox` forces `sandbox: true` into every step whose tool has it."""
    from npa_sop_tui.agent import registry as tools

    registry = tools.registry()
    results: list[StepResult] = []
    failed = False
    root = Path(loaded.base_dir)
    for i, step in enumerate(loaded.file.steps):
        tool = registry[step.tool_ref]
        args = loaded.inputs[i]
        if sandbox and "sandbox" in tool.input_model.model_fields:
            args = {**args, "sandbox": True}
        name = _step_name(loaded, i)
        if failed:
            results.append(
                StepResult(index=i, name=name, tool=tool.name, status="not-run", input=args)
            )
            continue
        started = time.monotonic()
        try:
            if dry_run:
                output = tool.check(args, root=root)
                status: Literal["ok", "would-run"] = "would-run"
            else:
                sink = (lambda event, i=i: on_event(i, event)) if on_event else None
                output = await tool.acall(args, on_event=sink, root=root)
                status = "ok"
                if output.get("ok") is False:
                    # validate answers instead of raising; a workflow still stops there
                    failed = True
                    results.append(
                        StepResult(
                            index=i,
                            name=name,
                            tool=tool.name,
                            status="failed",
                            input=args,
                            output=output,
                            duration=time.monotonic() - started,
                        )
                    )
                    continue
            results.append(
                StepResult(
                    index=i,
                    name=name,
                    tool=tool.name,
                    status=status,
                    input=args,
                    output=output,
                    duration=time.monotonic() - started,
                )
            )
        except NpaError as exc:
            failed = True
            results.append(
                StepResult(
                    index=i,
                    name=name,
                    tool=tool.name,
                    status="failed",
                    input=args,
                    error={**exc.to_dict(), **_extra(exc)},
                    duration=time.monotonic() - started,
                )
            )
    return WorkflowResult(
        name=loaded.file.name, source=loaded.source, dry_run=dry_run, ok=not failed, steps=results
    )


def _extra(exc: NpaError) -> dict[str, Any]:
    extra = getattr(exc, "json_extra", None)
    return extra() if callable(extra) else {}
