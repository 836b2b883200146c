"""State settings → where records live; the backend block per Terraform version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home.settings import resolve_settings
from npa_sop_tui.state import backend
from npa_sop_tui.state.local import LocalStore
from npa_sop_tui.state.location import location_from_settings
from npa_sop_tui.state.stores import store_for


def _settings(tmp_path: Path, config: str = "", env: dict[str, str] | None = None, **flags: str):
    path = tmp_path / "config.yaml"
    path.write_text(config)
    return resolve_settings(flags, environ=env or {}, config_file=path)


def test_default_is_local(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert location_from_settings(settings).backend == "local"
    assert isinstance(store_for(settings), LocalStore)


def test_bucket_flag_selects_s3_with_the_nebius_endpoint(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "region: eu-north1\n", **{"state.bucket": "team-state"})
    loc = location_from_settings(settings)
    assert loc.backend == "s3" and loc.bucket == "team-state" and loc.prefix == "npa"
    assert loc.endpoint == "https://storage.eu-north1.nebius.cloud"
    assert loc.key("flow", "terraform.tfstate") == "npa/flow/terraform.tfstate"
    assert settings.source("state.bucket") == "flag"


def test_env_bucket_over_config_backend_local(tmp_path: Path) -> None:
    config = "state:\n  backend: local\n  region: us-central1\n  prefix: team/a\n"
    settings = _settings(tmp_path, config, {"NPA_STATE_BUCKET": "b-1"})
    loc = location_from_settings(settings)
    assert (loc.backend, loc.bucket, loc.prefix, loc.region) == (
        "s3",
        "b-1",
        "team/a",
        "us-central1",
    )
    assert settings.source("state.bucket") == "env NPA_STATE_BUCKET"


def test_s3_without_bucket_or_region_is_a_clear_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no bucket is set"):
        location_from_settings(_settings(tmp_path, "state:\n  backend: s3\n"))
    with pytest.raises(UsageError, match="region is not set"):
        location_from_settings(_settings(tmp_path, "state:\n  bucket: b-1\n"))
    with pytest.raises(UsageError, match="not a valid bucket name"):
        location_from_settings(_settings(tmp_path, "region: r\n", **{"state.bucket": "Bad_Name"}))


def test_config_rejects_unknown_backend(tmp_path: Path) -> None:
    from npa_sop_tui.home.config import ConfigError

    with pytest.raises(ConfigError, match="backend"):
        _settings(tmp_path, "state:\n  backend: gcs\n")


@pytest.mark.parametrize(
    ("version", "present", "absent"),
    [
        ("1.0.3", {"endpoint", "force_path_style"}, {"endpoints", "use_lockfile"}),
        ("1.6.0", {"endpoints", "use_path_style", "skip_requesting_account_id"}, {"endpoint"}),
        ("1.6.3", {"skip_s3_checksum"}, {"use_lockfile"}),
        ("1.12.1", {"use_lockfile", "skip_s3_checksum", "endpoints"}, {"force_path_style"}),
    ],
)
def test_backend_block_follows_the_terraform_version(
    tmp_path: Path, version: str, present: set[str], absent: set[str]
) -> None:
    settings = _settings(tmp_path, "region: eu-north1\n", **{"state.bucket": "team-state"})
    config = backend.backend_config(store_for(settings), "flow", version)
    assert present <= set(config) and not absent & set(config)
    assert config["key"] == "npa/flow/terraform.tfstate"
    assert config["skip_credentials_validation"] and config["skip_region_validation"]
    assert backend.supports_lockfile(version) == ("use_lockfile" in config)
    # never a credential in the file
    assert not {"access_key", "secret_key", "token"} & set(config)


def test_override_file_written_for_s3_and_removed_for_local(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "region: eu-north1\n", **{"state.bucket": "team-state"})
    install = tmp_path / "install"
    install.mkdir()
    backend.configure_installation(install, store_for(settings), "flow", "1.0.3")
    written = (install / backend.OVERRIDE_FILE).read_text()
    assert '"force_path_style": true' in written and "secret" not in written
    backend.configure_installation(install, LocalStore(), "flow", "1.0.3")
    assert not (install / backend.OVERRIDE_FILE).exists()


def test_init_refuses_an_empty_remote_state_while_the_local_one_has_resources(
    tmp_path: Path,
) -> None:
    from npa_sop_tui.state.errors import StateBackendMismatch

    settings = _settings(tmp_path, "region: eu-north1\n", **{"state.bucket": "team-state"})
    install = tmp_path / "install"
    install.mkdir()
    state = '{"version": 4, "serial": 3, "lineage": "x", "resources": [{"mode": "managed", '
    state += '"type": "null_resource", "name": "a", "instances": [{"attributes": {}}]}]}'
    (install / "terraform.tfstate").write_text(state)
    with pytest.raises(StateBackendMismatch, match="local Terraform state with 1 resources") as e:
        backend.init_args(install, store_for(settings), "flow")
    assert "state migrate --name flow --to s3" in e.value.render()
    assert backend.init_args(install, LocalStore(), "flow") == []
    # the other way: a folder set up on the bucket, with the local backend configured
    (install / "terraform.tfstate").unlink()
    (install / ".terraform").mkdir()
    config = {"bucket": "team-state", "key": "npa/flow/terraform.tfstate"}
    record = json.dumps({"backend": {"type": "s3", "config": config}})
    (install / ".terraform" / "terraform.tfstate").write_text(record)
    with pytest.raises(StateBackendMismatch, match="configured here is local") as e:
        backend.init_args(install, LocalStore(), "flow")
    assert "--to local" in e.value.render()
    assert backend.init_args(install, store_for(settings), "flow") == ["-reconfigure"]
