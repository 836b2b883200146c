"""CLI conventions: `npa-sop --version/--help`, argument errors as JSON, the per-call parser,
shell completion for bash/zsh/fish, `--debug`, and what `validate` imports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npa_sop_tui import __version__
from npa_sop_tui.cli.entry import build_tui_parser, main, tui_main
from npa_sop_tui.cli.parser import SOPERATOR_MODULES, build_parser, command_path

REPO = Path(__file__).resolve().parents[2]
ASSETS = REPO / "assets"
BIN = Path(sys.executable).parent


def _exit_code(call: object, argv: list[str]) -> int:
    try:
        return call(argv)  # type: ignore[operator,no-any-return]
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


# --- npa-sop --------------------------------------------------------------------------------


def test_npa_sop_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(tui_main, ["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"npa-sop-tui {__version__}"
    assert _exit_code(tui_main, ["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: npa-sop ") and "npa soperator tui" not in out
    assert "--sandbox" in out and "--debug" in out


# --- argument errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["soperator", "validate", "-o", "json"], "the following arguments are required"),
        (["soperator", "plan", "-f", "x", "--output=json", "--bogus"], "unrecognized arguments"),
        (["soperator", "valdate", "-o", "json"], "invalid choice: 'valdate'"),
    ],
)
def test_argument_errors_honour_output_json(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    assert _exit_code(main, argv) == 2
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 1  # one JSON document, nothing else on stdout
    doc = json.loads(lines[0])
    assert doc["ok"] is False and doc["error"] == "UsageError"
    assert expected in doc["message"] and doc["usage"].startswith("usage: npa")
    assert expected in err  # people still get the text on stderr


def test_a_mistyped_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert _exit_code(main, ["soperator", "staus", "--name", "x"]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # text mode: stdout stays clean
    assert "hint: did you mean 'status'?" in err


# --- the parser is built per command --------------------------------------------------------


def _full_choices() -> dict[str, object]:
    parser = build_parser(())
    groups = next(a for a in parser._actions if a.dest == "group")
    soperator = groups.choices["soperator"]  # type: ignore[index]
    commands = next(a for a in soperator._actions if a.dest == "command")
    return dict(commands.choices)  # type: ignore[arg-type]


def test_the_module_table_matches_what_the_modules_register() -> None:
    assert sorted(_full_choices()) == sorted(SOPERATOR_MODULES)


@pytest.mark.parametrize(
    "argv",
    [
        ["soperator", "validate", "--spec", "x.yaml", "-o", "json"],
        ["soperator", "deploy", "--spec", "x.yaml", "--sandbox", "--yes"],
        ["soperator", "status", "--name", "demo", "--no-slurm", "--interval", "3"],
        ["soperator", "completion", "fish"],
        ["fleet", "plan", "--file", "f.yaml"],
        ["workflow", "run", "w.yaml", "--dry-run"],
    ],
)
def test_a_partial_parser_reads_arguments_like_the_full_one(argv: list[str]) -> None:
    lazy = build_parser(command_path(argv))
    assert vars(lazy.parse_args(argv)) == vars(build_parser(()).parse_args(argv))
    if argv[0] == "soperator":  # only the called command was built
        groups = next(a for a in lazy._actions if a.dest == "group")
        commands = next(
            a
            for a in groups.choices["soperator"]._actions  # type: ignore[index]
            if a.dest == "command"
        )
        assert list(commands.choices) == [argv[1]]  # type: ignore[arg-type]


def test_validate_imports_neither_the_renderer_nor_other_commands(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from npa_sop_tui.cli.entry import main\n"
        f"code = main(['soperator', 'validate', '--spec', {str(ASSETS / 'cluster.yaml')!r}])\n"
        "names = ('npa_sop_tui.recipe.render', 'npa_sop_tui.home.config',"
        " 'npa_sop_tui.cli.status_cmds',"
        " 'npa_sop_tui.cli.lifecycle_cmds', 'npa_sop_tui.cli.fleet_cmds', 'argcomplete',"
        " 'logging', 'importlib.metadata', 'importlib.resources')\n"
        "print('LOADED', sorted(m for m in names if m in sys.modules), code)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**env, "NPA_HOME": str(tmp_path)},
        check=False,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("LOADED"))
    assert line == "LOADED [] 0", done.stdout + done.stderr


def test_pydantic_plugins_stay_on_when_the_user_says_so(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from npa_sop_tui.cli.entry import main\n"
        f"main(['soperator', 'validate', '--spec', {str(ASSETS / 'cluster.yaml')!r}])\n"
        "print('REAL', hasattr(sys.modules['pydantic.plugin._loader'], 'entry_points'))\n"
    )
    env = {**os.environ, "NPA_HOME": str(tmp_path), "PYDANTIC_DISABLE_PLUGINS": ""}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=False
    )
    assert "REAL True" in done.stdout, done.stdout + done.stderr


# --- shell completion -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shell", "marker"),
    [("bash", "complete -o"), ("zsh", "#compdef npa npa-sop"), ("fish", "complete --command npa")],
)
def test_completion_scripts_are_printed(
    capsys: pytest.CaptureFixture[str], shell: str, marker: str
) -> None:
    assert main(["soperator", "completion", shell]) == 0
    script = capsys.readouterr().out
    assert marker in script and "npa-sop" in script
    checker = shutil.which(shell)
    if checker and shell in ("zsh", "fish"):  # syntax check where that shell is installed
        done = subprocess.run([checker, "-n"], input=script, text=True, capture_output=True)
        assert done.returncode == 0, done.stderr


def _bash_complete(line: str, tmp_path: Path) -> list[str]:
    """What bash offers for `line` with the script loaded (the function `complete -p`
    names, called the way readline calls it)."""
    script = tmp_path / "npa.bash"
    with script.open("w") as out:
        subprocess.run([BIN / "npa", "soperator", "completion", "bash"], stdout=out, check=True)
    words = line.split(" ")
    program = f"""
