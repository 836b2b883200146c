"""Random argument lists for the fast headless commands never raise out of
`npa_sop_tui.cli.main` (a traceback for the user), end in 0/1/2, and in JSON mode leave
stdout as JSON lines only. Commands that would start Terraform or reach a cluster are kept
out (no --sandbox deploy, status with both sources off)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npa_sop_tui.cli.entry import main

from testkit.hostile import assert_inert, hostile_text

ROOT_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEdXlFusLvYjeeK1rVVinKzN6pzzcRQunPAvc+y2YBhJ t"
COMMANDS = [
    ["soperator", "validate"],
    ["soperator", "render"],
    ["soperator", "schema"],
    ["soperator", "example"],
    ["soperator", "list"],
    ["soperator", "tools"],
    ["soperator", "destroy", "--yes"],
    ["soperator", "status", "--no-kube", "--no-slurm"],
    ["workflow", "run", "--dry-run"],
    ["fleet", "status"],
]
FLAGS = [
    "--spec",
    "--out",
    "--name",
    "--file",
    "--recipe-version",
    "--capacity-block-group",
    "--root-login-ssh-public-key-file",
    "--interval",
    "--login-port",
    "--output",
    "--select",
    "-o",
]
# --watch is left out on purpose: with both sources off it runs until Ctrl-C.


@pytest.fixture(scope="module")
def paths(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    base = tmp_path_factory.mktemp("fuzz")
    good = base / "good.yaml"
    good.write_text(
        "apiVersion: npa.soperator/v0.0.1\nname: fuzz\n"
        f'root_login_ssh_public_key: "{ROOT_KEY}"\nworkers: [{{name: cpu}}]\n'
    )
    (base / "list.yaml").write_text("- 1\n")
    (base / "bin.yaml").write_bytes(b"\xff\xfe\x00garbage")
    (base / "dir").mkdir()
    return [str(p) for p in (good, base / "list.yaml", base / "bin.yaml", base / "dir")] + [
        str(base / "missing.yaml"),
        str(base / "out"),
    ]


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_random_argv_never_escapes(
    data: st.DataObject, paths: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    values = st.one_of(
        st.sampled_from(paths),
        st.sampled_from(["json", "text", "0", "-1", "x", "gpu=", "=", "a=b", "4.1.6", ""]),
        st.text(alphabet="abc-=.,/ ", max_size=8),
    )
    command = data.draw(st.sampled_from(COMMANDS))
    extra: list[str] = []
    # The argument each command needs, so the draws reach the handlers, not only argparse.
    needs = {"validate": "--spec", "render": "--spec", "destroy": "--name", "status": "--name"}
    needed = needs.get(command[1]) or ("--file" if command[0] == "fleet" else None)
    if needed:
        extra += [needed, data.draw(st.sampled_from(paths) if needed != "--name" else values)]
    if command[1] == "render" and data.draw(st.booleans()):
        extra += ["--out", data.draw(st.sampled_from(paths))]
    for _ in range(data.draw(st.integers(0, 4))):
        extra.append(data.draw(st.sampled_from(FLAGS)))
        if data.draw(st.booleans()):
            extra.append(data.draw(values))
    if command[0] == "workflow":
        extra.insert(0, data.draw(st.sampled_from(paths)))
    json_mode = data.draw(st.booleans())
    argv = [*command, *extra] + (["--output", "json"] if json_mode else [])
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage error (2) or --help (0)
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err
    if json_mode:  # stdout is JSON lines only (empty after an argparse usage error)
        for line in out.splitlines():
            if line.strip():
                json.loads(line)


@settings(max_examples=80, deadline=None)
@given(hostile_text())
def test_any_text_slurm_reports_stays_in_its_cell_in_nodes_and_jobs(text: str) -> None:
    """`nodes`, `nodes --node` and `jobs` as text: whatever Slurm says in any field, every
    row stays one line, and nothing in it acts on the terminal."""
    from npa_sop_tui.cli.slurm_cmds import _node_text, _table
    from npa_sop_tui.status.jobs import NodeDetail

    row = [text, f"drained{text}", text, "1/8", "32G", text, text]
    table = _table([row, ["gpu-1", "idle", "main", "0/8", "32G", "", ""]], ["NODE"] * 7)
    assert_inert(table)
    assert len(table.splitlines()) == 3  # the header and two rows, whatever the fields hold
    detail = NodeDetail(name="gpu-0", state=text, reason=text, reason_by=text, gres=text,
                        partitions=[text], k8s_pod=text, node_group=text)  # fmt: skip
    shown = _node_text(detail)
    assert_inert(shown)
    assert len(shown.splitlines()) == 8  # one line per field
