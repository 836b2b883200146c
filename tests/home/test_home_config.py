"""Config file, identity resolution and root-login key lookup."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.home import paths
from npa_sop_tui.home.config import (
    ConfigError,
    Identity,
    NpaConfig,
    load_config,
    require_identity,
)
from npa_sop_tui.home.settings import resolve_settings
from npa_sop_tui.recipe.source import DEFAULT_RECIPE_REF, DEFAULT_RECIPE_URL, RecipeSettings
from npa_sop_tui.spec.model import parse_spec_text
from npa_sop_tui.spec.sshkeys import (
    ENV_FILE,
    ENV_GENERIC,
    ENV_INLINE,
    check_public_key,
    fingerprint,
    resolve_root_login_key,
)

from testkit.specs import KEY, KEY_FP, MINIMAL

OTHER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBdRmq4vQfZ8OJb0J6x3D2b2Qm7dQ0E6i6jQjTzWqv7F other"


def write_config(text: str) -> Path:
    path = paths.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def resolve_identity(
    spec: object,
    config: NpaConfig | None = None,
    *,
    env: dict[str, str] | None = None,
    require: bool = True,
) -> Identity:
    identity = resolve_settings(environ=env, config=config).identity(spec)
    return require_identity(identity) if require else identity


def test_missing_config_is_all_defaults() -> None:
    cfg = load_config()
    assert cfg == NpaConfig()
    assert cfg.recipe.url is None and cfg.recipe.ref is None  # the recipe module's pin
    assert DEFAULT_RECIPE_URL.endswith("nebius-solutions-library.git")
    assert len(DEFAULT_RECIPE_REF) == 40 and RecipeSettings().ref is None
    assert (cfg.login.port, cfg.login.user, cfg.status.interval_seconds) == (22, "root", 10)


def test_config_reads_every_section() -> None:
    write_config(
        "region: eu-north1\ntenant_id: tenant-1\nrecipe: {path: /src/recipe}\n"
        "login: {host: 10.0.0.5, port: 2222}\nstatus: {interval_seconds: 3}\n"
        "tui: {theme: nord, keys: {refresh: r}}\nterraform_bin: /usr/bin/terraform\n"
    )
    cfg = load_config()
    assert cfg.region == "eu-north1" and cfg.recipe.path == "/src/recipe"
    assert cfg.login.port == 2222 and cfg.status.interval_seconds == 3.0
    assert cfg.tui.keys == {"refresh": "r"} and cfg.terraform_bin == "/usr/bin/terraform"


def test_config_errors_are_positioned() -> None:
    path = write_config("region: eu-north1\nregoin: x\nlogin:\n  port: http\n")
    with pytest.raises(ConfigError) as info:
        load_config()
    rendered = [f.render() for f in info.value.findings]
    assert rendered[0].startswith(f"{path}:2:1 regoin: unknown field")
    assert "did you mean 'region'?" in rendered[0]
    assert rendered[1].startswith(f"{path}:4:9 login.port: must be a whole number")
    assert info.value.exit_code == 2 and info.value.json_extra()["findings"]


def test_config_rejects_moving_recipe_ref() -> None:
    write_config("recipe:\n  ref: main\n")
    with pytest.raises(ConfigError, match="40-character commit SHA"):
        load_config()


def test_config_yaml_problems() -> None:
    write_config("a: 1\na: 2\n")
    with pytest.raises(ConfigError, match="duplicate key"):
        load_config()
    write_config("- 1\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config()


def test_identity_order_spec_env_config() -> None:
    cfg = NpaConfig(region="cfg-region", tenant_id="tenant-cfg", project_id="project-cfg")
    spec = parse_spec_text(MINIMAL).spec  # region eu-north1
    env = {"NPA_TENANT_ID": "tenant-env", "NPA_SUBNET_ID": "vpcsubnet-env"}
    ident = resolve_identity(spec, cfg, env=env)
    assert ident == Identity(
        region="eu-north1",
        tenant_id="tenant-env",
        project_id="project-cfg",
        subnet_id="vpcsubnet-env",
    )


def test_identity_names_every_missing_field() -> None:
    spec = parse_spec_text(MINIMAL).spec
    with pytest.raises(UsageError) as info:
        resolve_identity(spec, NpaConfig(), env={})
    text = info.value.render()
    for field, var in (
        ("tenant_id", "NPA_TENANT_ID"),
        ("project_id", "NPA_PROJECT_ID"),
        ("subnet_id", "NPA_SUBNET_ID"),
    ):
        assert f"{field} is not set" in text and var in text
    assert "region is not set" not in text
    assert str(paths.config_path()) in text
    partial = resolve_identity(spec, NpaConfig(), env={}, require=False)
    assert partial.missing() == ["tenant_id", "project_id", "subnet_id"]


def test_identity_prefixes_checked() -> None:
    env = {"NPA_TENANT_ID": "t-1", "NPA_PROJECT_ID": "project-1", "NPA_SUBNET_ID": "vpcsubnet-1"}
    with pytest.raises(UsageError, match="must start with 'tenant-'"):
        resolve_identity(parse_spec_text(MINIMAL).spec, NpaConfig(), env=env)


def test_identity_reads_config_file_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config("tenant_id: tenant-f\nproject_id: project-f\nsubnet_id: vpcsubnet-f\n")
    ident = resolve_identity(parse_spec_text(MINIMAL).spec)
    assert ident.tenant_id == "tenant-f" and ident.subnet_id == "vpcsubnet-f"


# --- SSH keys -------------------------------------------------------------------------------


def test_fingerprint_matches_ssh_keygen() -> None:
    assert fingerprint(KEY) == KEY_FP  # value printed by `ssh-keygen -lf`
    assert check_public_key(f"  {KEY}  \n") == KEY


def test_key_precedence(tmp_path: Path) -> None:
    home = tmp_path / "h"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ecdsa.pub").write_text(OTHER_KEY)
    f_cli, f_env, f_gen, f_cfg = (tmp_path / n for n in ("cli.pub", "env.pub", "gen.pub", "c.pub"))
    for f in (f_cli, f_env, f_gen, f_cfg):
        f.write_text(KEY)
    env = {ENV_INLINE: KEY, ENV_FILE: str(f_env), ENV_GENERIC: str(f_gen)}

    def src(**kw: object) -> str:
        return resolve_root_login_key(home=home, **kw).source  # type: ignore[arg-type]

    full = {"cli_file": f_cli, "spec_key": KEY, "config_path": f_cfg, "env": env}
    assert src(**full).startswith("--root-login-ssh-public-key-file")
    full.pop("cli_file")
    assert src(**full) == "spec root_login_ssh_public_key"
    full.pop("spec_key")
    assert src(**full) == ENV_INLINE
    env.pop(ENV_INLINE)
    assert src(**full).startswith(ENV_FILE)
    env.pop(ENV_FILE)
    assert src(**full).startswith(ENV_GENERIC)
    env.pop(ENV_GENERIC)
    assert src(**full).startswith("config ssh_public_key_path")
    full.pop("config_path")
    assert src(**full).endswith("id_ecdsa.pub")
    (home / ".ssh" / "id_ed25519.pub").write_text(KEY)
    assert src(**full).endswith("id_ed25519.pub")


def test_named_key_sources_fail_loudly(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        resolve_root_login_key(cli_file=tmp_path / "missing.pub", env={}, home=tmp_path)
    private = tmp_path / "id"
    private.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    with pytest.raises(UsageError, match="private key"):
        resolve_root_login_key(cli_file=private, env={}, home=tmp_path)
    with pytest.raises(UsageError, match="supported OpenSSH key type"):
        resolve_root_login_key(env={ENV_INLINE: "not a key"}, home=tmp_path)


def test_no_key_anywhere_says_how_to_provide_one(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        resolve_root_login_key(env={}, home=tmp_path)
    assert info.value.exit_code == 2
    assert "--root-login-ssh-public-key-file" in (info.value.hint or "")
    assert os.environ.get(ENV_INLINE) is None


def _planted_terraform(tmp_path: Path) -> tuple[Path, Path]:
    """A `terraform_bin` that leaves a mark when run: (the binary, the mark)."""
    mark = tmp_path / "planted-terraform-ran"
    binary = tmp_path / "terraform"
    binary.write_text(f'#!/bin/sh\ntouch {mark}\necho \'{{"terraform_version":"1.5.0"}}\'\n')
    binary.chmod(0o755)
    return binary, mark


@pytest.mark.parametrize("how", ["another user's", "writable by others"])
def test_a_config_another_account_could_write_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """Defect: a config.yaml owned by another user, mode 0666, was used silently, its
    terraform_bin included. Refused (exit 2, why and what to do); the binary never runs."""
    from npa_sop_tui.cli.entry import main

    binary, mark = _planted_terraform(tmp_path)
    path = write_config(f"terraform_bin: {binary}\nregion: eu-north1\n")
    if how == "another user's":
        if os.geteuid() != 0:
            pytest.skip("needs root to give the config to another user")
        os.chown(path, 12345, 12345)
        path.chmod(0o644)
        why = f"the config file belongs to uid 12345, not to you (uid {os.geteuid()})"
    else:
        path.chmod(0o666)
        why = "the config file is writable by others (mode 666)"
    spec = Path(__file__).resolve().parents[2] / "assets" / "cpu-minimal.yaml"
    for args in (["config", "show"], ["plan", "--spec", str(spec)]):
        code = main(["soperator", *args])
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert f"{path}" in err and why in err, err
        assert "chmod go-w" in err and "Traceback" not in err
    with pytest.raises(ConfigError, match="nobody else can write"):
        load_config()
    assert not mark.exists()
    path.chmod(0o600)
    if how == "another user's":
        os.chown(path, os.geteuid(), os.getegid())
    assert str(load_config().terraform_bin) == str(binary)  # the user's own file: used
