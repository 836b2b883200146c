"""The local state store reads the home's records without trusting them: an inventory.json
that is a device, a sparse giant or a FIFO is reported as damaged at once, never read to the
end or waited on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.hostile_files import plant

NPA = Path(sys.executable).parent / "npa"


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("dev-zero", "is a character device, not a record file"),
        ("sparse", "inventory record is larger than 8 MiB"),
        ("fifo", "is a named pipe (FIFO), not a record file"),
    ],
)
def test_an_inventory_record_that_never_ends_or_blocks_is_reported_not_read(
    npa_home: Path, kind: str, said: str
) -> None:
    """Defect: inventory.json as /dev/zero or a sparse 3 GB file ended in a MemoryError
    (2.7 GB read), as a FIFO `list` hung. Now `list` names the damaged record and goes on;
    `destroy` of that cluster says why (exit 2). Run as processes: a hang fails by timeout."""
    cluster = npa_home / "soperator" / "victim"
    cluster.mkdir(parents=True)
    plant(cluster / "inventory.json", kind)
    env = {**os.environ, "NPA_HOME": str(npa_home)}
    listed = subprocess.run(
        [str(NPA), "soperator", "list"], capture_output=True, text=True, env=env, timeout=60
    )
    assert listed.returncode == 0, listed.stderr
    assert f"{cluster / 'inventory.json'}: the inventory record is damaged: " in listed.stderr
    assert said in listed.stderr and "Traceback" not in listed.stderr
    destroy = subprocess.run(
        [str(NPA), "soperator", "destroy", "--name", "victim", "--yes"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert destroy.returncode == 2, destroy.stderr
    assert said in destroy.stderr and "Traceback" not in destroy.stderr
