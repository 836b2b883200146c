"""`npa soperator set --spec F KEY=VALUE…`: the round-trip writer, headless."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from npa_sop_tui.cli.entry import main

from testkit.specs import COMMENTED, changed_lines


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["soperator", "set", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "cluster.yaml"
    path.write_text(COMMENTED)
    return path


def test_set_changes_only_the_lines_asked_for(
    capsys: pytest.CaptureFixture[str], spec: Path
) -> None:
    code, out, _ = run(
        capsys,
        "--spec",
        str(spec),
        "workers[1].size=4",
        "control_plane.login.preset=32vcpu-128gb",
    )
    assert code == 0
    after = spec.read_text()
    assert changed_lines(COMMENTED, after) == [
        "-   login: {preset: 16vcpu-64gb}",
        "+   login: {preset: 32vcpu-128gb}",
        "-         size: 1          # one node for now",
        "+         size: 4          # one node for now",
    ]
    assert "+        size: 4" in out and "changed workers[1].size" in out


def test_set_invalid_result_writes_nothing_and_names_the_line(
    capsys: pytest.CaptureFixture[str], spec: Path
) -> None:
    code, _, err = run(capsys, "--spec", str(spec), "workers[1].size=0", "region=eu-north2")
    assert code == 2
    assert spec.read_text() == COMMENTED
    line = COMMENTED.splitlines().index("        size: 1          # one node for now") + 1
    assert f"{spec}:{line}:" in err and "workers[1].size" in err
    assert "not written" in err


def test_set_json_typo_gets_a_did_you_mean(capsys: pytest.CaptureFixture[str], spec: Path) -> None:
    code, out, _ = run(capsys, "--spec", str(spec), "workers[0].sise=3", "-o", "json")
    assert code == 2
    doc = json.loads(out)
    assert doc["ok"] is False and spec.read_text() == COMMENTED
    (finding,) = [f for f in doc["findings"] if f["level"] == "error"]
    assert finding["path"] == "workers[0].sise" and "size" in finding["hint"]
    assert finding["file"] == str(spec) and finding["line"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["workers[9].size=3"], "2 item(s)"),
        (["workers[1].capacity_block_group=cbg-1"], "secret"),
        (["workers[1].size"], "not KEY=VALUE"),
        (["workers[1].size="], "--unset"),
        (["workers[x].size=1"], "cannot read the key"),
        ([], "nothing to set"),
    ],
)
def test_set_bad_input_exits_2_without_writing(
    capsys: pytest.CaptureFixture[str], spec: Path, args: list[str], message: str
) -> None:
    code, _, err = run(capsys, "--spec", str(spec), *args)
    assert code == 2
    assert message in err and "Traceback" not in err
    assert spec.read_text() == COMMENTED


def test_set_dry_run_unset_and_noop(capsys: pytest.CaptureFixture[str], spec: Path) -> None:
    code, out, _ = run(
        capsys, "--spec", str(spec), "--unset", "workers[1].preemptible", "--dry-run"
    )
    assert code == 0 and "-        preemptible: true" in out
    assert spec.read_text() == COMMENTED
    code, out, _ = run(capsys, "--spec", str(spec), "workers[1].size=1", "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["written"] is False and doc["diff"] == "" and spec.read_text() == COMMENTED
    code, _, _ = run(capsys, "--spec", str(spec), "k8s_version=1.30")
    assert code == 0
    assert "k8s_version: '1.30'" in spec.read_text()  # a version stays a string, quoting kept


def test_set_does_not_import_textual(spec: Path) -> None:
    code = (
        "import sys; from npa_sop_tui.cli.entry import main; "
        f"rc = main(['soperator', 'set', '--spec', {str(spec)!r}, 'workers[1].size=2']); "
        "print(rc, any(m.split('.')[0] in ('textual', 'kubernetes', 'asyncssh') "
        "for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 False"


def _alias_bomb(levels: int = 9) -> str:
    """A few hundred bytes that expand to 9**levels values (a "billion laughs")."""
    lines = [
        "apiVersion: npa.soperator/v0.0.1",
        "name: bomb",
        "a0: &a0 [" + ",".join(["lol"] * 9) + "]",
    ]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_set_alias_bomb_is_refused_fast(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused by counting the composed nodes, before ruamel builds anything, with the
    message `validate` gives; the peak memory stays far below what expanding would need."""
    import tracemalloc

    from ruamel.yaml import YAML

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_alias_bomb())
    assert bomb.stat().st_size < 600

    def never(*_args: object, **_kw: object) -> None:
        raise AssertionError("ruamel loaded the alias bomb")

    monkeypatch.setattr(YAML, "load", never)
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "--spec", str(bomb), "name=x")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and out == ""
    assert f"{bomb}:" in err and "more than 50000 values (YAML aliases expanding?)" in err
    assert "Traceback" not in err
    assert peak < 150 * 1024 * 1024
    assert bomb.read_text() == _alias_bomb()
    capsys.readouterr()
    assert main(["soperator", "validate", "--spec", str(bomb)]) == 2
    assert "more than 50000 values" in capsys.readouterr().err


