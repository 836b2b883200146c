"""A sandbox cluster lives through the CLI as a real one would: deploy → status → deploy →
resize → destroy, every step exit 0, nothing destructive ever planned, one root key
throughout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main

pytestmark = [pytest.mark.terraform, pytest.mark.slow]

SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: roundtrip
workers:
  - name: cpu
    size: {size}
"""


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    lines = capsys.readouterr().out.strip().splitlines()
    return json.loads(lines[-1])


def _key_files(npa_home: Path) -> list[Path]:
    return sorted((npa_home / "sandbox").rglob("*ed25519*"))


def test_sandbox_cluster_survives_status_redeploy_resize_and_destroy(
    npa_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    # HOME is an empty folder (tests/conftest.py): no ~/.ssh keys, so the sandbox's own
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC.format(size=2))
    deploy = ["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes", "-o", "json"]

    assert main(deploy) == 0
    first = _json(capsys)["result"]
    keys = _key_files(npa_home)
    assert keys and all(k.read_bytes() for k in keys)
    key_bytes = [k.read_bytes() for k in keys]

    # status of a CLI-deployed cluster: Kubernetes from the simulated cloud, simulated Slurm
    assert main(["soperator", "status", "--name", "roundtrip", "--sandbox", "-o", "json"]) == 0
    snap = _json(capsys)
    assert sorted(n["name"] for n in snap["slurm"]["nodes"]) == ["cpu-0", "cpu-1"]
    assert {n["state"] for n in snap["slurm"]["nodes"]} == {"idle"}
    assert snap["verdict"]["state"] == "ready"
    assert [k.read_bytes() for k in _key_files(npa_home)] == key_bytes  # no new key

    # re-deploy right after status: nothing to do, nothing replaced
    assert main(deploy) == 0
    again = _json(capsys)["result"]
    assert again["resources"] == first["resources"]

    # resize: the node group in place; replaced only what the recipe replaces on purpose
    # (the rendered nodesets file, the kube-context step run on every apply)
    spec.write_text(SPEC.format(size=3))
    assert main(["soperator", "plan", "--spec", str(spec), "--sandbox", "-o", "json"]) == 0
    changes = _json(capsys)["result"]["changes"]
    assert changes["destructive"] == [] and changes["remove"] == 2
    assert changes["by_module"]["module.k8s"]["update"] == 1  # the cpu node group
    assert main(deploy) == 0
    assert main(["soperator", "status", "--name", "roundtrip", "--sandbox", "-o", "json"]) == 0
    assert len(_json(capsys)["slurm"]["nodes"]) == 3

    assert main(["soperator", "destroy", "--name", "roundtrip", "--sandbox", "--yes"]) == 0
    capsys.readouterr()
    assert main(["soperator", "list", "--sandbox", "-o", "json"]) == 0
    (entry,) = _json(capsys)["clusters"]
    assert entry["state"] == "destroyed"