source {script}
spec=$(complete -p {words[0]}) || exit 3
func=$(sed -E 's/.* -F ([^ ]+) .*/\\1/' <<<"$spec")
COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}
COMP_WORDS=({" ".join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}
"$func" {words[0]} {words[-1]!r} {words[-2]!r}
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", program], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return [w.strip() for w in done.stdout.splitlines() if w.strip()]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_and_options(tmp_path: Path) -> None:
    assert _bash_complete("npa sop", tmp_path) == ["soperator"]
    assert _bash_complete("npa soperator va", tmp_path) == ["validate"]
    commands = _bash_complete("npa soperator ", tmp_path)
    assert {"validate", "plan", "deploy", "status", "destroy", "mcp", "completion"} <= set(commands)
    assert "--output" in _bash_complete("npa soperator validate --o", tmp_path)
    assert _bash_complete("npa soperator completion f", tmp_path) == ["fish"]
    assert "--sandbox" in _bash_complete("npa-sop --s", tmp_path)


# --- --debug ----------------------------------------------------------------------------------


def test_debug_writes_a_private_log_and_says_where(
    npa_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "capacityblockgroup-e00topsecret"
    argv = ["soperator", "validate", "--spec", str(ASSETS / "gpu-reserved.yaml")]
    assert main([*argv, "--capacity-block-group", f"h200={secret}", "--debug"]) == 0
    err = capsys.readouterr().err
    log = npa_home / "logs" / "npa-debug.log"
    assert f"debug log: {log}" in err
    assert log.stat().st_mode & 0o777 == 0o600
    assert (npa_home / "logs").stat().st_mode & 0o777 == 0o700
    text = log.read_text()
    assert "soperator validate --spec" in text and "exit 0" in text
    assert secret not in text  # the command line is logged with the ID masked
    assert import_logging_handlers_left() == 0


def test_debug_logs_errors_and_rotates(
    npa_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from npa_sop_tui.home import debuglog

    monkeypatch.setattr(debuglog, "MAX_BYTES", 2000)
    monkeypatch.setenv("NPA_DEBUG", "1")
    for _ in range(8):
        assert main(["soperator", "status", "--name", "Not_A_Name"]) == 2
    log = npa_home / "logs" / "npa-debug.log"
    assert "error (exit 2): --name 'Not_A_Name' is not a cluster name" in log.read_text()
    assert (npa_home / "logs" / "npa-debug.log.1").is_file()  # rotated, bounded
    assert not (npa_home / "logs" / f"npa-debug.log.{debuglog.BACKUPS + 1}").exists()
    assert "debug log:" in capsys.readouterr().err


def import_logging_handlers_left() -> int:
    """Handlers `--debug` left on the root logger after the call (must be none)."""
    import logging
    import logging.handlers

    root = logging.getLogger()
    return sum(isinstance(h, logging.handlers.RotatingFileHandler) for h in root.handlers)


def test_tui_parser_is_the_apps_own() -> None:
    assert build_tui_parser().prog == "npa-sop"
