"""cli/interrupts.py: stop signals around an operation, late signals, closed pipes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest

from npa_sop_tui.cli.interrupts import _TolerantStream, run_interruptible, signals_restored
from npa_sop_tui.errors import Interrupted


def test_sigterm_cancels_the_operation_and_exits_143() -> None:
    async def operation() -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.sleep(30)

    with signals_restored(), pytest.raises(Interrupted) as caught:
        run_interruptible(operation, interrupted="stopped", notify=lambda _m: None)
    assert caught.value.exit_code == 143


def test_late_signals_are_swallowed_then_the_callers_handlers_return() -> None:
    before = signal.getsignal(signal.SIGINT)

    async def done() -> str:
        return "ok"

    with signals_restored():
        assert run_interruptible(done, interrupted="x") == "ok"
        os.kill(os.getpid(), signal.SIGINT)  # "Deployed" was printed: nothing to interrupt
        # A child started now must not inherit an ignored SIGINT.
        child = subprocess.run(
            [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT))"],
            capture_output=True,
            text=True,
            check=True,
        )
        assert "default_int_handler" in child.stdout
    assert signal.getsignal(signal.SIGINT) is before


def test_npas_own_process_keeps_late_stop_signals_swallowed_until_it_exits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`npa …` itself: a SIGTERM while the finished command exits must not kill it by the
    signal (the interrupt matrix saw -15 instead of the command's exit code). A Python
    handler is not enough (the interpreter puts the default back as it finalizes): the
    signal is ignored from the command's end. Called in-process, `main([...])` gives the
    caller its own handlers back."""
    import npa_sop_tui.cli.entry as cli
    from npa_sop_tui.cli import interrupts

    def command(*_args: object, **_kwargs: object) -> int:
        # what the command's last operation leaves installed (run_interruptible, final=True)
        signal.signal(signal.SIGTERM, interrupts._swallow)
        return 0

    monkeypatch.setattr(cli, "_run_command", command)
    before = signal.getsignal(signal.SIGTERM)
    try:
        monkeypatch.setattr(sys, "argv", ["npa", "soperator", "validate", "--spec", "cluster.yaml"])
        assert cli.main() == 0
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
        signal.signal(signal.SIGTERM, before)
        assert cli.main(["soperator", "validate", "--spec", "cluster.yaml"]) == 0
        assert signal.getsignal(signal.SIGTERM) is before
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_closed_pipe_is_swallowed_once_and_noted() -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    os.close(read_end)  # the reader went away (`| head`)
    lost: list[str] = []
    tolerant = _TolerantStream(stream, lost.append)  # type: ignore[arg-type]
    tolerant.write("x" * 100_000)
    tolerant.flush()
    tolerant.write("more")
    tolerant.flush()
    assert tolerant.lost and len(lost) == 1
    stream.close()
