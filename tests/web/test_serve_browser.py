"""`npa-sop serve --name demo --sandbox` opened in a real browser: Debian's chromium driven
by Playwright (never a downloaded browser).

The terminal in the page is painted by xterm.js on a canvas, so the page has no text to
read; an init script keeps what the app sends over the websocket, and the test reads the
screen from that stream (escape sequences removed)."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from npa_sop_tui.cli.entry import main

if TYPE_CHECKING:
    from playwright.sync_api import Route

pytestmark = [pytest.mark.slow, pytest.mark.terraform]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SPEC = """\
apiVersion: npa.soperator/v0.0.1
name: demo
workers:
  - name: cpu
    size: 2
"""
# Keeps every frame the app sends (binary websocket messages) as text in window.__screen.
CAPTURE = """
(() => {
  window.__screen = "";
  const decoder = new TextDecoder();
  const Native = window.WebSocket;
  window.WebSocket = function (url, protocols) {
    const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    ws.addEventListener("message", (e) => {
      if (typeof e.data !== "string") window.__screen += decoder.decode(e.data, {stream: true});
    });
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, {OPEN: 1, CLOSED: 3, CONNECTING: 0, CLOSING: 2});
})();
"""
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-B]")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _deployed_demo(tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(SPEC)
    assert main(["soperator", "deploy", "--spec", str(spec), "--sandbox", "--yes"]) == 0


def _home_files(home: Path) -> dict[str, tuple[int, int]]:
    """Every file under the npa home with its size and modification time."""
    return {
        str(f.relative_to(home)): (f.stat().st_size, f.stat().st_mtime_ns)
        for f in home.rglob("*")
        if f.is_file()
    }


def _serve(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> Iterator[tuple[str, str, Path, subprocess.Popen[bytes], dict[str, tuple[int, int]]]]:
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (scripts/test.sh installs it)")
    monkeypatch.setenv("TF_VAR_standin_sleep_seconds", "0")
    _deployed_demo(tmp_path)
    before = _home_files(npa_home)
    port = _free_port()
    out = tmp_path / "serve.out"
    command = [
        sys.executable,
        "-c",
        "from npa_sop_tui.cli.entry import tui_main; raise SystemExit(tui_main())",
    ]
    args = ["serve", "--name", "demo", "--sandbox", "--port", str(port), *extra]
    with out.open("wb") as sink:
        server = subprocess.Popen(
            [*command, *args], stdout=sink, stderr=subprocess.STDOUT, env=os.environ.copy()
        )
    try:
        deadline = time.monotonic() + 30
        token = None
        while token is None and time.monotonic() < deadline:
            found = re.search(r"\?token=(\S+)", out.read_text())
            token = found.group(1) if found else None
            assert server.poll() is None, out.read_text()
            time.sleep(0.2)
        assert token, f"no URL printed: {out.read_text()}"
        yield f"http://127.0.0.1:{port}", token, out, server, before
    finally:
        if server.poll() is None:
            server.terminate()
            server.wait(timeout=20)


@pytest.fixture
def served(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, str, Path]]:
    """(base URL, token, server output file) of a read-only serve of the sandbox's demo."""
    for base, token, out, _server, _before in _serve(tmp_path, npa_home, monkeypatch):
        yield base, token, out


def _screen(page: object) -> str:
    return ANSI.sub("", page.evaluate("window.__screen"))  # type: ignore[attr-defined]


def _wait_text(page: object, *texts: str, timeout: float = 180, since: int = 0) -> str:
    """What the app has drawn (after the first `since` characters) once all `texts` are in."""
    deadline = time.monotonic() + timeout
    while True:
        seen = ANSI.sub("", page.evaluate("window.__screen")[since:])  # type: ignore[attr-defined]
        if all(t in seen for t in texts):
            return seen
        if time.monotonic() > deadline:
            raise AssertionError(f"not on screen after {timeout}s: {texts}; last: {seen[-2000:]!r}")
        time.sleep(0.3)


