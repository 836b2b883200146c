"""`npa soperator set` on a 475-byte YAML alias bomb vs `set` on an ordinary spec (target
≤ 1.5× in time, memory shown): the bomb is refused by counting composed nodes before ruamel
builds anything, so it must cost no more than reading a normal file (it once took minutes
and gigabytes). Both run as fresh processes, in pairs, each round; the floor is the same
command on the repository's commented example spec, the figure a user pays for any `set`.
Run: `.venv/bin/python -m bench hostile` (NPA_BENCH_ROUNDS to change the count).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import Ratio, paired_ratio

ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import resource, sys\n"
    "from npa_sop_tui.cli.entry import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stderr.write(f'\\nMAXRSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
    "sys.exit(code)\n"
)


def alias_bomb(levels: int = 9) -> str:
    lines = [
        "apiVersion: npa.soperator/v0.0.1",
        "name: bomb",
        "a0: &a0 [" + ",".join(["lol"] * 9) + "]",
    ]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _run(spec: Path, env: dict[str, str], expect: int) -> tuple[float, int]:
    """Wall-clock seconds and peak RSS (KiB) of `set --dry-run` on `spec`."""
    cmd = [sys.executable, "-c", PROBE, "soperator", "set", "--spec", str(spec)]
    started = time.perf_counter()
    done = subprocess.run(
        [*cmd, "name=other", "--dry-run"], env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if done.returncode != expect:
        raise SystemExit(f"set on {spec} exited {done.returncode}: {done.stderr[-400:]}")
    rss = int(done.stderr.rsplit("MAXRSS", 1)[1].split()[0])
    return elapsed, rss


def main() -> list[Ratio]:
    rounds = int(os.environ.get("NPA_BENCH_ROUNDS", "7"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bomb = folder / "bomb.yaml"
        bomb.write_text(alias_bomb())
        normal = folder / "cluster.yaml"
        normal.write_text((ROOT / "assets" / "cluster.yaml").read_text())
        env = {**os.environ, "NPA_HOME": str(folder / "home")}
        _run(normal, env, 0)  # warm-up: writes the validation cache
        bombs, normals, bomb_rss, normal_rss = [], [], [], []
        for _ in range(rounds):
            took, rss = _run(bomb, env, 2)
            bombs.append(took)
            bomb_rss.append(rss)
            took, rss = _run(normal, env, 0)
            normals.append(took)
            normal_rss.append(rss)
    print(f"  alias bomb: {len(alias_bomb())} bytes")
    print(
        f"  peak RSS: bomb {max(bomb_rss) / 1024:.0f} MiB, normal {max(normal_rss) / 1024:.0f} MiB"
    )
    return [
        Ratio(
            "hostile",
            "set on an alias bomb (refused)",
            statistics.median(bombs) * 1000,
            "set on cluster.yaml",
            statistics.median(normals) * 1000,
            target="≤ 1.5",
            paired=paired_ratio(bombs, normals),
        ),
        Ratio(
            "hostile",
            "peak RSS of set on an alias bomb",
            max(bomb_rss) / 1024,
            "set on cluster.yaml",
            max(normal_rss) / 1024,
            target="≤ 1.5",
            unit="MiB",
        ),
    ]
