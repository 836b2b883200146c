"""The existing npa's workflow format (`apiVersion: npa.workflow/v0.0.1`, `kind: Workflow`):
a state machine, run here for the states whose `toolRef` is one of ours.

```yaml
apiVersion: npa.workflow/v0.0.1
kind: Workflow
metadata: {name: soperator-up}
config: {soperator_spec: cluster.yaml}
initial: deploy
states:
  deploy:
    toolRef: infra.soperator.deploy     # spec_path: {{config.soperator_spec}} (npa's catalog)
    with: {sandbox: true}               # optional: more tool input, {{config.*}} allowed
    next: done
  done:
    terminal: true
```

npa's catalog gives each toolRef its input: `infra.soperator.*` reads the spec named by
`config.soperator_spec`, `infra.fleet.deploy` the fleet file named by `config.fleet_spec`.
`{{config.KEY}}` (also inside config values) and `{{run.id}}` are substituted; a state's
`params:` (scalars, which may use those placeholders) overlay the config for that state only,
as in npa. The states run from `initial` (npa's default: the first state) along `next` until
a `terminal` state. Other toolRefs, `run:` (shell)
states and npa's scheduling keys (resources, inputs, outputs, needs, loops, decisions) are
refused when the file is read, naming the state: this runner runs only our tools.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from npa_sop_tui.spec.findings import Finding, error

STATE_KEYS = ("toolRef", "next", "terminal", "description", "with", "params")
TOP_KEYS = ("apiVersion", "kind", "metadata", "config", "initial", "states", "description")
# npa's catalog: which config key feeds which tool's spec_path.
CATALOG_INPUT = {
    "infra.fleet.deploy": ("spec_path", "fleet_spec"),
    "infra.soperator.validate": ("spec_path", "soperator_spec"),
    "infra.soperator.plan": ("spec_path", "soperator_spec"),
    "infra.soperator.deploy": ("spec_path", "soperator_spec"),
}
OURS = re.compile(r"^(infra\.soperator\.[a-z_]+|infra\.fleet\.deploy)$")
PLACEHOLDER = re.compile(r"\{\{\s*([a-zA-Z_][\w.]*)\s*\}\}")


def is_state_machine(data: dict[str, Any]) -> bool:
    return "states" in data or "kind" in data or "initial" in data


def _substitute(value: Any, config: dict[str, Any], run_id: str, where: str, out: list) -> Any:
    if isinstance(value, dict):
        return {k: _substitute(v, config, run_id, f"{where}.{k}", out) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, config, run_id, f"{where}[{i}]", out) for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "run.id":
            return run_id
        if name.startswith("config.") and name[7:] in config:
            return str(config[name[7:]])
        out.append(error(where, f"unknown placeholder {{{{{name}}}}}", "use {{config.KEY}}"))
        return match.group(0)

    whole = PLACEHOLDER.fullmatch(value.strip())
    if whole and whole.group(1).startswith("config.") and whole.group(1)[7:] in config:
        return config[whole.group(1)[7:]]  # a lone placeholder keeps the value's type
    return PLACEHOLDER.sub(one, value)


def _config(raw: Any, run_id: str, findings: list[Finding]) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        findings.append(error("config", "config must be a mapping"))
        return {}
    config = dict(raw)
    for _ in range(5):  # config values may name other config values (as npa's do)
        config = {k: _substitute(v, config, run_id, f"config.{k}", []) for k, v in config.items()}
    _substitute(config, config, run_id, "config", findings)  # report what is left unknown
    return config


def to_steps(data: dict[str, Any]) -> tuple[dict[str, Any], list[Finding]]:
    """The state machine as this runner's linear steps document, or findings saying why
    not. The caller places findings at their YAML positions."""
    findings: list[Finding] = []
    for key in data:
        if key not in TOP_KEYS:
            findings.append(error(key, f"{key!r} is not supported by this runner", _runner_hint()))
    if data.get("kind", "Workflow") != "Workflow":
        findings.append(error("kind", f"kind must be Workflow, not {data.get('kind')!r}"))
    metadata = data.get("metadata") or {}
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if not isinstance(name, str) or not name:
        findings.append(error("metadata.name", "metadata.name is required"))
    run_id = uuid.uuid4().hex[:12]
    config = _config(data.get("config"), run_id, findings)
    states = data.get("states")
    if not isinstance(states, dict) or not states:
        findings.append(error("states", "states must be a non-empty mapping of state names"))
        return {}, findings
    initial = data.get("initial", next(iter(states)))  # npa starts at the first state
    if initial not in states:
        findings.append(
            error("initial", f"initial must name a state ({', '.join(map(str, states))})")
        )
        return {}, findings
    for state_name, state in states.items():
        findings += _check_state(str(state_name), state, states)
    if findings:
        return {}, findings
    steps, seen, current = [], set(), initial
    while True:
        if current in seen:
            findings.append(
                error(
                    f"states.{current}.next",
                    f"state {current!r} is reached twice "
                    "(a loop); this runner runs each state once",
                )
            )
            return {}, findings
        seen.add(current)
        state = states[current]
        if state.get("toolRef"):
            args = dict(state.get("with") or {})
            tool = state["toolRef"]
            scoped = _with_params(config, state.get("params"), run_id, current, findings)
            if tool in CATALOG_INPUT and not {"spec", "spec_yaml", "spec_path"} & set(args):
                field, key = CATALOG_INPUT[tool]
                if key not in scoped:
                    findings.append(
                        error(
                            f"states.{current}.toolRef",
                            f"{tool} reads config.{key}; "
                            "add it to config (the spec file, relative to this file)",
                        )
                    )
                    return {}, findings
                args[field] = f"{{{{config.{key}}}}}"
            args = _substitute(args, scoped, run_id, f"states.{current}.with", findings)
            steps.append({"name": current, "toolRef": tool, "with": args})
        if state.get("terminal"):
            break
        current = state["next"]
    if not steps:
        findings.append(error("states", "no state calls a tool"))
    return {"name": name, "steps": steps}, findings


def _with_params(
    config: dict[str, Any], params: Any, run_id: str, state: str, findings: list[Finding]
) -> dict[str, Any]:
    """npa's per-state config overlay: `params` values (their placeholders resolved against
    the workflow's config) over the config, for this state only."""
    if not params:
        return config
    where = f"states.{state}.params"
    resolved = {
        k: _substitute(v, config, run_id, f"{where}.{k}", findings) for k, v in params.items()
    }
    return {**config, **resolved}


