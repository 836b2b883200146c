"""Contract check cost inside `render`: render with the check vs the floor (check skipped),
measured side by side. Target: the check adds <= 50 ms per render."""

from __future__ import annotations

import time
from pathlib import Path

from bench import Ratio
from npa_sop_tui.recipe import render as render_mod
from npa_sop_tui.spec.model import load_spec

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKTuXQ9y2gRIkFk7H06hEu58FkxtRe//rvO1FavuZgwl b"
SPEC = load_spec(Path(__file__).resolve().parents[1] / "assets" / "gpu-reserved.yaml").spec
CAP = {"h200": "capacityblockgroup-bench"}


def _time(n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        render_mod.render(SPEC, root_login_key=KEY, capacity=CAP)
    return (time.perf_counter() - start) / n


def main() -> list[Ratio]:
    _time(3)  # warm caches (catalog, contract)
    with_check = _time(50)
    real = render_mod.require
    render_mod.require = lambda *a, **k: None  # type: ignore[assignment]
    try:
        floor = _time(50)
    finally:
        render_mod.require = real
    added_ms = (with_check - floor) * 1000
    print(
        f"render floor {floor * 1000:.2f} ms, with contract check {with_check * 1000:.2f} ms, "
        f"added {added_ms:.2f} ms, ratio {with_check / floor:.2f}"
    )
    assert added_ms <= 50, "contract check adds more than 50 ms to render"
    return [
        Ratio(
            "recipe",
            "render with the contract check",
            with_check * 1000,
            "render, check skipped",
            floor * 1000,
        )
    ]


if __name__ == "__main__":
    main()
