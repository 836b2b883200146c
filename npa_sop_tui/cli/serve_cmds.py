"""`npa-sop serve` (and `npa soperator serve`): the app in a teammate's browser.

Read-only unless `--operator`; bound to 127.0.0.1 unless told otherwise; a random token
printed once with the URL. Binding another address needs a token the operator chose
(`--token-file`) or TLS (`--tls-cert/--tls-key`): a printed token over plain HTTP on a
shared network would be readable by anyone on it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from npa_sop_tui.cli.common import add_switch
from npa_sop_tui.errors import UsageError

DESCRIPTION = (
    "Serve the npa-sop app to a browser (textual-serve: each browser gets its own app "
    "process). Read-only unless --operator: deploy, destroy, drain, resume, cancel, run, "
    "set and write are absent. Open the printed URL; it carries the session's token."
)
DEFAULT_PORT = 8080


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "serve",
        help="share the live app with a teammate's browser (read-only by default)",
        description=DESCRIPTION,
    )
    configure(parser)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine)"
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default 8080)")
    add_switch(
        parser,
        "operator",
        off=("--read-only", "watch only (the default): no action that changes a cluster or a file"),
        on=("--operator", "offer every action, deploy and destroy too, to whoever has the URL"),
    )
    parser.add_argument("--name", metavar="CLUSTER", help="open this cluster's dashboard")
    parser.add_argument(
        "--sandbox", action="store_true", help="serve the sandbox (state under NPA_HOME/sandbox)"
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="read the token from FILE (mode 600) instead of making a random one",
    )
    parser.add_argument("--tls-cert", type=Path, metavar="PEM", help="serve HTTPS: certificate")
    parser.add_argument("--tls-key", type=Path, metavar="PEM", help="serve HTTPS: private key")
    parser.add_argument(
        "--max-sessions",
        type=int,
        default=8,
        metavar="N",
        help="browsers served at once, each its own app process (default 8)",
    )
    parser.set_defaults(handler=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from npa_sop_tui.web.access import TokenGate, is_loopback, new_token, read_token_file

    host: str = args.host
    port: int = args.port
    if not 0 < port < 65536:
        raise UsageError(f"--port {port}: not a TCP port", hint="give a port from 1 to 65535")
    if args.max_sessions < 1:
        raise UsageError("--max-sessions must be at least 1")
    if (args.tls_cert is None) != (args.tls_key is None):
        raise UsageError("--tls-cert and --tls-key go together", hint="give both, or neither")
    tls = args.tls_cert is not None
    if not is_loopback(host) and args.token_file is None and not tls:
        raise UsageError(
            f"--host {host}: refusing to serve beyond this machine with a one-time token "
            "over plain HTTP",
            hint="give --token-file FILE (a token you share on purpose) or --tls-cert/--tls-key, "
            "or keep --host 127.0.0.1 and let teammates reach it through `ssh -L`",
        )
    name: str | None = args.name
    if name is not None:
        from npa_sop_tui.home.paths import check_cluster_name

        check_cluster_name(name)
    token = read_token_file(args.token_file) if args.token_file else new_token()
    ssl_context = _ssl_context(args.tls_cert, args.tls_key) if tls else None
    from npa_sop_tui.web.server import GatedServer

    flags = ["--sandbox"] if args.sandbox else []
    flags += ["--name", name] if name else []
    flags += [] if args.operator else ["--read-only"]
    command = shlex.join([sys.executable, "-m", "npa_sop_tui.cli.web_session", *flags])
    mode = "OPERATOR" if args.operator else "READ-ONLY"
    title = " · ".join(p for p in ("npa-sop", name, mode) if p)
    server = GatedServer(
        command,
        host=host,
        port=port,
        gate=TokenGate(token, port, secure=tls),
        title=title,
        ssl_context=ssl_context,
        max_sessions=args.max_sessions,
    )
    scheme = "https" if tls else "http"
    shown_host = f"[{host}]" if ":" in host else host

    def announce() -> None:
        # the one place the token is shown: the terminal of whoever started the server
        print(f"npa-sop {mode} session" + (" (sandbox)" if args.sandbox else ""), flush=True)
        print(f"Open: {scheme}://{shown_host}:{port}/?token={token}", flush=True)
        print("Anyone with this URL can watch; stop with Ctrl+C.", flush=True)

    try:
        server.run(announce)
    except OSError as exc:
        raise UsageError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}",
            hint="pick another --port, or stop what is listening there",
        ) from None
    return 0


def _ssl_context(cert: Path, key: Path) -> object:
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(
            f"--tls-cert {cert} / --tls-key {key}: {exc}",
            hint="give a PEM certificate and its unencrypted private key",
        ) from None
    return context
