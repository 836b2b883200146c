"""Settings resolve once: flags > environment > config.yaml > defaults, with their sources."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.config import ConfigError, NpaConfig, load_config
from npa_sop_tui.home.settings import resolve_settings


def _config(path: Path, text: str) -> NpaConfig:
    path.write_text(text)
    return load_config(path)


def test_each_source_in_order_and_named(tmp_path: Path) -> None:
    cfg_file = tmp_path / "config.yaml"
    config = _config(
        cfg_file,
        "region: cfg-region\ntenant_id: tenant-cfg\nlogin: {user: admin}\n"
        "status: {interval_seconds: 7}\nterraform_bin: /cfg/terraform\n",
    )
    env = {"NPA_TENANT_ID": "tenant-env", "NPA_TERRAFORM_BIN": "/env/terraform"}
    settings = resolve_settings(
        {"terraform_bin": "/flag/terraform", "login.host": "10.0.0.9"},
        environ=env,
        config=config,
        config_file=cfg_file,
    )
    assert (settings["terraform_bin"], settings.source("terraform_bin")) == (
        "/flag/terraform",
        "flag",
    )
    assert (settings["tenant_id"], settings.source("tenant_id")) == (
        "tenant-env",
        "env NPA_TENANT_ID",
    )
    assert (settings["region"], settings.source("region")) == ("cfg-region", f"config {cfg_file}")
    assert settings["login.user"] == "admin" and settings.source("login.user").startswith("config")
    assert (settings["login.port"], settings.source("login.port")) == (22, "default")
    assert settings.status_interval == 7.0
    assert settings["login.host"] == "10.0.0.9" and settings.source("login.host") == "flag"


def test_the_refresh_interval_is_the_same_default_for_every_door() -> None:
    from npa_sop_tui.status.watch import StatusSettings

    settings = resolve_settings(environ={}, config=NpaConfig())
    assert settings.status_interval == 10.0 == StatusSettings(name="x").slurm_interval
    from_env = resolve_settings(environ={"NPA_STATUS_INTERVAL": "2.5"}, config=NpaConfig())
    assert from_env.status_interval == 2.5 and from_env.source("status.interval_seconds") == (
        "env NPA_STATUS_INTERVAL"
    )
    with pytest.raises(UsageError, match="NPA_STATUS_INTERVAL"):
        resolve_settings(environ={"NPA_STATUS_INTERVAL": "soon"}, config=NpaConfig())


def test_unset_flags_do_not_hide_lower_sources() -> None:
    settings = resolve_settings(
        {"region": None}, environ={"NPA_REGION": "eu-west1"}, config=NpaConfig()
    )
    assert settings["region"] == "eu-west1"


def test_capacity_comes_from_the_environment_and_is_never_shown() -> None:
    settings = resolve_settings(
        environ={"NPA_CAPACITY_BLOCK_GROUPS": "gpu=capacityblockgroup-secret42"},
        config=NpaConfig(),
    )
    assert settings.capacity == {"gpu": "capacityblockgroup-secret42"}
    row = next(r for r in settings.rows() if r["key"] == "capacity")
    assert row == {
        "key": "capacity",
        "value": {"gpu": "<set>"},
        "source": ("env NPA_CAPACITY_BLOCK_GROUPS"),
    }
    assert "secret42" not in repr(settings.rows())


def test_identity_takes_the_spec_first() -> None:
    class Spec:
        region = "spec-region"
        tenant_id = None
        project_id = None
        subnet_id = None

    settings = resolve_settings(
        environ={"NPA_REGION": "env-region", "NPA_PROJECT_ID": "project-env"},
        config=NpaConfig(tenant_id="tenant-cfg"),
    )
    identity = settings.identity(Spec())
    assert (identity.region, identity.tenant_id, identity.project_id, identity.subnet_id) == (
        "spec-region",
        "tenant-cfg",
        "project-env",
        None,
    )


def test_a_broken_config_file_is_reported_with_its_position(tmp_path: Path) -> None:
    bad = tmp_path / "config.yaml"
    bad.write_text("login:\n  port: http\n")
    with pytest.raises(ConfigError) as caught:
        resolve_settings(config_file=bad)
    assert f"{bad}:2:9" in caught.value.render()


def test_unknown_setting_names_are_a_programming_error() -> None:
    with pytest.raises(KeyError, match="colour"):
        resolve_settings({"colour": "red"}, environ={}, config=NpaConfig())
