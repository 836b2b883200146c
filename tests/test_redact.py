"""Redaction of secrets and secret-looking patterns in text and events."""

from __future__ import annotations

from pathlib import Path

from npa_sop_tui.events import Diagnostic, LogLine
from npa_sop_tui.redact import Redactor, sensitive_variables


def test_redactor_masks_secrets_and_patterns() -> None:
    red = Redactor(["s3cr3t-value"])
    text = (
        "id capacityblockgroup-abc123 pw s3cr3t-value backups_password = hunter2 "
        "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----"
    )
    out = red.text(text)
    for secret in ("capacityblockgroup-abc123", "s3cr3t-value", "hunter2", "AAAA"):
        assert secret not in out
    event = Diagnostic(operation_id="x", severity="error", summary="capacityblockgroup-zz9")
    assert "zz9" not in red.model(event).summary
    same = LogLine(operation_id="x", stream="npa", text="harmless")
    assert red.model(same) is same


def test_a_secret_containing_another_is_masked_whole() -> None:
    """Protects the longest-first order: masking the short secret first would leave the
    rest of the long one readable."""
    short, long = "tok1234", "tok1234-and-more-XYZ"
    for secrets in ([short, long], [long, short]):
        red = Redactor(secrets, environ={})
        assert red.text(f"a {long} b") == "a *** b"
        red = Redactor(environ={})
        red.add(*secrets)
        assert red.text(f"a {long} b") == "a *** b"


def test_a_secret_inside_an_events_kind_does_not_break_redaction() -> None:
    """The event's `kind` is its own fixed vocabulary: a secret that happens to occur in it
    ("diagnost") is masked in the text fields, and the event stays a valid Diagnostic."""
    red = Redactor(["diagnost"], environ={})
    event = Diagnostic(operation_id="x", severity="error", summary="token diagnost here")
    shown = red.model(event)
    assert shown.kind == "diagnostic" and shown.summary == "token *** here"


def test_the_longest_secret_is_masked_first_whatever_its_spelling() -> None:
    """Longest first by length, not by text: here the contained secret sorts AFTER the one
    containing it, so any other order would leave `a-` and `-b` of the long one readable."""
    short, long = "zzzz1", "a-zzzz1-b"
    red = Redactor([short, long], environ={})
    assert red.text(f"x {long} y") == "x *** y"
    added = Redactor([], environ={})
    added.add(short)
    added.add(long)
    assert added.text(f"x {long} y") == "x *** y"


def test_secrets_shorter_than_four_characters_are_not_masked() -> None:
    """Masking `abc` would blank half of every line; from four characters on it is masked."""
    red = Redactor(["abc", "", "abcd"], environ={})
    assert red.text("abc abcd") == "abc ***"
    red = Redactor([], environ={})
    red.add("xyz", "", "wxyz")
    assert red.text("xyz wxyz") == "xyz ***"


def test_a_password_like_setting_keeps_its_name_and_loses_its_value() -> None:
    red = Redactor([], environ={})
    assert red.text("backups_password = hunter2, ok") == "backups_password = ***, ok"
    assert red.text('{"token": "abc123"}') == '{"token": "***"}'


def test_value_redacts_inside_lists_and_leaves_non_strings() -> None:
    red = Redactor([], environ={})
    data = {"ids": ["capacityblockgroup-x1", 3, None], "n": 2}
    assert red.value(data) == {"ids": ["***", 3, None], "n": 2}
    assert red.value(("capacityblockgroup-x1",)) == ["***"]


def test_secret_env_values_takes_secret_named_values_of_six_characters_or_more() -> None:
    from npa_sop_tui.redact import secret_env_values

    environ = {
        "MY_TOKEN": "abcdef",  # six: a secret
        "OTHER_TOKEN": "abcde",  # five: too short to mask
        "FEATURE_KEY": "Disabled",  # a switch word, any case
        "API_SECRET": "TRUE",
        "SSH_KEY_FILE": "/home/me/.ssh/id",  # a path to a secret, not a secret
        "PUBLIC_KEY": "ssh-ed25519 AAAA",
        "HOME": "/root/secret-place",  # not a secret name
    }
    assert secret_env_values(environ) == ["abcdef"]


def test_secret_env_values_takes_each_capacity_id_not_the_pool_names() -> None:
    from npa_sop_tui.redact import CAPACITY_ENV, secret_env_values

    environ = {CAPACITY_ENV: "gpu=capacityblockgroup-e00aa, cpu=abcd,big=xyz"}
    assert secret_env_values(environ) == ["capacityblockgroup-e00aa", "abcd"]


def test_secret_env_values_takes_the_recipe_s_sensitive_tf_vars() -> None:
    from npa_sop_tui.redact import secret_env_values

    environ = {"TF_VAR_backups_password": "hunter22", "TF_VAR_name": "cluster1"}
    assert secret_env_values(environ, ["backups_password"]) == ["hunter22"]


def test_sensitive_variables_reads_each_block_up_to_the_next(tmp_path: Path) -> None:
    (tmp_path / "a.tf").mkdir()  # unreadable as a file: skipped, the next file still read
    (tmp_path / "b.tf").write_text(
        'variable "name" {\n  type = string\n}\n'
        'variable "password" {\n  type = string\n  sensitive = true\n}\n'
        'variable "region" {\n  type = string\n}\n'
    )
    (tmp_path / "c.tf").write_text('variable "key" {\n  sensitive   =   true\n}\n')
    (tmp_path / "d.tf").write_text(  # the block before the last one ends where the last begins
        'variable "plain" {\n  type = string\n}\nvariable "hidden" {\n  sensitive = true\n}\n'
    )
    (tmp_path / "notes.txt").write_text('variable "x" {\n  sensitive = true\n}\n')
    assert sensitive_variables(tmp_path) == {"password", "key", "hidden"}


def test_a_capacity_id_is_everything_after_the_pool_s_first_equals_sign() -> None:
    from npa_sop_tui.redact import CAPACITY_ENV

    red = Redactor([], environ={CAPACITY_ENV: "gpu=capacityblockgroup-x1=tail"})
    assert red.text("id capacityblockgroup-x1=tail") == "id ***"


def test_key_value_masking_regardless_of_the_keys_case() -> None:
    """Terraform, Helm and provisioners print settings in any case: `PASSWORD=`, `"Token":`,
    `Secret_Key =` are the same secrets as their lower-case spellings."""
    red = Redactor(environ={})
    lines = {
        "PASSWORD=hunter2-upper": "PASSWORD=***",
        'env "Token": "tok-9f8e7d6c"': 'env "Token": "***"',
        "Secret_Key = AbCdEf012345": "Secret_Key = ***",
        "DB_PASSWD:pa55w0rd,": "DB_PASSWD:***,",
        "{'ACCESS_KEY': 'AKIA0000'}": "{'ACCESS_KEY': '***'}",
        "SeCrEt=x1y2z3 next": "SeCrEt=*** next",
    }
    for line, masked in lines.items():
        assert red.text(line) == masked
