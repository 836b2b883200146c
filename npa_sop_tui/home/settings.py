"""Settings, resolved once per operation: flags > environment > config.yaml > defaults.

Every front door (CLI, app, SDK, tools, fleet) calls `resolve_settings` with the values its
caller gave explicitly (a flag, a keyword argument) and hands the result down. Each value
remembers where it came from, so `npa soperator config show` can say why a value is what it
is, and nothing below the front doors reads the environment or the config file again.

Identity (region, tenant, project, subnet) also takes the spec into account; that happens
where a spec exists (`Settings.identity`), with the spec first.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.capacity import CAPACITY_ENV
from npa_sop_tui.home.config import (
    IDENTITY_ENV,
    LEASE_SECONDS_RANGE,
    STATUS_INTERVAL_RANGE,
    Identity,
    NpaConfig,
    load_config,
    seconds_in,
)

NEBIUS_PROFILE_ENV = "NEBIUS_PROFILE"
"""The Nebius CLI's own variable for its profile; npa reads it as the `profile` setting."""

TERRAFORM_BIN_ENV = "NPA_TERRAFORM_BIN"
STATUS_INTERVAL_ENV = "NPA_STATUS_INTERVAL"
STATE_ENV = {
    "state.backend": "NPA_STATE_BACKEND",
    "state.bucket": "NPA_STATE_BUCKET",
    "state.prefix": "NPA_STATE_PREFIX",
    "state.endpoint": "NPA_STATE_ENDPOINT",
    "state.region": "NPA_STATE_REGION",
    "state.lease_seconds": "NPA_STATE_LEASE_SECONDS",
    "state.service_account_id": "NPA_STATE_SERVICE_ACCOUNT_ID",
}


@dataclass(frozen=True, slots=True)
class Resolved:
    """One setting: its value and where it came from (`flag`, `env NAME`, `config`, …)."""

    value: Any
    source: str
    secret: bool = False

    def shown(self) -> Any:
        if self.secret and self.value:
            if isinstance(self.value, Mapping):
                return {key: "<set>" for key in self.value}
            return "<set>"
        return self.value


def _status_interval(raw: str, name: str) -> float:
    return seconds_in(raw, name, STATUS_INTERVAL_RANGE)


def _lease_seconds(raw: str, name: str) -> float:
    return seconds_in(raw, name, LEASE_SECONDS_RANGE)


def _capacity(raw: str, name: str) -> dict[str, str]:
    from npa_sop_tui.home.capacity import parse_capacity_assignments

    return parse_capacity_assignments(raw, source=name)


@dataclass(frozen=True, slots=True)
class _Key:
    """How one setting is found: its config path, its environment variable, its default."""

    config: tuple[str, ...] | None
    env: str | None = None
    default: Any = None
    parse_env: Callable[[str, str], Any] | None = None
    secret: bool = False
    identifier: bool = False
    """A region, a Nebius ID or a profile name: a value of another shape is refused as it
    is read, naming where it came from (`spec.identity`; config.yaml checks its own)."""


