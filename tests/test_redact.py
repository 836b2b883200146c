"""Redaction of secrets and secret-looking patterns in text and events."""

from __future__ import annotations

from npa_sop_tui.events import Diagnostic, LogLine
from npa_sop_tui.redact import Redactor


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
