"""Hostile outside text: what anyone who can set a Slurm reason, a Kubernetes field, a job's
output or a file in the home could put there, and the checks that a view showed it without
obeying it.

- `ATTACK`: one value with every kind of trouble at once: an OSC 52 clipboard write, a
  window title, a hyperlink, a screen clear, a C1 CSI, a carriage return, a bidi override,
  Rich/Textual markup that crashes (`[/]`) or acts (`[link=…]`, `[@click=…]`).
- `hostile_text()`: a hypothesis strategy of such text, control characters and markup
  mixed with ordinary words.
- `hostile_status(text)`: a `ClusterStatus` whose every cluster-reported string field (Slurm
  nodes, partitions, Kubernetes node groups, pods, conditions, the SlurmCluster, active
  checks, hints) holds `text`.
- `assert_inert(shown)`: `shown` (what a view produced) has no character that acts.
"""

from __future__ import annotations

import unicodedata

from hypothesis import strategies as st

from npa_sop_tui.status.model import (
    ActiveCheckInfo,
    ClusterStatus,
    ComponentPods,
    Condition,
    Freshness,
    Hint,
    KubeNode,
    KubeState,
    NodeGroup,
    NodeSetInfo,
    PodInfo,
    SlurmClusterInfo,
    SlurmNode,
    SlurmPartition,
    SlurmState,
    Verdict,
)

OSC52 = "\x1b]52;c;ZWNobyBvd25lZA==\x07"
TITLE = "\x1b]0;owned\x07"
LINK = "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
ATTACK = (
    f"[/] x {OSC52}{TITLE}{LINK}{CLEAR}\x9b31m\rfake [link=http://evil.example]y[/link] "
    "[@click=app.quit]q\u202e"
)
"""Every kind of trouble in one value."""

VISIBLE = ("␛]52;c;ZWNobyBvd25lZA==␇", "␛]0;owned␇", "␛[2J", "<U+009B>", "␍", "<U+202E>")
"""How `safe_text` shows ATTACK's controls: a view that shows these made them visible."""

_BIDI = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}


def acting(text: str, *, newlines: bool = True) -> list[str]:
    """The characters of `text` a terminal, or a bidi-aware renderer, would act on (line
    feeds only when `newlines` is False: a multi-line view keeps its own)."""
    return [
        c
        for c in text
        if (ord(c) < 0x20 and not (newlines and c == "\n"))
        or 0x7F <= ord(c) <= 0x9F
        or unicodedata.bidirectional(c) in _BIDI
        or c in "\u2028\u2029"
    ]


def assert_inert(shown: str, *, newlines: bool = True) -> None:
    """Nothing in `shown` acts: no control character, no escape sequence, no override."""
    found = acting(shown, newlines=newlines)
    assert not found, f"characters that act reached the view: {found!r} in {shown[:400]!r}"


_CONTROLS = st.sampled_from(
    ["\x1b", "\x07", "\r", "\n", "\t", "\x00", "\x7f", "\x9b", "\x9d", "\u202e", "\u2028"]
)
_PIECES = st.sampled_from(
    [OSC52, TITLE, LINK, CLEAR, "[/]", "[b]", "[/x]", "[link=http://e.x]", "[@click=app.quit]",
     "\\", "\\[", "[red", "]", "gpu-0", "drained"]
)  # fmt: skip


def hostile_text() -> st.SearchStrategy[str]:
    """Text with control characters, escape sequences and markup among ordinary words."""
    piece = st.one_of(_CONTROLS, _PIECES, st.text(max_size=6))
    return st.lists(piece, min_size=1, max_size=8).map("".join).filter(lambda t: t.strip())


def hostile_status(text: str) -> ClusterStatus:
    """A status whose every cluster-reported string field holds `text`."""
    node = SlurmNode(
        name=f"gpu-0{text}",
        state="drained",
        flags=["DRAIN", text],
        display=f"drained{text}",
        partitions=[text],
        cpus=8,
        cpus_allocated=0,
        memory_mb=32768,
        gres=f"gpu:{text}:8",
        features=[text],
        reason=text,
    )
    condition = Condition(type=text, status="False", reason=text, message=text)
    pod = PodInfo(
        name=f"worker-0{text}",
        component=text,
        phase=text,
        ready=False,
        node=text,
        waiting_reason=text,
        message=text,
        job=text,
    )
    return ClusterStatus(
        name="demo",
        context="nebius-demo-slurm",
        taken_at=1_800_000_000.0,
        kube=KubeState(
            context="nebius-demo-slurm",
            node_groups=[
                NodeGroup(
                    name=f"cpu{text}",
                    role=text,
                    ready=1,
                    total=2,
                    nodes=[
                        KubeNode(
                            name=text,
                            ready=False,
                            nodeset=text,
                            nodeset_name=text,
                            notable_conditions=[condition],
                        )
                    ],
                    notable_conditions=[condition],
                )
            ],
            components=[ComponentPods(component=f"worker{text}", ready=0, total=1, pods=[pod])],
            nodesets=[NodeSetInfo(name=text, desired=2, ready=1, phase=text)],
            slurm_cluster=SlurmClusterInfo(
                name=text,
                phase=text,
                conditions=[condition],
            ),
            slurm_cluster_crd=True,
            active_checks=[
                ActiveCheckInfo(
                    name=f"check{text}",
                    type=text,
                    status="Failed",
                    last_run_id=text,
                    failures=[f"job 7: {text}"],
                )
            ],
            waiting_on=[f"check{text}"],
            login_service=True,
            login_ip=text,
        ),
        slurm=SlurmState(
            host="203.0.113.7",
            version=text,
            source_format=text,
            nodes=[node],
            partitions=[
                SlurmPartition(
                    name=text,
                    default=True,
                    available=text,
                    timelimit=text,
                    nodes_total=1,
                    nodes_other=1,
                    nodes=[node.name],
                    state_counts={text: 1},
                )
            ],
        ),
        freshness={
            "kube": Freshness(state="fresh"),
            "slurm": Freshness(state="stale", error=text),
        },
        verdict=Verdict(
            state="degraded",
            summary=text,
            hints=[Hint(code="node-drained", severity="warning", message=text, action=text)],
        ),
    )
