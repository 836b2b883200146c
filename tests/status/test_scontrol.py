"""scontrol.py: where one `scontrol show node -o` line is split (the edges the recorded samples
in test_status_slurm_samples.py do not reach)."""

from __future__ import annotations

from npa_sop_tui.status.scontrol import parse_show_node, split_fields

HEAD = "NodeName=gpu-0 Arch=x86_64 CPUTot=8 State=DRAIN+IDLE Weight=1 AveWatts=0"


def test_a_reason_naming_an_earlier_key_slurm_did_not_print_stays_in_the_reason() -> None:
    """Inside free text, only a key Slurm prints LATER ends the value: `MemSpecLimit=` comes
    before `Reason=` in Slurm's order, so in a reason it is text, and the fields after the
    reason are still found."""
    line = (
        f"{HEAD} Reason=set MemSpecLimit=0 by hand [root@2026-12-01T10:00:00] "
        'Extra={"nebius":"x"} InstanceId=i-abc'
    )
    fields = split_fields(line)
    assert "MemSpecLimit" not in fields
    assert fields["Reason"] == "set MemSpecLimit=0 by hand [root@2026-12-01T10:00:00]"
    assert fields["Extra"] == '{"nebius":"x"}' and fields["InstanceId"] == "i-abc"
    node = parse_show_node(line)
    assert (node.reason, node.reason_by) == ("set MemSpecLimit=0 by hand", "root")


def test_unknown_keys_after_a_known_value_each_keep_their_own_value() -> None:
    line = f"{HEAD} Topology=t1 FutureA=a FutureB=b b2 FutureC=c"
    fields = split_fields(line)
    assert fields["Topology"] == "t1"
    assert (fields["FutureA"], fields["FutureB"], fields["FutureC"]) == ("a", "b b2", "c")
