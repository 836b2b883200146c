"""`npa soperator validate | render | schema | example`: exit codes, text and JSON."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

from testkit.specs import ASSETS, KEY, KEY_FP, REPO


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["soperator", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "root.pub"
    path.write_text(KEY + "\n")
    return path


@pytest.fixture
def broken_spec(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: Bad_Name\nworkers:\n"
        "  - name: gpu\n    platform: gpu-b200-sxm\n    preset: 8gpu-160vcpu-1792gb\n"
        "    size: two\n    fabrc: us-central1-a\n"
    )
    return path


@pytest.mark.parametrize("name", ["cluster", "cpu-minimal", "gpu-reserved"])
def test_validate_examples_exit_0(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, "validate", "--spec", str(ASSETS / f"{name}.yaml"))
    assert code == 0
    assert ": ok (0 errors" in out


def test_validate_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--spec", str(ASSETS / "cluster.yaml"), "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["ok"] is True and doc["name"] == "npasop"
    assert doc["kube_context"] == "nebius-npasop-slurm" and doc["sizing_tier"] == "XS"
    assert [w["name"] for w in doc["workers"]] == ["gpu", "cpu8"]
    assert doc["workers"][0]["capacity_mode"] == "preemptible"
    assert doc["findings"] == []


def test_validate_broken_spec_exit_2_with_positions(
    capsys: pytest.CaptureFixture[str], broken_spec: Path
) -> None:
    code, out, err = run(capsys, "validate", "--spec", str(broken_spec))
    assert code == 2 and out == ""
    assert f"{broken_spec}:7:11 workers[0].size: must be a whole number" in err
    assert f"{broken_spec}:8:5 workers[0].fabrc: unknown field 'fabrc'" in err
    assert "did you mean 'fabric'?" in err
    assert "Traceback" not in err


def test_validate_broken_spec_json(capsys: pytest.CaptureFixture[str], broken_spec: Path) -> None:
    code, out, _ = run(capsys, "validate", "--spec", str(broken_spec), "--output", "json")
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False
    assert {(f["path"], f["line"]) for f in doc["findings"]} == {
        ("name", 2),
        ("workers[0].size", 7),
        ("workers[0].fabrc", 8),
    }


def test_validate_rule_errors_listed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    spec.write_text(
        (ASSETS / "cpu-minimal.yaml").read_text().replace("name: cpu-min", "name: Bad_Name")
    )
    code, _, err = run(capsys, "validate", "--spec", str(spec))
    assert code == 2 and "recipe's company_name rule" in err and f"{spec}:4:7 name:" in err


def test_validate_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "validate", "--spec", str(tmp_path / "nope.yaml"))
    assert code == 2 and "spec file not found" in err


def test_render_writes_private_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key_file: Path
) -> None:
    out_dir = tmp_path / "out"
    code, out, _ = run(
        capsys,
        "render",
        "--spec",
        str(ASSETS / "cluster.yaml"),
        "--out",
        str(out_dir),
        "--root-login-ssh-public-key-file",
        str(key_file),
    )
    assert code == 0
    target = out_dir / "terraform.tfvars.json"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    tfvars = json.loads(target.read_text())
    assert tfvars["company_name"] == "npasop"
    for needle in ("nebius-npasop-slurm", "sizing tier:    XS", "4.1.6", KEY_FP, "TF_VAR_region"):
        assert needle in out
    assert KEY.split()[1] not in out  # only the fingerprint is printed


def test_render_stdout_redacts_capacity_ids(
    capsys: pytest.CaptureFixture[str], key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", "h200=capacityblockgroup-envsecret")
    code, out, err = run(
        capsys,
        "render",
        "--spec",
        str(ASSETS / "gpu-reserved.yaml"),
        "--root-login-ssh-public-key-file",
        str(key_file),
    )
    assert code == 0
    tfvars = json.loads(out)  # stdout is pure JSON; the summary went to stderr
    policy = tfvars["slurm_nodeset_workers"][0]["reservation_policy"]
    assert policy == {"policy": "STRICT", "reservation_ids": ["<redacted>"]}
    assert "envsecret" not in out + err
    assert "quota is often 0" not in err  # the pool is reserved at run time


def test_render_json_and_cli_capacity_override(
    capsys: pytest.CaptureFixture[str], key_file: Path, tmp_path: Path
) -> None:
    code, out, _ = run(
        capsys,
        "render",
        "--spec",
        str(ASSETS / "gpu-reserved.yaml"),
        "--root-login-ssh-public-key-file",
        str(key_file),
        "--capacity-block-group",
        "h200=capacityblockgroup-clisecret",
        "--out",
        str(tmp_path),
        "-o",
        "json",
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["recipe_version"] == "4.1.13" and doc["path"].endswith("terraform.tfvars.json")
    assert doc["workers"][0]["reservation_selector"] == "id"
    assert doc["root_login_key"]["fingerprint"] == KEY_FP
    assert "clisecret" not in out
    written = (tmp_path / "terraform.tfvars.json").read_text()
    assert "capacityblockgroup-clisecret" in written


def test_render_without_key_uses_a_marked_placeholder(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "render", "--spec", str(ASSETS / "cluster.yaml"), "-o", "json")
    assert code == 0
    key = json.loads(out)["root_login_key"]
    assert key["placeholder"] is True and "--root-login-ssh-public-key-file" in key["hint"]


def test_render_bad_capacity_and_version(
    capsys: pytest.CaptureFixture[str], key_file: Path
) -> None:
    base = ["render", "--spec", str(ASSETS / "cluster.yaml")]
    key = ["--root-login-ssh-public-key-file", str(key_file)]
    code, _, err = run(capsys, *base, *key, "--capacity-block-group", "gpu")
    assert code == 2 and "POOL=ID" in err
    code, _, err = run(capsys, *base, *key, "--recipe-version", "5.0.0")
    assert code == 2 and "4.1.6, 4.1.7, 4.1.12, 4.1.13" in err


def test_render_spec_error_json_lists_findings(
    capsys: pytest.CaptureFixture[str], broken_spec: Path
) -> None:
    code, out, _ = run(capsys, "render", "--spec", str(broken_spec), "-o", "json")
    assert code == 2
    assert len(json.loads(out)["findings"]) == 3


def test_schema_is_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "schema")
    assert code == 0
    schema = json.loads(out)
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["additionalProperties"] is False
    assert "apiVersion" in schema["properties"] and schema["required"] == ["name"]
    assert "WorkerPoolSpec" in schema["$defs"]


@pytest.mark.parametrize("name", ["cluster", "cpu-minimal", "gpu-reserved"])
def test_example_matches_assets(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = run(capsys, "example", name)
    assert code == 0 and out == (ASSETS / f"{name}.yaml").read_text()
    code, out, _ = run(capsys, "example", name, "-o", "json")
    assert json.loads(out)["spec"]["apiVersion"] == "npa.soperator/v0.0.1"


def test_headless_validate_imports_nothing_heavy(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from npa_sop_tui.cli.entry import main\n"
        f"code = main(['soperator', 'validate', '--spec', {str(ASSETS / 'cluster.yaml')!r}])\n"
        "heavy = sorted(m for m in ('textual', 'kubernetes', 'asyncssh', 'rich', 'boto3', "
        "'nebius') if m in sys.modules)\n"
        "print('HEAVY', heavy, code)\n"
    )
    env = {**os.environ, "NPA_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=False,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("HEAVY"))
    heavy = line.split("[", 1)[1].split("]", 1)[0]
    for module in ("textual", "kubernetes", "asyncssh"):
        assert module not in heavy, done.stdout
    assert line.endswith(" 0")


def test_validate_accepts_run_time_capacity(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(ASSETS / "gpu-reserved.yaml")
    code, out, _ = run(capsys, "validate", "--spec", spec)
    assert code == 0 and "quota is often 0" in out
    code, out, _ = run(
        capsys, "validate", "--spec", spec, "--capacity-block-group", "h200=capacityblockgroup-1"
    )
    assert code == 0 and "quota is often 0" not in out and "capacityblockgroup-1" not in out
    code, out, _ = run(
        capsys,
        "validate",
        "--spec",
        spec,
        "-o",
        "json",
        "--capacity-block-group",
        "h200=capacityblockgroup-1",
    )
    assert json.loads(out)["workers"][0]["capacity_mode"] == "reserved"


SECRET = "capacityblockgroup-e00topsecret42"


@pytest.mark.parametrize(
    "written",
    [f"[{SECRET}]", f"{{id: {SECRET}}}", "12345678901234", f"!!float {SECRET}", f"[[{SECRET}]]"],
)
@pytest.mark.parametrize("lean", ["1", "0"])
def test_secret_of_wrong_type_is_never_echoed(
    written: str,
    lean: str,
    tmp_path: Path,
    npa_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A capacity block group given as a list, a mapping, a number or a bad tag: the error
    names the field and the kind of value, and the value is in no output (text, JSON, the
    debug log), from `validate` (lean and models) and from `set`."""
    monkeypatch.setenv("NPA_LEAN_VALIDATE", lean)
    text = (ASSETS / "cluster.yaml").read_text()
    spec = tmp_path / "cluster.yaml"
    spec.write_text(
        text.replace("    size: 2\n", f"    size: 2\n    capacity_block_group: {written}\n", 1)
    )
    secret = "12345678901234" if written.isdigit() else SECRET
    seen = []
    for args in (
        ["validate", "--spec", str(spec)],
        ["validate", "--spec", str(spec), "-o", "json"],
        ["set", "--spec", str(spec), "name=other", "-o", "json"],
        ["set", "--spec", str(spec), "name=other"],
    ):
        code, out, err = run(capsys, *args, "--debug")
        assert code == 2, (args, out, err)
        assert "capacity_block_group" in out + err
        assert "value hidden: the field is a secret" in out + err
        seen.append(out + err)
    seen.append((npa_home / "logs" / "npa-debug.log").read_text())
    assert not [s for s in seen if secret in s]


