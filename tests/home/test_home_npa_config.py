"""The existing npa's config.yaml shape, read beside ours by the one resolver."""

from __future__ import annotations

from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.config import ConfigError, load_config
from npa_sop_tui.home.npa_config import chosen_section
from npa_sop_tui.home.settings import resolve_settings

# As the existing npa writes it: one stanza per project (with its workbenches), a default
# project and workbench, and npa's own sections this product never reads.
NPA_CONFIG = """\
projects:
  dev:
    project_id: project-e00dev
    tenant_id: tenant-e00npa
    region: eu-north1
    workbenches:
      b200:
        gpu_platform: gpu-b200-sxm
        ssh: {host: 10.0.0.5, user: ubuntu, key_path: ~/.ssh/id_ed25519}
    terraform_state: {bucket: tfstate-npa}
  prod:
    project_id: project-e00prod
    tenant_id: tenant-e00npa
    region: us-central1
default_project: dev
default_workbench: b200
container_registry: cr.eu-north1.nebius.cloud/npa
skypilot: {sky_bin: /opt/sky}
workflows:
  distill: {sim: genesis, trainer: lerobot}
"""


def _settings(path: Path, text: str, flags: dict | None = None, env: dict | None = None):  # type: ignore[no-untyped-def]
    path.write_text(text)
    return resolve_settings(flags, environ=env or {}, config_file=path)


def test_npa_config_is_read_and_identity_names_its_section(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    settings = _settings(cfg, NPA_CONFIG)
    where = f"config {cfg} projects.dev (default_project)"
    for key, value in (
        ("project_id", "project-e00dev"),
        ("tenant_id", "tenant-e00npa"),
        ("region", "eu-north1"),
    ):
        assert (settings[key], settings.source(key)) == (value, where)
    assert (settings["project"], settings.source("project")) == ("dev", where)
    assert settings["subnet_id"] is None  # npa keeps no subnet in a project stanza
    config = load_config(cfg)
    assert config.projects["dev"].model_extra["workbenches"]["b200"]["gpu_platform"]


def test_a_project_alias_wins_over_env_and_our_keys_but_not_over_a_direct_flag(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "config.yaml"
    text = NPA_CONFIG + "region: eu-west1\n"
    settings = _settings(
        cfg, text, {"project": "prod", "tenant_id": "tenant-flag"}, {"NPA_REGION": "env-region"}
    )
    where = f"config {cfg} projects.prod (--project prod)"
    assert (settings["region"], settings.source("region")) == ("us-central1", where)
    assert settings["project_id"] == "project-e00prod"
    assert (settings["tenant_id"], settings.source("tenant_id")) == ("tenant-flag", "flag")


def test_the_default_section_only_fills_what_nothing_else_set(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    settings = _settings(
        cfg, NPA_CONFIG + "region: eu-west1\n", env={"NPA_TENANT_ID": "tenant-e00env"}
    )
    assert (settings["region"], settings.source("region")) == ("eu-west1", f"config {cfg}")
    assert settings.source("tenant_id") == "env NPA_TENANT_ID"
    assert settings["project_id"] == "project-e00dev"


def test_a_project_id_is_the_project_itself(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    settings = _settings(cfg, NPA_CONFIG, {"project": "project-e00other"})
    assert (settings["project_id"], settings.source("project_id")) == (
        "project-e00other",
        "flag --project",
    )
    assert settings["region"] == "eu-north1"  # the rest still from the default section
    later = settings.with_values(project="prod")
    assert later["project_id"] == "project-e00prod" and later["region"] == "us-central1"


def test_an_unknown_alias_is_refused_naming_the_aliases(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"'staging' is neither.*aliases: dev, prod"):
        _settings(tmp_path / "config.yaml", NPA_CONFIG, {"project": "staging"})


def test_npa_choice_rules_only_project_ambiguous_and_legacy_workbenches(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    only = "projects:\n  solo: {project_id: project-e00solo, region: eu-north1}\n"
    assert _settings(cfg, only)["project_id"] == "project-e00solo"
    assert chosen_section(load_config(cfg)).why == "the only project"  # type: ignore[union-attr]

    several = NPA_CONFIG.replace("default_project: dev\n", "")
    settings = _settings(cfg, several)
    assert settings["project_id"] is None
    assert settings["project"] is None
    assert "several projects (dev, prod) and no default_project" in settings.source("project")

    named_default = several.replace("  prod:", "  default:")
    assert _settings(cfg, named_default)["project_id"] == "project-e00prod"

    legacy = (
        "workbenches:\n  old:\n    endpoint: http://10.0.0.7:8080\n"
        "    environment: {project_id: project-e00old, tenant_id: tenant-e00old, "
        "region: eu-west1}\n"
    )
    settings = _settings(cfg, legacy)
    assert settings["project_id"] == "project-e00old"
    legacy_source = "workbenches.old.environment (legacy workbenches)"
    assert settings.source("project_id").endswith(legacy_source)
    assert settings["project"] is None


def test_our_own_keys_stay_strict_beside_npa_sections(tmp_path: Path) -> None:
    cfg = tmp_path / "config.yaml"
    cfg.write_text(NPA_CONFIG + "regoin: eu-west1\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cfg)
    assert "regoin" in caught.value.render() and "did you mean 'region'" in caught.value.render()
    cfg.write_text("projects:\n  dev: {project_id: 7}\n")
    with pytest.raises(ConfigError, match="project_id"):
        load_config(cfg)


def test_an_npa_sections_identity_is_checked_as_an_identifier_where_it_is_read(
    tmp_path: Path,
) -> None:
    """A region in npa's section becomes part of a path (the catalog's file) and a line:
    `../x` is refused with its line, in a project stanza and in a legacy workbench."""
    cfg = tmp_path / "config.yaml"
    cfg.write_text(NPA_CONFIG.replace("region: us-central1", "region: ../../tmp/victim"))
    with pytest.raises(ConfigError) as caught:
        load_config(cfg)
    rendered = caught.value.render()
    assert "config.yaml:14:" in rendered and "projects.prod.region" in rendered, rendered
    legacy = "workbenches:\n  old:\n    environment: {project_id: 'project-e00x\\nregion: x'}\n"
    with pytest.raises(UsageError, match=r"workbenches\.old\.environment\.project_id"):
        _settings(cfg, legacy)