_KEYS: dict[str, _Key] = {
    "region": _Key(("region",), IDENTITY_ENV["region"], identifier=True),
    "tenant_id": _Key(("tenant_id",), IDENTITY_ENV["tenant_id"], identifier=True),
    "project_id": _Key(("project_id",), IDENTITY_ENV["project_id"], identifier=True),
    "subnet_id": _Key(("subnet_id",), IDENTITY_ENV["subnet_id"], identifier=True),
    "ssh_public_key_path": _Key(("ssh_public_key_path",)),
    "ssh_private_key_path": _Key(("ssh_private_key_path",)),
    "recipe.url": _Key(("recipe", "url")),
    "recipe.ref": _Key(("recipe", "ref")),
    "recipe.path": _Key(("recipe", "path")),
    "terraform_dir": _Key(None),
    "terraform_bin": _Key(("terraform_bin",), TERRAFORM_BIN_ENV),
    "plugin_cache_dir": _Key(("plugin_cache_dir",), "NPA_PLUGIN_CACHE_DIR"),
    "login.host": _Key(("login", "host")),
    "login.port": _Key(("login", "port")),
    "login.user": _Key(("login", "user")),
    "status.interval_seconds": _Key(
        ("status", "interval_seconds"), STATUS_INTERVAL_ENV, parse_env=_status_interval
    ),
    "tui.theme": _Key(("tui", "theme")),
    "capacity": _Key(None, CAPACITY_ENV, default={}, parse_env=_capacity, secret=True),
    "parallelism": _Key(None),
    "state.backend": _Key(("state", "backend"), STATE_ENV["state.backend"]),
    "state.bucket": _Key(("state", "bucket"), STATE_ENV["state.bucket"]),
    "state.prefix": _Key(("state", "prefix"), STATE_ENV["state.prefix"]),
    "state.endpoint": _Key(("state", "endpoint"), STATE_ENV["state.endpoint"]),
    "state.region": _Key(("state", "region"), STATE_ENV["state.region"], identifier=True),
    "state.lease_seconds": _Key(
        ("state", "lease_seconds"), STATE_ENV["state.lease_seconds"], parse_env=_lease_seconds
    ),
    "state.service_account_id": _Key(
        ("state", "service_account_id"), STATE_ENV["state.service_account_id"], identifier=True
    ),
    # the Nebius CLI profile (--profile, NEBIUS_PROFILE)
    "profile": _Key(None, NEBIUS_PROFILE_ENV, identifier=True),
    "root_login_key_file": _Key(None),
    # `--project`: a project ID (project-…), or the alias of one of the existing npa's
    # `projects:` sections, whose identity then wins over the environment and our keys.
    "project": _Key(None),
    # `--cloud-timeout`: seconds each cloud call may take, minting the bucket's key included
    "cloud_timeout": _Key(None),
}
# Identity read from the existing npa's project section (home/npa_config.py).
_NPA_IDENTITY = ("region", "tenant_id", "project_id")


@dataclass(frozen=True)
class Settings:
    """Every setting of one operation with its source. Build it with `resolve_settings`."""

    values: Mapping[str, Resolved]
    config: NpaConfig = field(default_factory=NpaConfig)
    config_file: Path | None = None

    def __getitem__(self, key: str) -> Any:
        return self.values[key].value

    def source(self, key: str) -> str:
        return self.values[key].source

    # -- the values most callers want, typed ----------------------------------------------

    @property
    def capacity(self) -> dict[str, str]:
        return dict(self["capacity"] or {})

    @property
    def terraform_dir(self) -> Path | None:
        value = self["terraform_dir"]
        return Path(value) if value is not None else None

    @property
    def terraform_bin(self) -> str | None:
        return self["terraform_bin"]

    @property
    def status_interval(self) -> float:
        return float(self["status.interval_seconds"])

    @property
    def parallelism(self) -> int | None:
        return self["parallelism"]

    def identity(self, spec: Any = None) -> Identity:
        """Region, tenant, project and subnet: the spec first, then these settings."""
        values = {
            name: (getattr(spec, name, None) if spec is not None else None) or self[name]
            for name in IDENTITY_ENV
        }
        return Identity(**values)

    def with_values(self, **overrides: Any) -> Settings:
        """A copy with some values set by the caller (source `caller`)."""
        values = dict(self.values)
        for key, value in overrides.items():
            if key not in _KEYS:
                raise KeyError(key)
            values[key] = Resolved(value, "caller", _KEYS[key].secret)
        if overrides.get("project") is not None:
            _apply_project(values, self.config, self.config_file, set(overrides))
        return Settings(values, self.config, self.config_file)

    def rows(self) -> list[dict[str, Any]]:
        """`config show`: one row per setting, secrets shown only as `<set>`."""
        return [
            {"key": key, "value": resolved.shown(), "source": resolved.source}
            for key, resolved in self.values.items()
        ]


def _from_config(config: NpaConfig, path: tuple[str, ...]) -> tuple[Any, bool]:
    """The config's value at `path`, and whether the file set it (not just the default)."""
    node: Any = config
    explicit = True
    for part in path:
        explicit = explicit and part in node.model_fields_set
        node = getattr(node, part)
    return node, explicit


