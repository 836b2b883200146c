"""agent/confinement.py: a tool's `spec_path` is read only inside the workspace root (after
every symlink), and a file there that is not a Soperator spec is reported without a word of
its content; a `terraform_dir` is a folder inside the root (never a sibling whose name starts
with the root's), in a tool call or a workflow step. Each rule below is one way out of the
root or one way to leak a file (through the MCP server: test_agent_confinement_mcp.py)."""

from __future__ import annotations

import os
import shutil
import tracemalloc
from pathlib import Path

import pytest

from npa_sop_tui.agent import confinement
from npa_sop_tui.agent.confinement import (
    CALL_ROOT,
    MAX_SPEC_BYTES,
    OutsideRoot,
    looks_like_spec,
    not_a_spec,
    read_spec_text,
    resolve_in_root,
    workspace_root,
)
from npa_sop_tui.errors import UsageError

ASSETS = Path(__file__).resolve().parents[2] / "assets"
SPEC = "apiVersion: npa.soperator/v0.0.1\nname: demo\nworkers:\n  - {name: cpu, size: 1}\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "cluster.yaml").write_text(SPEC)
    return root


def test_a_sibling_folder_whose_name_starts_with_the_roots_name_is_outside_the_root(
    ws: Path,
) -> None:
    private = ws.parent / "ws-private"
    private.mkdir()
    (private / "cluster.yaml").write_text(SPEC)
    for given in ("../ws-private/cluster.yaml", str(private / "cluster.yaml")):
        with pytest.raises(OutsideRoot):
            resolve_in_root(given, ws)
    # not even to say whether a file exists there
    with pytest.raises(OutsideRoot) as info:
        resolve_in_root("../ws-private/missing.yaml", ws)
    assert info.value.message == (
        f"spec_path '../ws-private/missing.yaml' is outside the workspace root {ws.resolve()}; "
        "tools read spec files only inside it"
    )


def test_a_missing_file_behind_a_link_to_a_folder_outside_is_outside(ws: Path) -> None:
    elsewhere = ws.parent / "elsewhere"
    elsewhere.mkdir()
    (ws / "shared").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutsideRoot):
        resolve_in_root("shared/missing.yaml", ws)


def test_a_file_inside_the_root_resolves_to_its_real_path(ws: Path) -> None:
    real = (ws / "cluster.yaml").resolve()
    assert resolve_in_root("cluster.yaml", ws) == real
    assert resolve_in_root(str(ws / "cluster.yaml"), ws) == real
    (ws / "sub").mkdir()
    (ws / "sub" / "link.yaml").symlink_to(ws / "cluster.yaml")  # a link that stays inside
    assert resolve_in_root("sub/link.yaml", ws) == real
    assert resolve_in_root("sub/../cluster.yaml", ws) == real


def test_a_link_out_of_the_root_and_a_dotdot_path_are_refused_with_exit_2(ws: Path) -> None:
    outside = ws.parent / "outside.yaml"
    outside.write_text(SPEC)
    (ws / "escape.yaml").symlink_to(outside)
    for given in ("escape.yaml", "../outside.yaml"):
        with pytest.raises(OutsideRoot) as info:
            resolve_in_root(given, ws)
        assert info.value.exit_code == 2
        assert info.value.message == (
            f"spec_path {given!r} is outside the workspace root {ws.resolve()}; tools read "
            "spec files only inside it"
        )
        assert info.value.hint == (
            "put the file under the root (the workflow's folder, or the MCP server's --root), "
            "or pass the spec inline as spec/spec_yaml"
        )


def test_a_home_relative_path_is_the_users_home_and_so_outside_a_root_elsewhere(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "cluster.yaml").write_text(SPEC)
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(OutsideRoot):
        resolve_in_root("~/cluster.yaml", ws)
    # with the home as the root, the same path is inside
    assert resolve_in_root("~/cluster.yaml", home) == (home / "cluster.yaml").resolve()


def test_a_missing_file_inside_the_root_says_so_and_names_what(ws: Path) -> None:
    with pytest.raises(UsageError) as info:
        resolve_in_root("nothing.yaml", ws, what="fleet spec_path")
    assert not isinstance(info.value, OutsideRoot)
    assert info.value.message == (
        f"fleet spec_path 'nothing.yaml' does not exist under the workspace root {ws.resolve()}"
    )
    assert info.value.hint == "check the name; paths are relative to the workspace root"
    with pytest.raises(UsageError, match=r"^spec_path 'gone\.yaml' does not exist"):
        resolve_in_root("gone.yaml", ws)


