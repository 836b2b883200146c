"""User mistakes on every command end in a clear message and exit 2 (or 1 for an
operation that ran and failed) — never a traceback — and `--output json` keeps stdout
machine-readable. Everything here runs in-process through `npa_sop_tui.cli.main`."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.home.inventory import InventoryEntry, save

ROOT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ test"
ASSETS = Path(__file__).resolve().parents[2] / "assets"

SPEC = f"""\
apiVersion: npa.soperator/v0.0.1
name: review
region: us-central1
root_login_ssh_public_key: "{ROOT_KEY}"
workers:
  - name: gpu
    platform: gpu-b200-sxm
    preset: 8gpu-160vcpu-1792gb
    size: 1
    fabric: us-central1-b
    preemptible: true
  - name: cpu
    platform: cpu-d3
    preset: 8vcpu-32gb
"""


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.yaml"
    good.write_text(SPEC)
    listy = tmp_path / "list.yaml"
    listy.write_text("- 1\n- 2\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: npa.soperator/v0.0.1\n- a\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    return {"good": good, "list": listy, "broken": broken, "file": a_file, "dir": folder}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI; an uncaught exception (a traceback for the user) fails the test."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code) if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def _json_lines(out: str) -> list[dict[str, object]]:
    lines = [line for line in out.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # raises on any human text in stdout


# (argv with placeholders, expected exit code)
BAD_ARGV: list[tuple[list[str], int]] = [
    (["soperator", "validate", "--spec", "{missing}"], 2),
    (["soperator", "validate", "--spec", "{dir}"], 2),
    (["soperator", "validate", "--spec", "{list}"], 2),
    (["soperator", "validate", "--spec", "{broken}"], 2),
    (["soperator", "validate", "--spec", "{good}", "--capacity-block-group", "gpu"], 2),
    (["soperator", "render", "--spec", "{good}", "--out", "{file}"], 2),
    (["soperator", "render", "--spec", "{good}", "--out", "/proc/npa-review/x"], 2),
    (["soperator", "render", "--spec", "{good}", "--recipe-version", "9.9"], 2),
    (["soperator", "render", "--spec", "{good}", "--root-login-ssh-public-key-file", "{dir}"], 2),
    (["soperator", "plan", "--spec", "{good}", "--terraform-dir", "{file}"], 2),
    (["soperator", "plan", "--spec", "{missing}", "--sandbox"], 2),
    (["soperator", "destroy", "--name", "nope", "--yes"], 2),
    (["soperator", "tools", "--name", "nope"], 2),
    (["soperator", "status", "--name", "x", "--interval", "0", "--watch"], 2),
    (["soperator", "status", "--name", "x", "--kubeconfig", "{missing}", "--no-slurm"], 2),
    (["workflow", "run", "{missing}"], 2),
    (["workflow", "run", "{good}"], 2),
    (["fleet", "plan", "--file", "{dir}"], 2),
    (["fleet", "plan", "--file", "{good}"], 2),
]


@pytest.mark.parametrize("output", ["text", "json"])
@pytest.mark.parametrize(
    ("argv", "expected"),
    BAD_ARGV,
    ids=[" ".join(a).replace("{", "").replace("}", "") for a, _ in BAD_ARGV],
)
def test_bad_input_exits_cleanly(
    argv: list[str],
    expected: int,
    output: str,
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = {k: str(v) for k, v in files.items()} | {"missing": str(tmp_path / "missing.yaml")}
    real = [part.format(**names) for part in argv] + ["--output", output]
    code, out, err = _run(real, capsys)
    assert code == expected, (real, out, err)
    assert "Traceback" not in err
    if output == "json":
        docs = _json_lines(out)
        assert docs, "--output json must still put a JSON error document on stdout"
        assert docs[-1]["ok"] is False
        assert docs[-1]["message"]
    else:
        assert "error" in err.lower() or "invalid" in err.lower()


def test_render_out_on_a_file_keeps_it(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        ["soperator", "render", "--spec", str(files["good"]), "--out", str(files["file"])], capsys
    )
    assert code == 2
    assert "is a file, not a folder" in err
    assert files["file"].read_text() == "not a folder\n"


def test_render_out_failure_leaves_previous_tfvars(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    code, _, _ = _run(
        ["soperator", "render", "--spec", str(files["good"]), "--out", str(out_dir)], capsys
    )
    assert code == 0
    target = out_dir / "terraform.tfvars.json"
    before = target.read_bytes()
    # Second render of a spec that is now invalid must not touch the file.
    files["good"].write_text(SPEC.replace("size: 1", "size: x"))
    code, _, err = _run(
        ["soperator", "render", "--spec", str(files["good"]), "--out", str(out_dir)], capsys
    )
    assert code == 2 and "size" in err
    assert target.read_bytes() == before
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    # A folder we cannot replace the file in: the old file is kept, no temp file remains.
    os.chmod(out_dir, 0o500)
    try:
        if os.access(out_dir, os.W_OK):  # root ignores the mode; nothing to check then
            return
        code, _, err = _run(
            ["soperator", "render", "--spec", str(ASSETS / "cluster.yaml"), "--out", str(out_dir)],
            capsys,
        )
        assert code == 2 and "Traceback" not in err
        assert target.read_bytes() == before
    finally:
        os.chmod(out_dir, 0o700)


def test_workflow_wrong_api_version_names_the_workflow_version(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(["workflow", "run", str(files["good"])], capsys)
    assert code == 2
    assert "expected npa.workflow/v0.0.1" in err
    assert "expected npa.soperator/v0.0.1" not in err


@pytest.mark.parametrize(
    ("assignment", "needle"),
    [
        ("gpu=capacityblockgroup-x1", "mutually exclusive with preemptible"),
        ("cpu=capacityblockgroup-x1", "valid only for GPU pools"),
        ("nopool=capacityblockgroup-x1", "unknown worker pool 'nopool'"),
    ],
)
def test_validate_refuses_runtime_capacity_that_render_refuses(
    assignment: str, needle: str, files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    spec = str(files["good"])
    code, _, err = _run(
        ["soperator", "validate", "--spec", spec, "--capacity-block-group", assignment], capsys
    )
    assert code == 2, err
    assert needle in err
    assert "capacityblockgroup-x1" not in err  # the ID itself is never shown
    # render said so already; validate and render now agree
    code, _, _ = _run(
        ["soperator", "render", "--spec", spec, "--capacity-block-group", assignment], capsys
    )
    assert code == 2


def _damage(npa_home: Path, text: str | None) -> Path:
    save(InventoryEntry(name="hurt", kube_context="nebius-hurt-slurm", state="deployed"))
    path = npa_home / "soperator" / "hurt" / "inventory.json"
    if text is None:
        path.unlink()
        path.mkdir()
    else:
        path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{\n  "name": bad', "line 2 column"),
        ('{"name": "hurt"}', "kube_context"),
        ('{"name": "other", "kube_context": "nebius-other-slurm"}', "'other'"),
        (None, "is a folder, not a record file"),
    ],
)
def test_damaged_inventory_is_named_not_hidden(
    text: str | None, needle: str, npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _damage(npa_home, text)
    code, out, err = _run(["soperator", "list", "--output", "json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["clusters"] == []
    assert doc["damaged"][0]["path"] == str(path)
    code, out, err = _run(["soperator", "list"], capsys)
    assert code == 0 and str(path) in err and needle in err
    code, out, err = _run(["soperator", "destroy", "--name", "hurt", "--yes"], capsys)
    assert code == 2, err
    assert needle in err and str(path) in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("key", "needle"),
    [
        ("ssh-rsa AAAA", "does not match its key type"),  # 3-byte blob
        ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", "no key material"),  # type name only
    ],
)
def test_truncated_root_key_is_refused(
    key: str, needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "key.yaml"
    spec.write_text(SPEC.replace(ROOT_KEY, key))
    code, _, err = _run(["soperator", "validate", "--spec", str(spec)], capsys)
    assert code == 2, err
    assert f"{spec}:4:" in err and needle in err


@pytest.mark.parametrize(
    "argv",
    [
        ["soperator", "list"],
        ["soperator", "plan", "--spec", "{good}", "--sandbox"],
        ["soperator", "render", "--spec", "{good}"],
    ],
)
def test_npa_home_that_is_a_file(
    argv: list[str],
    files: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("NPA_HOME", str(files["file"]))
    real = [part.format(good=files["good"]) for part in argv] + ["--output", "json"]
    code, out, err = _run(real, capsys)
    assert code == 2, err
    doc = json.loads(out)
    assert "is a file, not a folder" in doc["message"] and str(files["file"]) in doc["message"]


def test_named_terraform_is_never_swapped_for_the_standin(
    files: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With `--terraform-dir <stand-in>` a broken $NPA_TERRAFORM_BIN is an error (as with
    --sandbox), not silently replaced by the PyPI Terraform."""
    from npa_sop_tui.sandbox.local_terraform import STANDIN_RECIPE

    monkeypatch.setenv("NPA_TERRAFORM_BIN", str(tmp_path / "no-terraform"))
    argv = ["soperator", "plan", "--spec", str(files["good"]), "--terraform-dir"]
    code, out, err = _run([*argv, str(STANDIN_RECIPE), "--output", "json"], capsys)
    assert code == 2, err
    doc = _json_lines(out)[-1]
    assert "NPA_TERRAFORM_BIN" in doc["message"] and "not found" in doc["message"]


