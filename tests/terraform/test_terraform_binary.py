"""Finding and checking Terraform, and the environment it gets (docs/security.md, R8).

Pins the rules of `npa_sop_tui/terraform/binary.py`: how a version reads, Terraform's
constraint syntax, where the recipe's `required_version` is read from, which binary is used
(configured, else PATH) and every refusal with its message and hint, and the allow-list:
Terraform sees only the names its providers and the recipe need, applied last, to what npa
adds too. Terraform is a shell script here: the rules are about what npa asks it and what it
makes of the answer, and a script can answer any way (old, hung, not Terraform at all).
"""

from __future__ import annotations

import locale
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.errors import UsageError
from npa_sop_tui.terraform.binary import (
    SHELL_ENV_NAMES,
    TERRAFORM_ENV_NAMES,
    TerraformBinary,
    allowed_for_terraform,
    clean_env,
    find_terraform,
    parse_version,
    required_version,
    satisfies,
    terraform_environment,
)


def _script(folder: Path, body: str, name: str = "terraform") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return script


def _terraform(folder: Path, version: str, name: str = "terraform") -> Path:
    """A Terraform answering `version -json` as Terraform 0.13+ does."""
    return _script(
        folder, f'echo \'{{"terraform_version": "{version}", "platform": "linux_amd64"}}\'', name
    )


# -- versions ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("1.5.7", (1, 5, 7)),
        ("v1.5.7", (1, 5, 7)),
        ("  1.12", (1, 12, 0)),
        ("2", (2, 0, 0)),
        ("1.9.0-beta1", (1, 9, 0)),
        ("1.10.3\n", (1, 10, 3)),
    ],
)
def test_a_version_reads_with_or_without_its_v_and_missing_parts_count_as_zero(
    text: str, version: tuple[int, int, int]
) -> None:
    assert parse_version(text) == version


def test_text_that_is_not_a_version_is_refused_naming_the_text() -> None:
    with pytest.raises(ValueError) as info:
        parse_version("latest")
    assert str(info.value) == "not a version: 'latest'"


# -- constraints (Terraform's syntax) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "constraint", "ok"),
    [
        # a bare version means `=`
        ("1.0.3", "1.0.3", True),
        ("1.0.4", "1.0.3", False),
        ("1.0.3", "= 1.0.3", True),
        ("1.0.3", "!= 1.0.3", False),
        ("1.0.4", "!= 1.0.3", True),
        # each comparison at its boundary
        ("1.0.3", "> 1.0.3", False),
        ("1.0.4", "> 1.0.3", True),
        ("1.0.3", ">= 1.0.3", True),
        ("1.0.2", ">= 1.0.3", False),
        ("1.0.3", "< 1.0.3", False),
        ("1.0.2", "< 1.0.3", True),
        ("1.0.3", "<= 1.0.3", True),
        ("1.0.4", "<= 1.0.3", False),
        # `~>` with one or two parts allows up to the next major, with three the next minor;
        # the version it names is allowed itself
        ("1.2.0", "~> 1.2", True),
        ("1.1.9", "~> 1.2", False),
        ("1.9.0", "~> 1.2", True),
        ("2.0.0", "~> 1.2", False),
        ("1.0.0", "~> 1", True),
        ("1.9.9", "~> 1", True),
        ("2.0.0", "~> 1", False),
        ("1.2.0", "~> 1.2.0", True),
        ("1.2.9", "~> 1.2.0", True),
        ("1.3.0", "~> 1.2.0", False),
        ("1.2.9", "~> v1.2.0", True),
        ("1.3.0", "~> v1.2.0", False),
        # every part must hold; empty parts and spaces are nothing
        ("1.4.9", ">= 1.0, < 1.5", True),
        ("1.5.0", ">= 1.0, < 1.5", False),
        ("2.5.0", ">= 1.0,, < 2", False),
        ("1.5.0", ">= 1.0,, < 2", True),
        ("2.5.0", ", < 2", False),
        ("1.5.0", "  >=1.0 ,<2 ,", True),
        ("1.5.0", "", True),
    ],
)
def test_a_version_satisfies_a_constraint_as_terraform_reads_it(
    version: str, constraint: str, ok: bool
) -> None:
    assert satisfies(version, constraint) is ok


# -- the recipe's required_version ------------------------------------------------------------


