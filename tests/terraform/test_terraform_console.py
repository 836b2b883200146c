"""terraform/console.py: one console expression for every variable, its answer decoded."""

from __future__ import annotations

import json

import pytest

from npa_sop_tui.errors import OperationError
from npa_sop_tui.terraform.console import expression, parse_output


def test_one_expression_reads_every_variable_sensitive_ones_unmasked() -> None:
    text = expression(["company_name", "backups_password"], sensitive={"backups_password"})
    assert text == (
        "jsonencode({company_name = var.company_name, "
        "backups_password = nonsensitive(var.backups_password)})"
    )
    with pytest.raises(OperationError, match="not a Terraform variable name"):
        expression(['x) + file("/etc/passwd"'])


def test_the_answer_is_an_hcl_string_holding_json() -> None:
    value = {"name": 'a ${b} %{c} "q"', "n": [1, None, True]}
    # what the console prints: the JSON text as an HCL string literal (template escapes)
    literal = json.dumps(json.dumps(value)).replace("${", "$${").replace("%{", "%%{")
    assert parse_output(f"\n{literal}\n") == value


def test_unknown_or_unexpected_answers_are_errors() -> None:
    with pytest.raises(OperationError, match="required variable has no value") as caught:
        parse_output("(known after apply)\n")
    assert "--region" in (caught.value.hint or "")
    with pytest.raises(OperationError, match="something unexpected"):
        parse_output("Error: nope\n")
    with pytest.raises(OperationError, match="as an object"):
        parse_output(json.dumps(json.dumps([1, 2])) + "\n")
