"""Slurm hostlists: `gpu-[001-003,007],login-0` → ["gpu-001", "gpu-002", …, "login-0"]."""

from __future__ import annotations

import re

_GROUP = re.compile(r"([^,\[]*)(?:\[([^\]]*)\])?([^,\[]*)")
MAX_HOSTS = 100_000


def expand(hostlist: str) -> list[str]:
    out: list[str] = []
    for part in _split(hostlist):
        match = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", part)
        if match is None:
            if part:
                out.append(part)
            continue
        prefix, ranges, suffix = match.groups()
        for piece in ranges.split(","):
            lo, _, hi = piece.partition("-")
            if not hi:
                out.append(f"{prefix}{lo}{suffix}")
                continue
            if not (lo.isdigit() and hi.isdigit()) or int(hi) - int(lo) > MAX_HOSTS:
                out.append(f"{prefix}[{piece}]{suffix}")
                continue
            width = len(lo)
            out.extend(f"{prefix}{i:0{width}d}{suffix}" for i in range(int(lo), int(hi) + 1))
    return out


def _split(hostlist: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, current = [], 0, ""
    for ch in hostlist.strip():
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"[": 1, "]": -1}.get(ch, 0)
        current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]