def resolve_settings(
    flags: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    config: NpaConfig | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Resolve every setting once. `flags` holds what the caller set explicitly (None = unset).

    The config file is read unless `config` is given; a broken one raises `ConfigError`.
    """
    from npa_sop_tui.home import paths

    flags = {key: value for key, value in (flags or {}).items() if value is not None}
    unknown = sorted(set(flags) - set(_KEYS))
    if unknown:
        raise KeyError(f"unknown setting(s): {', '.join(unknown)}")
    env = os.environ if environ is None else environ
    if config is None:
        config_file = config_file or paths.config_path()
        config = load_config(config_file)
    values: dict[str, Resolved] = {}
    for key, spec in _KEYS.items():
        values[key] = _resolve_one(key, spec, flags, env, config, config_file)
    _apply_project(values, config, config_file, set(flags))
    return Settings(values, config, config_file)


def _apply_project(
    values: dict[str, Resolved], config: NpaConfig, config_file: Path | None, given: set[str]
) -> None:
    """The existing npa's project section in the identity values (one resolver for both
    shapes of the file): a `--project` alias wins over the environment and our own keys
    (not over a value given directly), and without one npa's default section fills what
    nothing else set. `--project project-…` is the project ID itself."""
    from npa_sop_tui.home import npa_config

    chosen = values["project"].value
    project_id = chosen is not None and str(chosen).startswith(npa_config.PROJECT_ID_PREFIX)
    if project_id and not npa_config.is_alias(config, str(chosen)):
        if "project_id" not in given:
            values["project_id"] = Resolved(chosen, f"{values['project'].source} --project")
        given = given | {"project_id"}
        chosen = None  # as npa: the rest from the default section
    section = npa_config.chosen_section(config, str(chosen) if chosen is not None else None)
    if section is None:
        reason = npa_config.ambiguity(config)
        if reason:
            values["project"] = Resolved(None, f"not chosen: {reason}")
        return
    source = npa_config.describe(section, config_file)
    if values["project"].value is None and section.alias is not None:
        values["project"] = Resolved(section.alias, source)
    for key in _NPA_IDENTITY:
        value = section.values.get(key)
        if value is None or key in given:
            continue
        if chosen is not None or values[key].source == "default":
            values[key] = Resolved(value, source)


def _resolve_one(
    key: str,
    spec: _Key,
    flags: Mapping[str, Any],
    env: Mapping[str, str],
    config: NpaConfig,
    config_file: Path | None,
) -> Resolved:
    if key in flags:
        return Resolved(
            _checked(key, spec, flags[key], FLAG_NAMES.get(key, key)), "flag", spec.secret
        )
    if spec.env is not None:
        raw = (env.get(spec.env) or "").strip()
        if raw:
            value = spec.parse_env(raw, spec.env) if spec.parse_env else raw
            return Resolved(_checked(key, spec, value, spec.env), f"env {spec.env}", spec.secret)
    if spec.config is not None:
        value, explicit = _from_config(config, spec.config)
        if explicit:
            where = f"config {config_file}" if config_file else "config"
            return Resolved(value, where, spec.secret)
        return Resolved(value, "default", spec.secret)
    return Resolved(spec.default, "default", spec.secret)


FLAG_NAMES = {"profile": "--profile"}
"""The flag that sets a setting, where its name differs from the key (for messages)."""


def _checked(key: str, spec: _Key, value: Any, where: str) -> Any:
    """`value` of setting `key` given by `where` (a flag or a variable), if it has its
    shape; else `UsageError` naming `where` and the shape expected."""
    if not spec.identifier or value in (None, ""):
        return value
    from npa_sop_tui.spec.identity import identifier_problem

    problem = identifier_problem(key, value)
    if problem is not None:
        raise UsageError(
            f"{where}: {problem}",
            hint=f"fix {where} (copy the value as Nebius or the Nebius CLI shows it), or unset it",
        )
    return value
