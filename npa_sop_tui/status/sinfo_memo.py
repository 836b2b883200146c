"""Parse 10,000 nodes per poll without redoing the work for the nodes that did not change.

Between two polls of a big cluster almost every line of `sinfo` output is the same. The
memo keeps, per node, the exact lines it came from and the `SlurmNode` built from them; a
node whose lines are unchanged is the *same object* as in the last poll. Parsing then costs
little more than splitting the text, and finding what changed is an identity check
(`diff_nodes` tries `is` first). Only the last poll is kept, so memory stays bounded.
"""

from __future__ import annotations

from npa_sop_tui.status.model import SlurmNode
from npa_sop_tui.status.slurm import parse_nodes_delimited


class SinfoMemo:
    def __init__(self) -> None:
        self._nodes: dict[str, tuple[tuple[str, ...], SlurmNode]] = {}

    def parse_nodes(self, text: str) -> list[SlurmNode]:
        """`parse_nodes_delimited(text)`, reusing the nodes whose lines did not change."""
        groups: dict[str, list[str]] = {}
        for line in text.splitlines():
            if line.strip():
                groups.setdefault(line.split("|", 1)[0], []).append(line)
        previous = self._nodes
        current: dict[str, tuple[tuple[str, ...], SlurmNode]] = {}
        fresh: list[str] = []
        for name, lines in groups.items():
            key = tuple(lines)
            known = previous.get(name)
            if known is not None and known[0] == key:
                current[name] = known
            else:
                fresh.extend(lines)
                current[name] = (key, None)  # type: ignore[assignment]
        if fresh:
            for node in parse_nodes_delimited("\n".join(fresh)):
                current[node.name] = (current[node.name][0], node)
        self._nodes = current
        return [node for _, node in current.values()]