NON_ASCII_ID = "capacityblockgroup-\u00e9secret"


def test_render_prints_a_non_ascii_capacity_id_masked(
    capsys: pytest.CaptureFixture[str], key_file: Path, tmp_path: Path
) -> None:
    """A capacity ID written in the file (the flag refuses one of this shape) is masked in
    the data before it is encoded: JSON would write it `\\u00e9secret`, which a search of
    the encoded text for the ID no longer finds."""
    text = (ASSETS / "gpu-reserved.yaml").read_text()
    spec = tmp_path / "cluster.yaml"
    spec.write_text(text.replace("    size: 4\n", '    size: 4\n    capacity_block_group: '
                                 '"capacityblockgroup-\\u00e9secret"\n', 1))  # fmt: skip
    key = ["--root-login-ssh-public-key-file", str(key_file)]
    for output in ("text", "json"):
        code, out, err = run(capsys, "render", "--spec", str(spec), *key, "-o", output)
        assert code == 0, err
        assert "secret" not in (out + err).replace("<redacted>", "")
        doc = json.loads(out)
        tfvars = doc if output == "text" else doc["tfvars"]
        ids = tfvars["slurm_nodeset_workers"][0]["reservation_policy"]["reservation_ids"]
        assert ids == ["<redacted>"]


def test_a_capacity_id_flag_of_another_shape_is_refused_without_echoing_it(
    capsys: pytest.CaptureFixture[str], key_file: Path
) -> None:
    base = ["render", "--spec", str(ASSETS / "gpu-reserved.yaml")]
    code, out, err = run(capsys, *base, "--capacity-block-group", f"h200={NON_ASCII_ID}")
    assert code == 2 and "is not an ID" in err and "only letters and digits" in err
    assert "secret" not in out + err
