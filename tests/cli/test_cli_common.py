"""cli/common.py: the shared flag helpers, JSON emission and the one place a command's
error becomes a message and an exit code: never a traceback, one JSON document for scripts,
and no secret from the environment in either."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from npa_sop_tui.cli import common
from npa_sop_tui.cli.common import (
    add_output_flag,
    add_recipe_ref_flag,
    add_state_bucket_flag,
    add_switch,
    capacity_flag,
    cli_flags,
    emit_json,
    identifier_arg,
    open_environment,
    result_document,
    run_handler,
    say,
    text_table,
    wants_json,
    wants_ndjson,
)
from npa_sop_tui.errors import NpaError, OperationError, UsageError
from npa_sop_tui.redact import MASK

TOKEN = "t0k3n-from-the-environment-9f8e7d"
CAPACITY = "capacityblockgroup-e00abcdef"


def _parser(default: bool | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t")
    flags: dict[str, Any] = {"off": ("--read-only", "watch"), "on": ("--operator", "act")}
    if default is None:
        add_switch(parser, "may_act", **flags)
    else:
        add_switch(parser, "may_act", **flags, default=default)
    return parser


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action:
    return next(a for a in parser._actions if flag in a.option_strings)


def test_switch_sets_one_boolean_and_refuses_both(capsys: pytest.CaptureFixture[str]) -> None:
    assert _parser(None).parse_args([]).may_act is False  # off unless told
    assert _parser(False).parse_args([]).may_act is False
    assert _parser(True).parse_args([]).may_act is True
    assert _parser(False).parse_args(["--operator"]).may_act is True
    assert _parser(True).parse_args(["--read-only"]).may_act is False
    with pytest.raises(SystemExit) as exit_:
        _parser(False).parse_args(["--read-only", "--operator"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    assert _option(_parser(False), "--read-only").help == "watch"
    assert _option(_parser(False), "--operator").help == "act"


def _args(handler: Any, **extra: Any) -> argparse.Namespace:
    return argparse.Namespace(handler=handler, **extra)


def _raise(exc: BaseException) -> Any:
    def handler(args: argparse.Namespace) -> int:
        raise exc

    return handler


def test_cli_error_output_masks_a_secret_from_the_environment_in_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    failure = OperationError(f"the API said: bad token {TOKEN}", hint=f"retry without {TOKEN}")
    assert run_handler(_args(_raise(failure), output="text")) == 1
    out, err = capsys.readouterr()
    assert out == ""  # text mode: the error goes to stderr only
    assert err == f"error: the API said: bad token {MASK}\n  hint: retry without {MASK}\n"


def test_a_json_error_document_quoting_a_secret_from_the_environment_is_masked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEBIUS_IAM_TOKEN", TOKEN)
    failure = UsageError(f"token {TOKEN} refused", hint=f"unset {TOKEN}")
    for output in ("json", "ndjson"):
        assert run_handler(_args(_raise(failure), output=output)) == 2
        out, err = capsys.readouterr()
        assert TOKEN not in out + err
        assert json.loads(out) == {
            "ok": False,
            "error": "UsageError",
            "message": f"token {MASK} refused",
            "hint": f"unset {MASK}",
        }
        assert out.count("\n") == 1  # one document, one line
        assert err == f"error: token {MASK} refused\n  hint: unset {MASK}\n"


def test_a_failure_carrying_its_result_puts_the_result_fields_beside_ok_and_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NPA_CAPACITY_BLOCK_GROUPS", f"gpu={CAPACITY}")

    class Degraded(OperationError):
        def json_extra(self) -> dict[str, Any]:
            return {
                "result": {"status": "degraded-validation", "ok": True, "note": CAPACITY},
                "kind": "deploy",
            }

    assert run_handler(_args(_raise(Degraded("GPU check failed")), output="json")) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "degraded-validation" and doc["note"] == MASK
    assert doc["ok"] is False  # ours wins over the result's own `ok`
    assert doc["kind"] == "deploy" and doc["error"] == "Degraded"
    assert doc["result"]["ok"] is True and doc["result"]["note"] == MASK
    assert list(doc)[:3] == ["status", "note", "ok"]  # the result's fields come first


def test_a_result_that_is_not_a_mapping_stays_where_it_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    class Odd(OperationError):
        json_extra = "not callable"

    class Listed(OperationError):
        def json_extra(self) -> dict[str, Any]:
            return {"result": ["a", "b"]}

    run_handler(_args(_raise(Odd("x")), output="json"))
    assert json.loads(capsys.readouterr().out) == {
        "ok": False,
        "error": "Odd",
        "message": "x",
        "hint": None,
    }
    run_handler(_args(_raise(Listed("y")), output="json"))
    doc = json.loads(capsys.readouterr().out)
    assert doc["result"] == ["a", "b"] and "a" not in doc


def test_the_handler_gets_the_arguments_and_its_exit_code_is_the_commands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = _args(lambda given: 7 if given is args else 0, output="json")
    assert run_handler(args) == 7
    assert capsys.readouterr() == ("", "")


def test_no_handler_is_a_usage_exit_not_a_traceback() -> None:
    with pytest.raises(SystemExit) as exit_:
        run_handler(argparse.Namespace())
    assert exit_.value.code == 2


def test_ctrl_c_is_exit_130_with_one_word(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_handler(_args(_raise(KeyboardInterrupt()), output="json")) == 130
    assert capsys.readouterr() == ("", "interrupted\n")


def test_with_debug_the_error_shown_is_also_in_the_debug_log(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="npa_sop_tui.debug"):
        run_handler(_args(_raise(UsageError("bad flag")), output="text", debug=True))
        run_handler(_args(_raise(UsageError("quiet")), output="text", debug=False))
        run_handler(_args(_raise(UsageError("no flag")), output="text"))
    assert [r.getMessage() for r in caplog.records] == ["error (exit 2): bad flag"]
    capsys.readouterr()


def test_a_sandbox_command_runs_in_the_sandbox_home(npa_home: Path) -> None:
    seen: list[str] = []

    def handler(args: argparse.Namespace) -> int:
        seen.append(os.environ["NPA_HOME"])
        return 0

    run_handler(_args(handler))  # a command without the flag
    run_handler(_args(handler, sandbox=False))
    run_handler(_args(handler, sandbox=True))
    assert seen[:2] == [str(npa_home), str(npa_home)]
    assert seen[2] != str(npa_home) and Path(seen[2]).is_dir()
    assert os.environ["NPA_SANDBOX_HOME"] == seen[2]


def test_the_output_flag_offers_ndjson_only_to_streaming_commands() -> None:
    plain = argparse.ArgumentParser(prog="t")
    add_output_flag(plain)
    assert plain.parse_args([]).output == "text"
    assert plain.parse_args(["-o", "json"]).output == "json"
    with pytest.raises(SystemExit):
        plain.parse_args(["--output", "ndjson"])
    option = _option(plain, "-o")
    assert option.choices == ("text", "json")
    assert option.help == "text for people (default), json for scripts (one document)"
    streaming = argparse.ArgumentParser(prog="t")
    add_output_flag(streaming, ndjson=True)
    assert streaming.parse_args(["--output", "ndjson"]).output == "ndjson"
    option = _option(streaming, "--output")
    assert option.choices == ("text", "json", "ndjson")
    assert option.help == (
        "text for people (default), json for scripts (one document), ndjson for the event "
        "stream (one event per line, then the result)"
    )


@pytest.mark.parametrize(
    ("output", "json_", "ndjson"),
    [("text", False, False), ("json", True, False), ("ndjson", True, True), (None, False, False)],
)
def test_machine_output_is_json_or_ndjson(output: str | None, json_: bool, ndjson: bool) -> None:
    args = argparse.Namespace() if output is None else argparse.Namespace(output=output)
    assert wants_json(args) is json_ and wants_ndjson(args) is ndjson


def test_a_result_document_has_the_fields_at_the_top_and_in_result() -> None:
    class Result(BaseModel):
        name: str
        where: Path

    doc = result_document(Result(name="demo", where=Path("/x")))
    assert doc == {
        "name": "demo",
        "where": "/x",
        "ok": True,
        "result": {"name": "demo", "where": "/x"},
    }


def test_emit_json_writes_one_line_in_the_given_order(capsys: pytest.CaptureFixture[str]) -> None:
    emit_json({"z": 1, "a": Path("/p"), "m": [1]})
    assert capsys.readouterr().out == '{"z": 1, "a": "/p", "m": [1]}\n'


def test_the_recipe_and_bucket_flags() -> None:
    parser = argparse.ArgumentParser(prog="t")
    add_recipe_ref_flag(parser)
    add_state_bucket_flag(parser)
    args = parser.parse_args(["--recipe-ref", "abc123", "--state-bucket", "team-state"])
    assert (args.recipe_ref, args.state_bucket) == ("abc123", "team-state")
    assert parser.parse_args(["--ref", "def456"]).recipe_ref == "def456"  # npa's name
    ref, bucket = _option(parser, "--recipe-ref"), _option(parser, "--state-bucket")
    assert (ref.metavar, bucket.metavar) == ("SHA", "BUCKET")
    assert ref.help == (
        "the nebius-solutions-library commit to use (default: the commit that ships the "
        "spec's slurm_operator_version; config recipe.ref)"
    )
    assert bucket.help == (
        "keep Terraform state, records and locks in this Object Storage bucket (also "
        "NPA_STATE_BUCKET, config state.bucket); default: state.backend, else local"
    )


def test_capacity_flags_win_over_the_environment_per_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "NPA_CAPACITY_BLOCK_GROUPS", "gpu=capacityblockgroup-env1,cpu=capacityblockgroup-env2"
    )
    args = argparse.Namespace(capacity_block_group=["gpu=capacityblockgroup-flag"])
    assert capacity_flag(args) == {
        "gpu": "capacityblockgroup-flag",
        "cpu": "capacityblockgroup-env2",
    }
    assert capacity_flag(argparse.Namespace())["gpu"] == "capacityblockgroup-env1"


def test_cli_flags_are_only_the_settings_given() -> None:
    assert cli_flags(argparse.Namespace()) == {}
    args = argparse.Namespace(
        terraform_dir="/tf",
        plugin_cache_dir="/cache",
        root_login_ssh_public_key_file="/k.pub",
        capacity_block_group=["gpu=capacityblockgroup-a1"],
        parallelism=4,
        recipe_ref="abc",
        state_bucket="b",
        profile="prod",
        project="my-npa-alias",
    )
    assert cli_flags(args) == {
        "project": "my-npa-alias",
        "terraform_dir": "/tf",
        "plugin_cache_dir": "/cache",
        "root_login_key_file": "/k.pub",
        "capacity": {"gpu": "capacityblockgroup-a1"},
        "parallelism": 4,
        "recipe.ref": "abc",
        "state.bucket": "b",
        "profile": "prod",
    }
    assert cli_flags(argparse.Namespace(capacity_block_group=[], parallelism=0)) == {
        "parallelism": 0  # 0 is a value given; an empty list is no capacity flag
    }


def test_the_environment_is_the_sandboxs_with_sandbox_and_takes_the_flags() -> None:
    real = open_environment(argparse.Namespace(parallelism=3), recipe_ref=None)
    assert not real.is_sandbox
    assert real.settings["parallelism"] == 3 and real.settings.source("parallelism") == "flag"
    sandbox = open_environment(argparse.Namespace(sandbox=True), parallelism=5)
    assert sandbox.is_sandbox and sandbox.settings["parallelism"] == 5


def test_the_error_document_is_ours_even_for_an_error_without_a_hint() -> None:
    assert common._error_document(NpaError("plain")) == {
        "ok": False,
        "error": "NpaError",
        "message": "plain",
        "hint": None,
    }


def test_say_shows_each_control_keeps_line_feeds_and_picks_its_stream(
    capsys: pytest.CaptureFixture[str],
) -> None:
    say("title\x1b]0;owned\x07\nnext")
    say("on stderr", err=True)
    out, err = capsys.readouterr()
    assert out == "title␛]0;owned␇\nnext\n" and err == "on stderr\n"


def test_a_text_table_aligns_columns_and_shows_controls_in_cells() -> None:
    table = text_table([["NAME", "STATE"], ["gpu-0\x1b[2J", "idle"], ["a\nb", "x"]])
    assert table == "NAME       STATE\ngpu-0␛[2J  idle\na␊b        x"


def test_an_identifier_flag_refuses_another_shape_naming_the_field() -> None:
    parse = identifier_arg("region")
    assert parse("eu-north1") == "eu-north1" and parse.__name__ == "region"
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse("../x")
    assert str(info.value) == (
        "region '../x' is not a region name: lowercase letters, digits and single dashes "
        "(e.g. eu-north1)"
    )