def test_a_folder_is_not_a_file_even_the_root_itself(ws: Path) -> None:
    (ws / "sub").mkdir()
    for given in ("sub", ".", str(ws)):
        with pytest.raises(UsageError) as info:
            resolve_in_root(given, ws)
        assert not isinstance(info.value, OutsideRoot)
        assert info.value.message == f"spec_path {given!r} is not a file"
        assert info.value.hint == "name a cluster.yaml file"


def test_a_link_loop_inside_the_root_is_a_missing_file_not_a_crash(ws: Path) -> None:
    (ws / "loop.yaml").symlink_to(ws / "loop.yaml")
    with pytest.raises(UsageError, match="does not exist under the workspace root"):
        resolve_in_root("loop.yaml", ws)
    (ws.parent / "loop.yaml").symlink_to(ws.parent / "loop.yaml")
    with pytest.raises(OutsideRoot):  # a loop outside stays outside
        resolve_in_root("../loop.yaml", ws)


def test_the_root_is_the_given_one_else_the_calls_else_the_current_folder(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert workspace_root(None) == tmp_path.resolve()
    token = CALL_ROOT.set(ws)
    try:
        assert workspace_root(None) == ws.resolve()
        assert resolve_in_root("cluster.yaml", None) == (ws / "cluster.yaml").resolve()
        assert workspace_root(tmp_path) == tmp_path.resolve()  # a given root wins
    finally:
        CALL_ROOT.reset(token)
    link = tmp_path / "link-to-ws"
    link.symlink_to(ws)
    assert workspace_root(str(link)) == ws.resolve()  # the root is its real path


def test_looks_like_spec_by_its_api_version_or_its_own_keys() -> None:
    assert looks_like_spec(SPEC)
    assert looks_like_spec("name: demo\nworkers: []\n")  # no apiVersion: a spec's own keys
    assert not looks_like_spec("name: demo\n")
    assert not looks_like_spec("workers: []\n")
    assert not looks_like_spec("apiVersion: v1\nname: demo\nworkers: []\n")  # someone else's
    assert not looks_like_spec("apiVersion: npa.soperator/v9\nname: x\nworkers: []\n")
    assert not looks_like_spec("- a list\n- of lines\n")
    assert not looks_like_spec("just: [unclosed\n")
    assert not looks_like_spec("")


def test_read_spec_text_gives_a_specs_text_and_nothing_of_any_other_file(ws: Path) -> None:
    path, text = read_spec_text("cluster.yaml", ws)
    assert (path, text) == ((ws / "cluster.yaml").resolve(), SPEC)
    (ws / "notes.yaml").write_text("password: hunter2\n")
    assert read_spec_text("notes.yaml", ws) == ((ws / "notes.yaml").resolve(), None)
    (ws / "binary.yaml").write_bytes(b"name: \xff\xfe\nworkers: []\n")
    assert read_spec_text("binary.yaml", ws)[1] is None


def test_a_file_over_the_size_bound_is_not_a_spec_and_one_at_it_is_read(ws: Path) -> None:
    padding = MAX_SPEC_BYTES - len(SPEC.encode())
    (ws / "at.yaml").write_text(SPEC + "#" * (padding - 1) + "\n")
    assert os.path.getsize(ws / "at.yaml") == MAX_SPEC_BYTES
    assert read_spec_text("at.yaml", ws)[1] is not None
    (ws / "over.yaml").write_text(SPEC + "#" * padding + "\n")
    assert read_spec_text("over.yaml", ws)[1] is None


def test_a_huge_file_is_never_read_whole(ws: Path) -> None:
    huge = ws / "huge.yaml"
    with huge.open("wb") as handle:
        handle.truncate(64 * MAX_SPEC_BYTES)  # sparse: no disk space taken
    tracemalloc.start()
    try:
        assert read_spec_text("huge.yaml", ws)[1] is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_SPEC_BYTES


def test_not_a_spec_is_one_error_finding_that_names_only_the_given_path() -> None:
    finding = not_a_spec("notes.yaml")
    assert finding.level == "error" and finding.path == "" and finding.file == "notes.yaml"
    assert finding.message == (
        "notes.yaml is not a Soperator spec (a YAML mapping with apiVersion "
        "npa.soperator/v0.0.1); nothing from it is shown"
    )
    assert finding.hint == "name a cluster.yaml, or pass the spec inline as spec/spec_yaml"


def test_a_sibling_whose_name_starts_with_the_roots_is_outside(tmp_path: Path) -> None:
    root, sibling = tmp_path / "ws", tmp_path / "ws-private"
    (root / "recipe").mkdir(parents=True)
    sibling.mkdir()
    assert confinement.recipe_in_root("recipe", root, sandbox=False) == root / "recipe"
    for given in (str(sibling), "../ws-private", f"{root}-private"):
        with pytest.raises(confinement.OutsideRoot, match="outside the workspace root"):
            confinement.recipe_in_root(given, root, sandbox=False)
    (root / "file").write_text("x")
    with pytest.raises(UsageError, match="is not a folder"):
        confinement.recipe_in_root("file", root, sandbox=False)


def test_a_workflow_step_naming_a_recipe_beside_its_folder_is_refused(
    npa_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same rule in a workflow file: exit 2 with the step's file:line, nothing run."""
    from npa_sop_tui.cli.entry import main

    flow = tmp_path / "ws"
    flow.mkdir()
    (tmp_path / "ws-private").mkdir()
    shutil.copy(ASSETS / "cpu-minimal.yaml", flow / "cluster.yaml")
    (flow / "wf.yaml").write_text(
        "apiVersion: npa-sop.workflow/v0.0.1\nname: sneaky\nsteps:\n"
        "  - toolRef: infra.soperator.plan\n    with:\n      spec_path: cluster.yaml\n"
        "      terraform_dir: ../ws-private\n"
    )
    code = main(["workflow", "run", str(flow / "wf.yaml")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "steps[0].with.terraform_dir" in err and "outside the workflow's folder" in err


def test_a_fleet_file_inside_the_root_is_read_bounded(npa_home: Path, tmp_path: Path) -> None:
    """A tool reads no file without a bound: a sparse 3 GB fleet file in the root is refused
    at once, quoting nothing from it."""
    from npa_sop_tui.agent.registry import get_tool

    from testkit.hostile_files import plant

    plant(tmp_path / "fleet.yaml", "sparse")
    with pytest.raises(UsageError, match=r"fleet\.yaml is not a valid fleet file"):
        get_tool("infra.fleet.deploy").call({"spec_path": "fleet.yaml"}, root=tmp_path)


def test_a_terraform_dir_outside_the_root_or_in_the_sandbox_is_refused_saying_why(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    (root / "recipe").mkdir(parents=True)
    (tmp_path / "ws-private").mkdir()
    (root / "out").symlink_to(tmp_path / "ws-private")
    for given in ("../ws-private", "out", "../gone"):
        with pytest.raises(OutsideRoot) as outside:
            confinement.recipe_in_root(given, root, sandbox=False)
        assert outside.value.message == (
            f"terraform_dir {given!r} is outside the workspace root {root}; tools run "
            "Terraform only on a recipe inside it"
        )
        assert outside.value.hint == (
            "put the recipe checkout under the root, or leave terraform_dir out: the recipe "
            "then comes from your settings (recipe.path) or its pinned commit"
        )
    with pytest.raises(UsageError) as sandbox:
        confinement.recipe_in_root("recipe", root, sandbox=True)
    assert sandbox.value.message == (
        "terraform_dir is not taken in the sandbox: it runs its own stand-in recipe, never "
        "Terraform code named by a tool call"
    )
    assert sandbox.value.hint == (
        "leave terraform_dir out (for a recipe of your own, run `npa soperator plan "
        "--terraform-dir DIR` yourself)"
    )
    (root / "file").write_text("x")
    with pytest.raises(UsageError) as not_folder:
        confinement.recipe_in_root("file", root, sandbox=False)
    assert not_folder.value.message == "terraform_dir 'file' is not a folder"
    assert not_folder.value.hint == (
        "name a nebius-solutions-library checkout (or its soperator/ folder)"
    )