def test_served_dashboard_read_only_and_token(served: tuple[str, str, Path]) -> None:
    from playwright.sync_api import sync_playwright

    base, token, out = served
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(30_000)

            # without the token: the page is refused, and so is the websocket
            response = page.goto(base + "/")
            assert response is not None and response.status == 403
            assert "needs its token" in page.inner_text("body")
            refused = page.evaluate(
                """(url) => new Promise((done) => {
                    const ws = new WebSocket(url);
                    ws.onopen = () => done("open");
                    ws.onerror = () => done("refused");
                })""",
                base.replace("http", "ws") + "/ws?width=80&height=24",
            )
            assert refused == "refused"

            # with it: the dashboard of demo, live, read-only
            page.add_init_script(CAPTURE)
            response = page.goto(f"{base}/?token={token}")
            assert response is not None and response.status == 200
            assert page.url == base + "/"  # the token left the address bar
            assert token not in page.content()
            seen = _wait_text(page, "READ-ONLY", "demo", "Slurm partitions", "cpu-0")
            assert "Destroy" not in seen

            page.locator(".xterm-screen").click()
            page.keyboard.press("?")
            seen = _wait_text(page, "Keys on this screen")
            assert "Destroy" not in seen
            closing = len(page.evaluate("window.__screen"))
            # Enter closes the help as Escape does, and cannot merge with the next key: a lone
            # escape followed at once by a letter reaches a terminal app as alt+letter, and the
            # dashboard behind the help redraws on its own, so a redraw is no sign the help closed
            page.keyboard.press("Enter")
            _wait_text(page, "Slurm partitions", since=closing)
            # and the help is gone from what the terminal shows now (its rows), before the
            # next keys: they must reach the dashboard, not the help still on top
            page.wait_for_function(
                "() => !(document.querySelector('.xterm-rows')?.innerText ?? '')"
                ".includes('Keys on this screen')"
            )
            before = len(page.evaluate("window.__screen"))
            page.keyboard.press("x")  # destroy, in an operator session
            page.keyboard.press("j")  # the jobs screen: keys do reach the app
            _wait_text(page, "queue (squeue, live)")
            later = _screen(page)[before:]
            assert "Type the cluster name" not in later and "Destroy" not in later

            # the charts in the browser: node states on the dashboard (a plot at this size:
            # its legend and the y-scale), the deploy timeline
            assert "▒ drained" in seen and "┤" in seen
            mark = len(page.evaluate("window.__screen"))
            page.keyboard.press("Escape")  # back to the dashboard
            _wait_text(page, "Slurm partitions", since=mark)
            page.keyboard.press("t")
            _wait_text(page, "deploy of demo: ok", "critical path", since=mark)

            # the fleet's node states in one view: back to home (each escape awaited before
            # the next key, see above), then `f`
            mark = len(page.evaluate("window.__screen"))
            page.keyboard.press("Escape")
            _wait_text(page, "Slurm partitions", since=mark)
            mark = len(page.evaluate("window.__screen"))
            page.keyboard.press("Escape")
            _wait_text(page, "Last operation", since=mark)
            mark = len(page.evaluate("window.__screen"))
            page.keyboard.press("f")
            _wait_text(page, "node states of 1 live cluster", "demo: ", "× down", since=mark)
        finally:
            browser.close()
    log = out.read_text()
    assert log.count(token) == 1, "the token is printed once, and never logged"
    assert "GET / 403" in log and "GET /ws" in log


