"""environment.py: the real-cloud Environment answers the core's questions (which recipe
commit, whose identity, which root key, where the login node is) from the settings alone,
falls back to placeholders and a generated key only for a stand-in recipe, and says what
to set when something is missing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from npa_sop_tui.environment import Environment, placeholder_identity
from npa_sop_tui.environment_choice import open_environment
from npa_sop_tui.home.config import Identity, IdentityError
from npa_sop_tui.home.settings import resolve_settings
from npa_sop_tui.recipe.source import STANDIN_MARKER, Recipe
from npa_sop_tui.spec.model import SoperatorSpec, spec_from_mapping
from npa_sop_tui.spec.sshkeys import KeyNotFound

IDENTITY = {
    "tenant_id": "tenant-e00example",
    "project_id": "project-e00example",
    "subnet_id": "vpcsubnet-e00example",
}


def _spec(**extra: object) -> SoperatorSpec:
    data = {
        "apiVersion": "npa.soperator/v0.0.1",
        "name": "env-test",
        "region": "eu-north1",
        "workers": [{"name": "cpu", "platform": "cpu-d3", "preset": "16vcpu-64gb", "size": 2}],
        **extra,
    }
    return spec_from_mapping(data)


def _recipe(root: Path, *, standin: bool) -> Recipe:
    root.mkdir(parents=True, exist_ok=True)
    if standin:
        (root / STANDIN_MARKER).write_text("{}\n")
    return Recipe(root=root, origin="terraform-dir", ref=None, version=None)


def test_the_real_environment_is_not_the_sandbox_and_has_no_label() -> None:
    env = open_environment(flags={"region": "eu-west1"})
    assert type(env) is Environment
    assert (env.kind, env.label, env.is_sandbox) == ("real", "", False)
    assert env.settings["region"] == "eu-west1"
    assert env.settings.source("region") == "flag"


def test_settings_given_are_used_as_they_are() -> None:
    settings = resolve_settings({"region": "eu-west1"})
    assert open_environment(settings=settings).settings is settings


def test_with_settings_is_the_same_kind_over_other_settings() -> None:
    env = open_environment(flags={"region": "eu-west1"})
    other = resolve_settings({"region": "us-central1"})
    clone = env.with_settings(other)
    assert type(clone) is type(env) and clone.settings is other
    assert env.settings["region"] == "eu-west1"  # the original keeps its own


@pytest.mark.parametrize(
    ("flags", "config_ref", "expected"),
    [
        ({"recipe.ref": "abc123"}, None, ("abc123", None)),  # named for this call: explicit
        ({}, "d" * 40, (None, "d" * 40)),  # pinned in config: only where it fits the spec
        ({}, None, (None, None)),
    ],
    ids=["flag", "config", "none"],
)
def test_recipe_refs_tell_a_named_commit_from_a_pinned_one(
    npa_home: Path, flags: dict[str, str], config_ref: str | None, expected: tuple[str, ...]
) -> None:
    if config_ref:
        (npa_home / "config.yaml").write_text(f"recipe:\n  ref: {config_ref}\n")
    env = open_environment(flags=flags)
    assert env.recipe_refs() == expected


def test_a_caller_set_ref_counts_as_explicit() -> None:
    env = Environment(resolve_settings().with_values(**{"recipe.ref": "cafe00"}))
    assert env.recipe_refs() == ("cafe00", None)


def test_will_clone_only_without_a_terraform_dir_or_recipe_path(tmp_path: Path) -> None:
    assert open_environment().will_clone()
    assert not open_environment(flags={"terraform_dir": str(tmp_path)}).will_clone()
    assert not open_environment(flags={"recipe.path": str(tmp_path)}).will_clone()


def test_placeholder_identity_fills_only_what_is_unset() -> None:
    filled = placeholder_identity(Identity(region="eu-west1", project_id="project-mine"))
    assert filled == Identity(
        region="eu-west1",
        tenant_id="tenant-sandbox",
        project_id="project-mine",
        subnet_id="vpcsubnet-sandbox",
    )


def test_identity_for_a_stand_in_recipe_needs_nothing_set(tmp_path: Path) -> None:
    env = open_environment()
    identity = env.identity(_spec(), _recipe(tmp_path / "standin", standin=True))
    assert identity.project_id == "project-sandbox" and identity.region == "eu-north1"


def test_identity_for_a_real_recipe_says_what_to_set(tmp_path: Path) -> None:
    env = open_environment()
    with pytest.raises(IdentityError) as caught:
        env.identity(_spec(), _recipe(tmp_path / "real", standin=False))
    text = caught.value.render()
    for name in ("tenant_id", "project_id", "subnet_id"):
        assert f"{name} is not set" in text
    assert caught.value.exit_code == 2


def test_identity_from_the_settings_is_returned_whole(tmp_path: Path) -> None:
    env = open_environment(flags=IDENTITY)
    identity = env.identity(_spec(), _recipe(tmp_path / "real", standin=False))
    assert identity == Identity(region="eu-north1", **IDENTITY)


def test_identity_is_checked_before_cloning_a_recipe() -> None:
    with pytest.raises(IdentityError):
        open_environment().identity_before_recipe(_spec())


def test_a_stand_in_folder_or_a_missing_folder_defers_the_identity_check(tmp_path: Path) -> None:
    standin = _recipe(tmp_path / "standin", standin=True).root
    nested = tmp_path / "nested"
    _recipe(nested / "soperator", standin=True)
    for folder in (standin, nested, tmp_path / "absent"):
        open_environment(flags={"terraform_dir": str(folder)}).identity_before_recipe(_spec())
    open_environment(flags={"recipe.path": str(tmp_path)}).identity_before_recipe(_spec())


def test_a_real_recipe_folder_checks_the_identity_at_once(tmp_path: Path) -> None:
    real = _recipe(tmp_path / "real", standin=False).root
    with pytest.raises(IdentityError):
        open_environment(flags={"terraform_dir": str(real)}).identity_before_recipe(_spec())


def test_the_spec_s_root_key_wins_and_a_stand_in_gets_a_generated_one(tmp_path: Path) -> None:
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEXAMPLEexampleEXAMPLEexampleEXAMPLEexam me@host"
    env = open_environment()
    with pytest.raises(KeyNotFound):
        env.root_login_key(_spec(), _recipe(tmp_path / "real", standin=False))
    with pytest.raises(KeyNotFound):
        env.root_login_key(_spec())
    generated = env.root_login_key(_spec(), _recipe(tmp_path / "standin", standin=True))
    assert generated.key.startswith("ssh-ed25519 ")
    assert env.root_login_key(_spec(), _recipe(tmp_path / "s2", standin=True)) == generated
    given = env.root_login_key(_spec(root_login_ssh_public_key=key))
    assert given.key == key and given.source.startswith("spec")


def test_without_a_login_address_the_login_shell_says_what_to_set(tmp_path: Path) -> None:
    env = open_environment()
    shell, why = env.login_shell(
        _spec(), kubeconfig=tmp_path / "no-kubeconfig", context="nebius-env-test-slurm"
    )
    assert shell is None
    assert "login.host" in why or "--login-host" in why


def test_the_real_cloud_adds_nothing_of_the_sandbox_s() -> None:
    env = open_environment()
    assert env.terraform_env() == {}
    with env.cluster_api("nebius-env-test-slurm") as kubeconfig:
        assert kubeconfig is None  # the default kubeconfig, where the recipe wrote it

    async def hooks() -> tuple[object, object, object, object]:
        return (
            await env.observer("env-test", None),
            await env.start_live(),
            await env.warm_up(),
            await env.aclose(),
        )

    assert asyncio.run(hooks()) == (None, None, None, None)
