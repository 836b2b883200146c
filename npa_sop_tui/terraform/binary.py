"""Finding a usable Terraform binary, and the environment it runs with.

Terraform gets an environment built from an allow-list (`clean_env`), not all of npa's:
what it, its providers and the recipe's local-exec steps need, and nothing unrelated (a
GitHub token or an API key of another tool has no business in Terraform's logs or crash
reports). See `TERRAFORM_ENV_NAMES` / `TERRAFORM_ENV_PREFIXES`. The allow-list is applied
last, to what npa adds as well: no caller, record or file can hand Terraform a variable
outside it (`LD_PRELOAD`, `BASH_ENV`, …).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from npa_sop_tui.errors import UsageError

# ---------------------------------------------------------------------------------------------
# Versions and discovery


def parse_version(text: str) -> tuple[int, int, int]:
    match = re.match(r"\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if not match:
        raise ValueError(f"not a version: {text!r}")
    major, minor, patch = (int(g) if g else 0 for g in match.groups())
    return major, minor, patch


def satisfies(version: str, constraint: str) -> bool:
    """Terraform's version-constraint syntax: `>= 1.0, < 2`, `~> 1.2`, `= 1.0.3`, `!= 1.1`."""
    have = parse_version(version)
    for part in (p.strip() for p in constraint.split(",")):
        if not part:
            continue
        match = re.match(r"(>=|<=|!=|~>|=|>|<)?\s*(.+)", part)
        assert match is not None  # the pattern matches any non-empty string
        op, raw = match.group(1) or "=", match.group(2).strip()
        want = parse_version(raw)
        if op == "~>":
            pieces = len(raw.lstrip("v").split("."))
            upper = (want[0] + 1, 0, 0) if pieces <= 2 else (want[0], want[1] + 1, 0)
            ok = want <= have < upper
        else:
            ok = {
                "=": have == want,
                "!=": have != want,
                ">": have > want,
                ">=": have >= want,
                "<": have < want,
                "<=": have <= want,
            }[op]
        if not ok:
            return False
    return True


def required_version(recipe_example_dir: Path) -> str | None:
    """The `required_version` constraint of a recipe installation (terraform.tf or any .tf)."""
    candidates = [recipe_example_dir / "terraform.tf", *sorted(recipe_example_dir.glob("*.tf"))]
    for path in candidates:
        if not path.is_file():
            continue
        match = re.search(r'required_version\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"))
        if match:
            return match.group(1)
    return None


@dataclass(frozen=True)
class TerraformBinary:
    path: str
    version: str
    source: str  # where it was found: env, config, PATH, explicit


def _probe_version(path: str) -> str:
    env = clean_env({})
    try:
        done = subprocess.run(
            [path, "version", "-json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
    except OSError as exc:
        raise UsageError(
            f"cannot run Terraform at {path}: {exc.strerror}",
            hint="configure terraform_bin to a working terraform binary",
        ) from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"{path} version -json did not answer within 60 s") from None
    try:
        return str(json.loads(done.stdout)["terraform_version"])
    except (ValueError, KeyError, TypeError):
        # Terraform before 0.13 has no -json for `version`; its first line is "Terraform vX.Y.Z".
        match = re.search(r"Terraform v(\d+\.\d+\.\d+)", done.stdout)
        if match:
            return match.group(1)
    raise UsageError(f"{path} does not look like Terraform (`version -json` gave no version)")


def find_terraform(
    *,
    required: str | None = None,
    configured: str | None = None,
    source: str = "settings",
) -> TerraformBinary:
    """The Terraform to use: the configured binary (`source` says where it was set), else PATH.

    Raises `UsageError` naming what the recipe needs when none is found or it is too old.
    """
    need = f"the recipe requires Terraform {required}" if required else "Terraform is required"
    if configured:
        path = shutil.which(configured) if os.sep not in configured else configured
        if not path or not os.access(path, os.X_OK) or not os.path.isfile(path):
            raise UsageError(
                f"Terraform binary from {source} not found or not executable: {configured}",
                hint=f"{need}; fix {source} or unset it to use terraform from PATH",
            )
        return _checked(path, source, required, need)
    found = shutil.which("terraform")
    if not found:
        raise UsageError(
            "no terraform binary found (none configured, none on PATH)",
            hint=f"{need}; install it or configure terraform_bin",
        )
    return _checked(found, "PATH", required, need)


def _checked(path: str, source: str, required: str | None, need: str) -> TerraformBinary:
    version = _probe_version(path)
    if required and not satisfies(version, required):
        raise UsageError(
            f"Terraform {version} at {path} (from {source}) is too old or not allowed: {need}",
            hint="install a matching Terraform and configure terraform_bin to it",
        )
    return TerraformBinary(path=path, version=version, source=source)


# What Terraform, its providers and the recipe's local-exec steps need from npa's
# environment. Anything else (another tool's token, a cloud key of another provider) stays out.
# What any program npa starts needs to run as a shell would run it (sandbox jobs get these
# and no more: sandbox/job_environment.py); `LC_*` goes with them.
SHELL_ENV_NAMES = frozenset(
    {
        "PATH",  # local-exec runs `nebius`, `kubectl`, `sh`
        "HOME",  # ~/.nebius/config.yaml (the nebius CLI profile), ~/.kube, ~/.terraform.d
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TERM",
    }
)
TERRAFORM_ENV_NAMES = SHELL_ENV_NAMES | frozenset(
    {
        "KUBECONFIG",  # the recipe writes the cluster's kube context
        "SSL_CERT_FILE",  # corporate CA bundles
        "SSL_CERT_DIR",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "all_proxy",
        "CHECKPOINT_DISABLE",  # no version check calls from Terraform (set by npa)
    }
)
TERRAFORM_ENV_PREFIXES = (
    "TF_",  # TF_VAR_* inputs, TF_CLI_CONFIG_FILE, TF_LOG*, TF_PLUGIN_CACHE_DIR, TF_CLI_ARGS*
    "NEBIUS_",  # the nebius provider and CLI (NEBIUS_IAM_TOKEN, profile, endpoint)
    "AWS_",  # the S3 state backend on Nebius Object Storage
    "LC_",
    "XDG_",  # where the nebius CLI and kubectl find their config
)


def allowed_for_terraform(name: str) -> bool:
    return name in TERRAFORM_ENV_NAMES or name.startswith(TERRAFORM_ENV_PREFIXES)


def terraform_environment(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The part of `source` (default: npa's environment) that Terraform may see."""
    source = os.environ if source is None else source
    return {k: v for k, v in source.items() if allowed_for_terraform(k)}


def clean_env(
    extra: Mapping[str, str], *, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment Terraform runs with: the allow-listed part of ours, never a broken
    inherited CLI config, then `extra` (rendered TF_VAR_* identity, lifecycle options),
    and the allow-list once more over all of it: `extra` adds and overrides values, never
    names outside the list."""
    env = {
        **terraform_environment(source),
        "CHECKPOINT_DISABLE": "1",
        "TF_IN_AUTOMATION": "1",
        "TF_INPUT": "0",
        **extra,
    }
    cli_config = env.get("TF_CLI_CONFIG_FILE")
    if cli_config and not Path(cli_config).is_file():
        del env["TF_CLI_CONFIG_FILE"]  # a dangling path makes every init fail
    return terraform_environment(env)