def _app_processes(server: subprocess.Popen[bytes]) -> list[int]:
    """The session app processes the server started (its descendants running web_session)."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(stat[1])
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue

    def under_server(pid: int) -> bool:
        while pid > 1:
            if pid == server.pid:
                return True
            pid = parents.get(pid, 1)
        return False

    return [
        pid
        for pid, cmd in commands.items()
        if b"npa_sop_tui.cli.web_session" in cmd
        and b"-c" not in cmd.split(b"\0")[:2]
        and under_server(pid)
    ]


def _only_from(base: str, elsewhere: list[str]) -> Callable[[Route], None]:
    """A route handler letting requests to `base` through and noting (and aborting) the
    rest. One parameter: Playwright passes the request too to a handler that takes two."""

    def only_here(route: Route) -> None:
        url = route.request.url
        if url.startswith(base) or url.startswith(base.replace("http", "ws")):
            route.continue_()
            return
        elsewhere.append(url)
        route.abort()

    return only_here


def test_a_dead_app_process_shows_disconnected_and_the_page_stays_local(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page loads nothing from another site, under a strict Content-Security-Policy;
    the read-only session writes nothing in the home (its kubeconfig included); when its
    app process is killed the page says "Disconnected" within 5 seconds."""
    import signal

    from playwright.sync_api import sync_playwright

    for base, token, _out, server, before in _serve(tmp_path, npa_home, monkeypatch):
        elsewhere: list[str] = []
        only_here = _only_from(base, elsewhere)

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = browser.new_page(viewport={"width": 1000, "height": 700})
                page.set_default_timeout(30_000)
                page.route("**/*", only_here)
                page.add_init_script(CAPTURE)
                response = page.goto(f"{base}/?token={token}")
                assert response is not None and response.status == 200
                policy = response.headers.get("content-security-policy", "")
                assert "default-src 'none'" in policy and "script-src 'self'" in policy
                assert (
                    "'unsafe-eval'" not in policy
                    and "'unsafe-inline'" not in policy.split("style-src")[0]
                )
                _wait_text(page, "READ-ONLY", "Slurm partitions", "cpu-0")
                assert elsewhere == []
                fonts = page.evaluate(
                    "() => [...document.fonts].filter(f => f.status == 'loaded').length"
                )
                assert fonts >= 1  # Roboto Mono, from this server
                assert _home_files(npa_home) == before  # nothing written, nothing touched

                (app,) = _app_processes(server)
                killed = time.monotonic()
                os.kill(app, signal.SIGKILL)
                page.wait_for_function(
                    "() => document.body.classList.contains('-closed')", timeout=5_000
                )
                took = time.monotonic() - killed
                message = page.inner_text("#npa-closed-message")
                assert message.startswith("Disconnected: the app process ended"), message
                assert page.is_visible("#npa-closed-message") and took < 5
            finally:
                browser.close()
        assert server.poll() is None  # one session's end is not the server's


def test_a_refused_session_says_why_and_the_server_stops_in_2_seconds(
    tmp_path: Path, npa_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import signal

    from playwright.sync_api import sync_playwright

    for base, token, out, server, _before in _serve(
        tmp_path, npa_home, monkeypatch, "--max-sessions", "1"
    ):
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                first = browser.new_page(viewport={"width": 1000, "height": 700})
                first.set_default_timeout(30_000)
                first.add_init_script(CAPTURE)
                first.goto(f"{base}/?token={token}")
                _wait_text(first, "READ-ONLY", "Slurm partitions")
                second = browser.new_page(viewport={"width": 1000, "height": 700})
                second.goto(f"{base}/?token={token}")
                second.wait_for_function(
                    "() => document.body.classList.contains('-closed')", timeout=10_000
                )
                assert second.inner_text("#npa-closed-message") == (
                    "Disconnected: 1 sessions are open already (--max-sessions); "
                    "close one and reconnect"
                )
                # Ctrl+C with a browser connected: every page told, the server gone in 2 s
                stopping = time.monotonic()
                server.send_signal(signal.SIGINT)
                server.wait(timeout=30)
                took = time.monotonic() - stopping
                first.wait_for_function(
                    "() => document.body.classList.contains('-closed')", timeout=5_000
                )
                assert "the server is stopping" in first.inner_text("#npa-closed-message")
                assert took < 2.0, f"the server took {took:.1f}s to stop"
            finally:
                browser.close()
        assert "session refused" in out.read_text()


def test_a_drain_reason_with_escapes_reaches_a_served_browser_as_text(
    served: tuple[str, str, Path],
) -> None:
    """A served session is the app: a drain reason holding a clipboard write (OSC 52), a
    title and a hyperlink is drawn as its control pictures; none of its sequences is among
    what the browser's terminal is sent."""
    from playwright.sync_api import sync_playwright

    from testkit.hostile import ATTACK

    base, token, _ = served
    drain = ["--name", "demo", "--sandbox", "--node", "cpu-1", "--reason", ATTACK, "--yes"]
    assert main(["soperator", "drain", *drain]) == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(30_000)
            page.add_init_script(CAPTURE)
            page.goto(f"{base}/?token={token}")
            _wait_text(page, "Slurm partitions", "cpu-1", "[/] x ␛]52;c;")
            sent = page.evaluate("window.__screen")
        finally:
            browser.close()
    for sequence in ("\x1b]52;", "\x1b]0;owned", "\x1b]8;;http://evil", "\x9b"):
        assert sequence not in sent, sequence