def _tf(folder: Path, name: str, constraint: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(f'terraform {{\n  required_version   =   "{constraint}"\n}}\n')


def test_the_required_version_in_terraform_tf_wins_over_other_files(tmp_path: Path) -> None:
    _tf(tmp_path, "a.tf", ">= 0.1")
    _tf(tmp_path, "terraform.tf", ">= 1.5, < 2.0")
    assert required_version(tmp_path) == ">= 1.5, < 2.0"


def test_without_terraform_tf_the_first_tf_file_naming_a_version_is_read(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('resource "null_resource" "x" {}\n')
    (tmp_path / "a.tf").mkdir()  # a folder named like a file is passed over
    _tf(tmp_path, "versions.tf", "~> 1.9")
    _tf(tmp_path, "zz.tf", ">= 0.1")
    assert required_version(tmp_path) == "~> 1.9"


def test_a_terraform_tf_without_a_version_leaves_the_other_files_to_say(tmp_path: Path) -> None:
    (tmp_path / "terraform.tf").write_text("terraform {}\n")
    _tf(tmp_path, "versions.tf", ">= 1.3")
    assert required_version(tmp_path) == ">= 1.3"


def test_only_tf_files_are_read_and_no_constraint_is_none(tmp_path: Path) -> None:
    _tf(tmp_path, "notes.txt", ">= 9")
    _tf(tmp_path, "old.tf.bak", ">= 9")
    (tmp_path / "main.tf").write_text("terraform {}\n")
    assert required_version(tmp_path) is None
    assert required_version(tmp_path / "missing") is None


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The C locale's ASCII, which Python reads files in when UTF-8 mode is off (PYTHONUTF8=0).

    Under UTF-8 mode the locale does not decide the encoding and the test still holds."""
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)


@pytest.mark.usefixtures("ascii_locale")
def test_a_recipe_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    (tmp_path / "terraform.tf").write_text(
        '# Soperator für Nebius — ☁\nterraform {\n  required_version = ">= 1.5"\n}\n',
        encoding="utf-8",
    )
    assert required_version(tmp_path) == ">= 1.5"


# -- which Terraform: configured, else PATH ---------------------------------------------------


def test_a_configured_path_is_used_and_where_it_was_set_is_named(tmp_path: Path) -> None:
    fake = _terraform(tmp_path / "opt", "1.13.0")
    found = find_terraform(required=">= 1.12", configured=str(fake), source="env NPA_TERRAFORM_BIN")
    assert found == TerraformBinary(
        path=str(fake), version="1.13.0", source="env NPA_TERRAFORM_BIN"
    )


def test_a_configured_bare_name_is_looked_up_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _terraform(tmp_path / "bin", "1.9.5", name="terraform-1.9")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.chdir(tmp_path)  # the name is not a path relative to here
    found = find_terraform(configured="terraform-1.9", source="config terraform_bin")
    assert found == TerraformBinary(path=str(fake), version="1.9.5", source="config terraform_bin")


def test_a_configured_binary_wins_over_terraform_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _terraform(tmp_path / "bin", "1.5.0")
    chosen = _terraform(tmp_path / "opt", "1.13.0")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_terraform(configured=str(chosen)).path == str(chosen)


def _configured_refusal(configured: str, **kwargs: Any) -> UsageError:
    with pytest.raises(UsageError) as info:
        find_terraform(configured=configured, **kwargs)
    return info.value


def test_a_configured_binary_that_is_missing_is_refused_naming_where_it_was_set(
    tmp_path: Path,
) -> None:
    missing = str(tmp_path / "nope")
    refusal = _configured_refusal(missing, required=">= 1.5", source="env NPA_TERRAFORM_BIN")
    assert refusal.message == (
        f"Terraform binary from env NPA_TERRAFORM_BIN not found or not executable: {missing}"
    )
    assert refusal.hint == (
        "the recipe requires Terraform >= 1.5; fix env NPA_TERRAFORM_BIN or unset it to use "
        "terraform from PATH"
    )
    assert refusal.exit_code == 2


def test_a_configured_binary_comes_from_the_settings_unless_told(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope")
    refusal = _configured_refusal(missing)
    assert refusal.message == (
        f"Terraform binary from settings not found or not executable: {missing}"
    )
    assert refusal.hint == (
        "Terraform is required; fix settings or unset it to use terraform from PATH"
    )


def test_a_configured_name_not_on_path_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _terraform(tmp_path / "bin", "1.9.5")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    refusal = _configured_refusal("terraform-1.9", source="config terraform_bin")
    assert "not found or not executable: terraform-1.9" in refusal.message


def test_a_configured_file_without_execute_permission_is_refused(tmp_path: Path) -> None:
    # no execute bit at all, so root is refused too (os.access grants root X_OK only then)
    fake = _terraform(tmp_path, "1.9.5")
    fake.chmod(0o644)
    refusal = _configured_refusal(str(fake), source="config terraform_bin")
    assert refusal.message.endswith(f"not found or not executable: {fake}")


def test_a_configured_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "terraform"
    folder.mkdir(mode=0o755)
    refusal = _configured_refusal(str(folder), source="config terraform_bin")
    assert refusal.message.endswith(f"not found or not executable: {folder}")


def test_without_configuration_terraform_on_path_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _terraform(tmp_path / "bin", "1.9.5")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    found = find_terraform(required="~> 1.9")
    assert found == TerraformBinary(path=str(fake), version="1.9.5", source="PATH")


def test_terraform_on_path_must_satisfy_the_recipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _terraform(tmp_path / "bin", "0.15.5")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(UsageError) as info:
        find_terraform(required=">= 1.0")
    assert info.value.message == (
        f"Terraform 0.15.5 at {fake} (from PATH) is too old or not allowed: "
        "the recipe requires Terraform >= 1.0"
    )
    assert info.value.hint == "install a matching Terraform and configure terraform_bin to it"


def test_a_configured_terraform_the_recipe_does_not_allow_is_refused(tmp_path: Path) -> None:
    fake = _terraform(tmp_path, "1.6.0")
    with pytest.raises(UsageError) as info:
        find_terraform(required="!= 1.6.0", configured=str(fake), source="config terraform_bin")
    assert info.value.message == (
        f"Terraform 1.6.0 at {fake} (from config terraform_bin) is too old or not allowed: "
        "the recipe requires Terraform != 1.6.0"
    )


def test_no_terraform_anywhere_is_refused_saying_what_is_needed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    for required, need in [
        (">= 1.0.0", "the recipe requires Terraform >= 1.0.0"),
        (None, "Terraform is required"),
    ]:
        with pytest.raises(UsageError) as info:
            find_terraform(required=required)
        assert info.value.message == "no terraform binary found (none configured, none on PATH)"
        assert info.value.hint == f"{need}; install it or configure terraform_bin"


# -- asking Terraform its version -------------------------------------------------------------


def test_the_version_is_asked_for_as_json(tmp_path: Path) -> None:
    argv = tmp_path / "argv"
    fake = _script(
        tmp_path / "bin",
        f'printf \'%s\\n\' "$@" > {argv}\necho \'{{"terraform_version": "1.9.5"}}\'',
    )
    assert find_terraform(configured=str(fake)).version == "1.9.5"
    assert argv.read_text().splitlines() == ["version", "-json"]


def test_a_terraform_before_0_13_is_read_from_its_first_line(tmp_path: Path) -> None:
    # `-json` is unknown there: it prints its text answer
    fake = _script(
        tmp_path,
        "echo 'Terraform v0.12.31'\necho\necho 'Your version of Terraform is out of date!'",
    )
    found = find_terraform(configured=str(fake), required=">= 0.12")
    assert found.version == "0.12.31"


@pytest.mark.parametrize(
    "answer",
    [
        "echo 'flag provided but not defined' >&2; exit 1",  # a failing program, no crash
        'echo \'{"version": "1.9.5"}\'',  # JSON without terraform_version
        "echo '[\"1.9.5\"]'",  # JSON that is not an object
        "echo 'terraform 1.9.5'",  # not Terraform's first line
    ],
)
def test_a_program_that_gives_no_terraform_version_is_refused(tmp_path: Path, answer: str) -> None:
    fake = _script(tmp_path, answer)
    refusal = _configured_refusal(str(fake))
    assert (
        refusal.message == f"{fake} does not look like Terraform (`version -json` gave no version)"
    )
    assert refusal.exit_code == 2


def test_a_file_that_cannot_be_run_is_refused_with_the_reason(tmp_path: Path) -> None:
    fake = tmp_path / "terraform"
    fake.write_text("not a program, no #! line\n")
    fake.chmod(0o755)
    refusal = _configured_refusal(str(fake))
    assert refusal.message == f"cannot run Terraform at {fake}: Exec format error"
    assert refusal.hint == "configure terraform_bin to a working terraform binary"


def test_a_terraform_that_does_not_answer_within_60_s_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The one stand-in here: waiting the real 60 s is too long for a test, so subprocess.run
    # notes the limit npa asked for and waits a fifth of a second instead.
    hung = _script(tmp_path, "exec sleep 30")
    asked: list[object] = []
    real_run = subprocess.run

    def run_briefly(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        asked.append(kwargs.get("timeout"))
        return real_run(*args, **{**kwargs, "timeout": 0.2})

    monkeypatch.setattr(subprocess, "run", run_briefly)
    refusal = _configured_refusal(str(hung))
    assert refusal.message == f"{hung} version -json did not answer within 60 s"
    assert asked == [60]


def test_the_version_probe_runs_with_the_allow_listed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = tmp_path / "seen-env"
    fake = _script(
        tmp_path / "bin", f'export -p > {seen}\necho \'{{"terraform_version": "1.9.5"}}\''
    )
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_unrelated")
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", "nebius-token")
    find_terraform(configured=str(fake))
    env = seen.read_text()
    assert "GITHUB_TOKEN" not in env
    assert "NEBIUS_IAM_TOKEN" in env
    assert "TF_IN_AUTOMATION" in env and "CHECKPOINT_DISABLE" in env


# -- the environment Terraform gets (R8) ------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        *sorted(TERRAFORM_ENV_NAMES),
        "TF_VAR_region",
        "TF_CLI_CONFIG_FILE",
        "TF_LOG",
        "NEBIUS_IAM_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "LC_ALL",
        "XDG_CONFIG_HOME",
    ],
)
def test_terraform_gets_what_its_providers_and_the_recipe_need(name: str) -> None:
    assert allowed_for_terraform(name)


@pytest.mark.parametrize(
    "name",
    [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "BASH_ENV",
        "ENV",
        "PYTHONPATH",
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "NPA_HOME",
        "SSH_AUTH_SOCK",
        "tf_var_region",  # the prefixes are case-sensitive, like Terraform's own names
        "path",
        "MY_TF_VAR",  # a prefix counts only at the start
        "PATHS",
        "",
    ],
)
def test_terraform_never_gets_anything_else(name: str) -> None:
    assert not allowed_for_terraform(name)


def test_what_a_shell_needs_terraform_gets_too() -> None:
    assert SHELL_ENV_NAMES <= TERRAFORM_ENV_NAMES
    assert {"PATH", "HOME"} <= SHELL_ENV_NAMES


def test_npas_own_environment_is_filtered_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TF_VAR_from_npa", "1")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_unrelated")
    env = terraform_environment()
    assert env["TF_VAR_from_npa"] == "1" and "GITHUB_TOKEN" not in env
    assert env == {k: v for k, v in os.environ.items() if allowed_for_terraform(k)}


def test_terraform_runs_unattended_from_the_given_environment_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # npa's own environment is not the source here: nothing of it reaches Terraform
    monkeypatch.setenv("TF_VAR_from_npa", "1")
    source = {"PATH": "/usr/bin", "GITHUB_TOKEN": "ghp_unrelated", "TF_VAR_region": "eu-north1"}
    assert clean_env({}, source=source) == {
        "PATH": "/usr/bin",
        "TF_VAR_region": "eu-north1",
        "CHECKPOINT_DISABLE": "1",
        "TF_IN_AUTOMATION": "1",
        "TF_INPUT": "0",
    }


def test_what_npa_adds_sets_values_but_never_names_outside_the_list() -> None:
    source = {"PATH": "/usr/bin", "TF_VAR_region": "eu-north1"}
    extra = {
        "TF_VAR_region": "eu-west1",
        "TF_LOG": "DEBUG",
        "LD_PRELOAD": "/tmp/x.so",
        "BASH_ENV": "/tmp/x.sh",
        "PYTHONPATH": "/tmp",
    }
    assert clean_env(extra, source=source) == {
        "PATH": "/usr/bin",
        "TF_VAR_region": "eu-west1",
        "TF_LOG": "DEBUG",
        "CHECKPOINT_DISABLE": "1",
        "TF_IN_AUTOMATION": "1",
        "TF_INPUT": "0",
    }


def test_a_cli_config_file_is_kept_only_when_it_exists(tmp_path: Path) -> None:
    present = tmp_path / "terraformrc"
    present.write_text("")
    dangling = str(tmp_path / "gone")
    assert clean_env({}, source={"TF_CLI_CONFIG_FILE": str(present)})["TF_CLI_CONFIG_FILE"] == (
        str(present)
    )
    # a dangling path makes every `terraform init` fail, wherever it comes from
    assert "TF_CLI_CONFIG_FILE" not in clean_env({}, source={"TF_CLI_CONFIG_FILE": dangling})
    assert "TF_CLI_CONFIG_FILE" not in clean_env({"TF_CLI_CONFIG_FILE": dangling}, source={})
    # a folder is no config file either
    assert "TF_CLI_CONFIG_FILE" not in clean_env({"TF_CLI_CONFIG_FILE": str(tmp_path)}, source={})
