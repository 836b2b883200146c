"""`render` needs no SSH key: without one it renders with a placeholder key, marked as such
in its output, while deploy still refuses to start without a real key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.spec.sshkeys import check_public_key, placeholder_key

SPEC = "apiVersion: npa.soperator/v0.0.1\nname: nokey\nworkers:\n  - name: cpu\n"


def test_render_out_needs_no_ssh_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], npa_home: Path
) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    assert main(["soperator", "render", "--spec", str(spec), "--out", str(out)]) == 0
    text = capsys.readouterr()
    assert "PLACEHOLDER" in text.out + text.err and "ssh-keygen" in text.out + text.err
    tfvars = (out / "terraform.tfvars.json").read_text()
    assert "npa-placeholder-not-a-real-key" in tfvars
    code = main(["soperator", "render", "--spec", str(spec), "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["root_login_key"]["placeholder"] is True
    assert doc["root_login_key"]["source"] == "placeholder"


def test_placeholder_key_is_well_formed_and_says_so() -> None:
    key = placeholder_key()
    assert check_public_key(key.key) == key.key
    assert key.key.endswith("npa-placeholder-not-a-real-key")
