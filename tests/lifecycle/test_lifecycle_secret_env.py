"""Secrets from the environment never reach a sink: a wrapper around the real Terraform prints
the secret values it was given (plain lines, stderr, JSON diagnostics, the variables file)
and fails the full plan with them in the error; NDJSON, stderr, the operation log and
inventory.json must all show `***` instead. A secret Terraform does not need never gets to it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from npa_sop_tui.redact import Redactor, secret_env_values, sensitive_variables
from npa_sop_tui.sandbox.local_terraform import terraform_binary

SECRETS = {
    "NEBIUS_IAM_TOKEN": "nbtok-Sup3rS3cret-1",
    "AWS_SECRET_ACCESS_KEY": "awsS3cretKeyValue42",
    "TF_VAR_backups_password": "hunter2-backups",
    "NPA_CAPACITY_BLOCK_GROUPS": "gpu=capacityblockgroup-e2etest77",
}
UNRELATED = {"GITHUB_TOKEN": "ghp_unrelatedSecret123", "OPENAI_API_KEY": "sk-notforterraform9"}

WRAPPER = """#!/bin/sh
case "$1" in
  init|plan|apply|destroy)
    echo "wrapper: token=$NEBIUS_IAM_TOKEN aws=$AWS_SECRET_ACCESS_KEY pw=$TF_VAR_backups_password"
    echo "wrapper: gh=${{GITHUB_TOKEN:-absent}} openai=${{OPENAI_API_KEY:-absent}}"
    echo "wrapper stderr: $NEBIUS_IAM_TOKEN" >&2
    grep -o 'capacityblockgroup-[a-z0-9]*' terraform.tfvars.json | sed 's/^/wrapper: tfvars /'
    ;;
esac
case "$1 $*" in
  "plan "*-target*) ;;
  "plan "*)
    printf '%s\\n' '{{"@level":"error","type":"diagnostic","diagnostic":{{"severity":"error",'\\
'"summary":"leaky '"$AWS_SECRET_ACCESS_KEY"'","detail":"token '"$NEBIUS_IAM_TOKEN"'"}}}}'
    exit 1 ;;
esac
exec {real} "$@"
"""

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t"
SPEC = f"""apiVersion: npa.soperator/v0.0.1
name: leaky
root_login_ssh_public_key: {KEY}
workers:
  - name: gpu
    platform: gpu-h200-sxm
    preset: 8gpu-128vcpu-1600gb
    fabric: fabric-3
    size: 1
"""
NPA = [sys.executable, "-c", "import sys; from npa_sop_tui.cli.entry import main; sys.exit(main())"]


def _every_file(root: Path) -> str:
    text = []
    for path in root.rglob("*"):
        if path.is_file() and path.suffix in (".ndjson", ".json", ".yaml", ".log"):
            if path.name in ("terraform.tfvars.json", ".npa-env.json"):
                continue  # Terraform's own 0600 inputs: the one place secrets must be
            text.append(path.read_text(errors="replace"))
    return "\n".join(text)


@pytest.mark.terraform
@pytest.mark.slow
def test_secret_environment_values_are_masked_everywhere(tmp_path: Path, npa_home: Path) -> None:
    wrapper = tmp_path / "terraform"
    wrapper.write_text(WRAPPER.format(real=terraform_binary()))
    wrapper.chmod(0o755)
    spec = tmp_path / "leaky.yaml"
    spec.write_text(SPEC)
    env = {
        **os.environ,
        **SECRETS,
        **UNRELATED,
        "NPA_HOME": str(npa_home),
        "NPA_SANDBOX_HOME": str(npa_home),
        "NPA_TERRAFORM_BIN": str(wrapper),
        "TF_VAR_standin_sleep_seconds": "0",
    }
    runs = [
        subprocess.run(
            [*NPA, "soperator", *args, "--sandbox", "--spec", str(spec)],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        for args in (["deploy", "--yes", "-o", "ndjson"], ["plan", "-v"])
    ]
    for run in runs:
        assert run.returncode == 1, run.stderr  # the wrapper fails the full plan
    assert '"phase": "apply:k8s"' in runs[0].stdout  # phase 1 ran through the wrapper
    sinks = "\n".join(r.stdout + r.stderr for r in runs) + _every_file(npa_home)
    for name, value in {**SECRETS, **UNRELATED}.items():
        assert value.split("=")[-1] not in sinks, f"{name} leaked"
    assert "token=*** aws=*** pw=***" in sinks  # masked, not dropped
    assert "wrapper: tfvars ***" in sinks  # a capacity block ID echoed by Terraform
    assert "terraform plan failed: leaky ***" in sinks  # the error, in inventory and output
    # Terraform got what it needs and nothing unrelated.
    assert "gh=absent openai=absent" in sinks
    assert "wrapper stderr: ***" in runs[1].stderr  # stderr in text mode (-v)


def test_secret_env_values_by_name_and_by_sensitive_declaration(tmp_path: Path) -> None:
    (tmp_path / "variables.tf").write_text(
        'variable "login_blob" {\n  type      = string\n  sensitive = true\n}\n'
        'variable "region" {\n  type = string\n}\n'
        'variable "plain_token" {\n  type = string\n}\n'
    )
    declared = sensitive_variables(tmp_path)
    assert declared == {"login_blob"}
    env = {
        "TF_VAR_login_blob": "blob-value-1",  # secret only because the recipe says so
        "TF_VAR_region": "eu-north1",
        "TF_VAR_plain_token": "tok-value-22",  # secret by its name
        "MY_DB_PASSWORD": "pw-value-333",
        "SSH_KEY_PATH": "/home/u/.ssh/id_ed25519",  # a path to a secret is not one
        "ROOT_PUBLIC_KEY": "ssh-ed25519 AAAApublic",
        "FEATURE_KEY": "true",
        "NPA_CAPACITY_BLOCK_GROUPS": "a=capacityblockgroup-x1y2, b=capacityblockgroup-z3",
    }
    found = set(secret_env_values(env, declared))
    assert found == {
        "blob-value-1",
        "tok-value-22",
        "pw-value-333",
        "capacityblockgroup-x1y2",
        "capacityblockgroup-z3",
    }
    redactor = Redactor(environ=env)
    assert redactor.text("pw-value-333 and tok-value-22") == "*** and ***"
    assert "blob-value-1" in redactor.text("blob-value-1")  # needs the recipe's declaration
    redactor.add_environment(env, declared)
    assert redactor.text("blob-value-1") == "***"
