"""Argument mistakes a newcomer makes get an answer that names the command and what to do:
`--sandbox` where a command cannot use it, `--output json` on every command, global options
before the command, and a sandbox cluster's name given without `--sandbox`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npa_sop_tui.cli.entry import main
from npa_sop_tui.cli.parser import hoist_global_options
from npa_sop_tui.home.files import SandboxHomeEntered
from npa_sop_tui.home.inventory import InventoryEntry, save


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process: exit code (argparse's SystemExit included), stdout, stderr."""
    code = _exit_code(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return code, out, err


def _exit_code(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


def _sandbox_cluster(name: str) -> None:
    with SandboxHomeEntered():
        save(InventoryEntry(name=name, kube_context=f"nebius-{name}-slurm"))


def test_argument_errors(capsys: pytest.CaptureFixture[str], npa_home: Path) -> None:
    _sandbox_cluster("demo")
    # global options before the command (first: a --sandbox call enters the sandbox home)
    code, out, err = _run(["soperator", "--output", "json", "list"], capsys)
    assert code == 0, err
    assert json.loads(out)["clusters"] == []
    # ssh accepts --sandbox and says why there is nothing to SSH to
    code, _, err = _run(["soperator", "ssh", "--name", "demo", "--sandbox"], capsys)
    assert code == 2 and "unrecognized" not in err
    assert "simulated" in err and "nodes --name demo --sandbox" in err
    # an unknown flag points at the command's own help, not the top level's
    code, _, err = _run(["soperator", "ssh", "--name", "demo", "--bogus"], capsys)
    assert code == 2 and "see `npa soperator ssh --help`" in err
    # tui takes --output json and answers it (the app has no JSON), as one JSON document
    code, out, err = _run(["soperator", "tui", "--output", "json"], capsys)
    assert code == 2 and "unrecognized" not in err
    doc = json.loads(out)
    assert doc["ok"] is False and "interactive" in doc["message"] and "status" in doc["hint"]
    # completion with --output json: the script inside one JSON document
    code, out, _ = _run(["soperator", "completion", "bash", "--output", "json"], capsys)
    doc = json.loads(out)
    assert code == 0 and doc["shell"] == "bash" and "npa-sop" in doc["script"]
    code, out, _ = _run(["soperator", "-o", "json", "--sandbox", "list"], capsys)
    assert code == 0 and [c["name"] for c in json.loads(out)["clusters"]] == ["demo"]


def test_global_options_move_after_the_command() -> None:
    assert hoist_global_options(["soperator", "--output", "json", "list"]) == [
        "soperator",
        "list",
        "--output",
        "json",
    ]
    assert hoist_global_options(["soperator", "--sandbox", "-ojson", "nodes", "-n", "x"]) == [
        "soperator",
        "nodes",
        "--sandbox",
        "-ojson",
        "-n",
        "x",
    ]
    for unchanged in (["soperator", "--help"], ["soperator", "list", "-o", "json"], ["fleet"]):
        assert hoist_global_options(unchanged) == unchanged


def test_no_configuration_found_hint(capsys: pytest.CaptureFixture[str], npa_home: Path) -> None:
    """A sandbox cluster's name without --sandbox: exit 2, one period, the fix named."""
    _sandbox_cluster("demo")
    for command in ("status", "nodes"):
        code, out, err = _run(["soperator", command, "--name", "demo"], capsys)
        assert code == 2, (command, out, err)
        assert "sandbox cluster" in err and f"{command} --name demo --sandbox" in err
        assert ".." not in err
    code, out, _ = _run(["soperator", "status", "--name", "demo", "-o", "json"], capsys)
    assert code == 2 and "--sandbox" in json.loads(out)["hint"]


def test_kube_context_error_has_one_period(tmp_path: Path) -> None:
    """The kubernetes client's own message ends in a period; ours must not add a second."""
    from npa_sop_tui.status.kube_collector import KubeCollector
    from npa_sop_tui.status.kube_informer import KubeSettings

    empty = tmp_path / "kubeconfig"
    empty.write_text("")
    collector = KubeCollector(KubeSettings(context="nebius-x-slurm", kubeconfig=empty))
    with pytest.raises(RuntimeError) as caught:
        collector._load_client()
    assert ".." not in str(caught.value) and "get-credentials" in str(caught.value)


def test_destroy_wrong_name_exits_2(
    capsys: pytest.CaptureFixture[str], npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mistyped name at the destroy prompt is bad input (2), and nothing is destroyed."""
    from npa_sop_tui.cli import lifecycle_cmds

    save(InventoryEntry(name="demo", kube_context="nebius-demo-slurm"))
    monkeypatch.setattr(lifecycle_cmds, "_interactive", lambda: True)
    monkeypatch.setattr(lifecycle_cmds, "_ask", lambda question: "dmeo")
    code, _, err = _run(["soperator", "destroy", "--name", "demo"], capsys)
    assert code == 2 and "did not match; nothing destroyed" in err
    from npa_sop_tui.home import inventory

    assert inventory.get("demo") is not None