def _check_state(name: str, state: Any, states: dict[str, Any]) -> list[Finding]:
    where = f"states.{name}"
    if not isinstance(state, dict):
        return [error(where, "a state must be a mapping")]
    out = []
    if "run" in state:
        out.append(
            error(
                f"{where}.run",
                f"state {name!r} runs a shell command (run:); this runner runs agent tools only",
                _runner_hint(),
            )
        )
    for key in state:
        if key not in STATE_KEYS and key != "run":
            out.append(error(f"{where}.{key}", f"{key!r} is not supported here", _runner_hint()))
    tool = state.get("toolRef")
    if tool is not None and (not isinstance(tool, str) or not OURS.match(tool)):
        out.append(
            error(
                f"{where}.toolRef",
                f"toolRef {tool!r} is not one of this runner's tools",
                "npa-sop-tui runs infra.soperator.* and infra.fleet.deploy; run other "
                "states with npa",
            )
        )
    if tool is None and not state.get("terminal") and "run" not in state:
        out.append(error(where, f"state {name!r} has neither toolRef nor terminal: true"))
    terminal = state.get("terminal", False)
    if not isinstance(terminal, bool):
        out.append(error(f"{where}.terminal", "terminal must be true or false"))
    if not terminal:
        nxt = state.get("next")
        if not isinstance(nxt, str) or nxt not in states:
            out.append(error(f"{where}.next", f"next must name a state ({', '.join(states)})"))
    if "with" in state and not isinstance(state["with"], dict):
        out.append(error(f"{where}.with", "with must be a mapping of tool input"))
    params = state.get("params")
    if params is not None and not isinstance(params, dict):
        out.append(error(f"{where}.params", "params must be a mapping"))
    elif params:
        for key, value in params.items():
            if not isinstance(value, str | int | float | bool):
                out.append(
                    error(
                        f"{where}.params.{key}",
                        f"params.{key} must be a string, number or bool "
                        f"(got {type(value).__name__})",
                    )
                )
    return out


def _runner_hint() -> str:
    return (
        "npa-sop-tui runs the states whose toolRef is infra.soperator.* or infra.fleet.deploy "
        "(toolRef, next, terminal, with); run the rest of this workflow with npa"
    )