def test_set_keeps_mode_and_edits_symlink_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = tmp_path / "specs" / "real.yaml"
    real.parent.mkdir()
    real.write_text(COMMENTED)
    real.chmod(0o600)
    link = tmp_path / "cluster.yaml"
    link.symlink_to(real)
    code, _, err = run(capsys, "--spec", str(link), "workers[1].size=4")
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real
    assert "size: 4" in real.read_text()
    assert real.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.yaml"]  # no temp left


def test_set_refuses_when_the_file_changed_between_read_and_write(
    capsys: pytest.CaptureFixture[str], spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another editor (not npa, so no lock) saves while `set` validates: nothing written."""
    from npa_sop_tui.spec.roundtrip import SpecDocument

    theirs = COMMENTED.replace("# one node for now", "# edited elsewhere")
    validated = SpecDocument.validated_text

    def meanwhile(self: SpecDocument, **kw: object) -> str:
        spec.write_text(theirs)
        return validated(self, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(SpecDocument, "validated_text", meanwhile)
    code, _, err = run(capsys, "--spec", str(spec), "workers[1].size=4")
    assert code == 2
    assert "changed on disk since it was read" in err and "Traceback" not in err
    assert spec.read_text() == theirs


@pytest.mark.slow
def test_concurrent_set_loses_no_edit(tmp_path: Path) -> None:
    """Two `set` processes on one file at once, 10 times: both edits land every time (the
    second waits for the first and reads what it wrote) or one is refused, never lost."""
    npa = Path(sys.executable).parent / "npa"
    spec = tmp_path / "cluster.yaml"
    env = {**os.environ, "NPA_LEAN_VALIDATE": "0"}
    for trial in range(10):
        spec.write_text(COMMENTED)
        procs = [
            subprocess.Popen(
                [str(npa), "soperator", "set", "--spec", str(spec), assignment],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for assignment in ("workers[1].size=4", "control_plane.login.preset=32vcpu-128gb")
        ]
        results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
        text = spec.read_text()
        landed = ["size: 4 " in text, "preset: 32vcpu-128gb" in text]
        for (code, err), kept in zip(results, landed, strict=True):
            assert "Traceback" not in err
            assert (code == 0 and kept) or (code == 2 and not kept), (trial, code, err, text)


SECRET = "capacityblockgroup-e00topsecret"
BLOCK = f"    size: 4\n    capacity_block_group: {SECRET}\n"
FLOW = f"  - {{name: h200, capacity_block_group: {SECRET}, platform: gpu-h200-sxm,"
ESCAPED = '    size: 4\n    capacity_block_group: "capacityblockgroup-\\u00e9topsecret"\n'


def _gpu_spec(tmp_path: Path, style: str) -> Path:
    from npa_sop_tui.cli.spec_cmds import example_text

    text = example_text("gpu-reserved")
    if style == "flow":  # the pool on one line: the ID beside the size it shares it with
        pool = text[text.index("  - name: h200") : text.index("  - name: cpu")]
        text = text.replace(pool, FLOW + " preset: 8gpu-128vcpu-1600gb, size: 4,"
                            " fabric: eu-north2-a}\n")  # fmt: skip
    else:
        text = text.replace("    size: 4\n", BLOCK if style == "block" else ESCAPED, 1)
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("style", ["block", "flow", "escaped"])
@pytest.mark.parametrize("output", ["text", "json"])
def test_set_never_shows_a_capacity_block_group_as_diff_context(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, style: str, output: str
) -> None:
    """`set workers[0].size=5` shows the lines around the change; a capacity block group
    ID among them (in any YAML style) is masked, in the text diff and in the JSON one."""
    spec = _gpu_spec(tmp_path, style)
    code, out, err = run(
        capsys, "--spec", str(spec), "workers[0].size=5", "--dry-run", "-o", output
    )
    assert code == 0, err
    diff = out if output == "text" else json.loads(out)["diff"]
    assert "+" in diff and "size: 5" in diff
    assert "capacity_block_group: <redacted>" in diff
    assert "topsecret" not in out + err


def _socket(path: Path) -> Path:
    import socket

    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
    return path


def _loop(path: Path) -> Path:
    other = path.with_name("other.yaml")
    path.symlink_to(other)
    other.symlink_to(path)
    return path


@pytest.mark.parametrize(
    ("make", "reason", "hint"),
    [
        (_socket, "No such device or address", "a socket or a device, not a file"),
        (_loop, "Too many levels of symbolic links", "a symlink that leads back to itself"),
        (lambda p: p.with_name("c" * 300 + ".yaml"), "File name too long", "longer than"),
    ],
    ids=["socket", "symlink-loop", "300-character-name"],
)
def test_set_on_a_socket_a_symlink_loop_or_a_too_long_name_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make: Any, reason: str, hint: str
) -> None:
    target = make(tmp_path / "cluster.yaml")
    for output in ("text", "json"):
        code, out, err = run(capsys, "--spec", str(target), "workers[0].size=5", "-o", output)
        assert code == 2 and "Traceback" not in err
        if output == "json":
            doc = json.loads(out)
            assert doc["ok"] is False and reason in doc["message"]
        else:
            assert f"{target}: cannot open it to edit: {reason}" in err and hint in err
