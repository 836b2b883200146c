"""Read-only sessions: the one list of actions that change a cluster or a file.

A session started read-only (`npa-sop serve` without `--operator`, or `npa-sop --read-only`)
offers none of these actions: their keys are removed from every screen before the screen
is shown, so they are absent from the footer, the help, the command palette and the keymap
(not greyed out: a teammate watching a cluster should not see a destroy key at all). The
app's own entry points for them (deploy, destroy, the wizard) refuse as well, so no other
path (a palette command, a button) reaches them.

Screens that bind any of them mix in `OperatorGated` (a test checks every screen does);
the list below is the only place that knows which actions are mutating.
"""

from __future__ import annotations

from textual import events
from textual.dom import DOMNode

OPERATOR_ACTIONS: frozenset[str] = frozenset(
    {
        # change a cluster
        "deploy",
        "apply",
        "retry",  # plans/destroys again after a failure
        "destroy",
        "upgrade",
        "drain",
        "resume",
        "cancel",  # cancels a running deploy
        "cancel_job",
        "run",  # submits a job (the jobs screen's run dialog)
        # change a file on the serving machine
        "set",
        "write",
        # open the wizard, which exists to write a cluster.yaml (and `open` would let a
        # browser read any path of the serving machine)
        "new",
        "open",
        "edit",
    }
)
"""Actions (by name, without namespace) that only an operator session offers."""

READ_ONLY_LABEL = "READ-ONLY"


def is_read_only(node: DOMNode) -> bool:
    """Whether `node` belongs to a read-only session."""
    app: object = node.app
    return bool(getattr(app, "read_only", False))


def offers(node: DOMNode, action: str) -> bool:
    """Whether this session offers `action` (a name like "destroy" or "app.destroy")."""
    name = action.split("(", 1)[0].rsplit(".", 1)[-1]
    return not (name in OPERATOR_ACTIONS and is_read_only(node))


def strip_operator_bindings(node: DOMNode) -> None:
    """Remove the operator actions' keys from `node` in a read-only session."""
    if not is_read_only(node):
        return
    bindings = node._bindings.key_to_bindings
    for key in list(bindings):
        kept = [b for b in bindings[key] if offers(node, b.action)]
        if kept:
            bindings[key] = kept
        else:
            del bindings[key]


class OperatorGated:
    """Mixin for screens with operator keys: in a read-only session those keys are removed
    as the screen mounts, before its footer is drawn or a key reaches it.

    Put it after `Guarded` in the bases (`class StatusScreen(Guarded, OperatorGated, Screen)`).
    """

    def _on_mount(self, event: events.Mount) -> None:
        assert isinstance(self, DOMNode)
        strip_operator_bindings(self)