def test_workflow_missing_spec_path_is_a_bad_file_not_a_failed_step(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workflow = tmp_path / "wf.yaml"
    workflow.write_text(
        "apiVersion: npa-sop.workflow/v0.0.1\n"
        "name: t\n"
        "steps:\n"
        "  - toolRef: infra.soperator.validate\n"
        f"    with: {{spec_path: {files['good'].name}}}\n"
        "  - toolRef: infra.soperator.deploy\n"
        "    with:\n"
        "      spec_path: nowhere.yaml\n"
        "      sandbox: true\n"
    )
    for extra in ([], ["--dry-run"]):
        code, out, err = _run(["workflow", "run", str(workflow), *extra, "-o", "json"], capsys)
        assert code == 2, err
        doc = json.loads(out)  # one error document; no step ran
        assert f"{workflow}:8:7 steps[1].with.spec_path" in doc["message"]
        assert "does not exist" in doc["message"]


def test_destroy_prompt_keeps_json_stdout_clean(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In a terminal, `destroy --output json` without --yes asks for the name on stderr; a
    wrong name is a JSON error document on stdout (exit 2: bad input), never prompt text in
    the JSON."""
    import io

    from npa_sop_tui.cli import lifecycle_cmds

    save(InventoryEntry(name="keep", kube_context="nebius-keep-slurm", state="deployed"))
    monkeypatch.setattr(lifecycle_cmds, "_interactive", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("not-the-name\n"))
    code, out, err = _run(["soperator", "destroy", "--name", "keep", "--output", "json"], capsys)
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False and "nothing destroyed" in doc["message"]
    assert "Type the cluster name" in err


def test_malformed_capacity_env_names_the_variable(
    files: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", "garbage")
    for command in ("validate", "render", "plan", "deploy"):
        code, _, err = _run(["soperator", command, "--spec", str(files["good"])], capsys)
        assert code == 2, (command, err)
        assert "NPA_CAPACITY_BLOCK_GROUPS" in err, (command, err)


@pytest.mark.parametrize("name", ["/", "..", "../escape", "BAD NAME", "Demo"])
@pytest.mark.parametrize(
    "command",
    [
        ["soperator", "status", "--no-kube", "--no-slurm"],
        ["soperator", "destroy", "--yes"],
        ["soperator", "ssh", "--login-host", "127.0.0.1"],
    ],
)
def test_cluster_name_is_checked_before_it_becomes_a_path(
    name: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--name /` used to glob the whole filesystem for terraform.tfstate files (and report a
    stranger's state as this cluster's capacity); `..` reached outside ~/.npa/soperator."""
    code, _, err = _run([*command, "--name", name], capsys)
    assert code == 2, err
    assert f"--name {name!r} is not a cluster name" in err
