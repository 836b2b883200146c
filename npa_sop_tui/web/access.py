"""Who may open a served session: a token, checked on the page and on the websocket.

textual-serve has no authentication of its own, so one aiohttp middleware wraps every
route it serves (the page, the websocket, its static files and downloads):

- `/?token=<token>` with the right token sets a session cookie (HttpOnly, SameSite=Strict,
  named per port) and redirects to `/`, so the token leaves the address bar and never
  appears in the page, its links or a Referer header.
- Every other request needs that cookie (the browser sends it with the websocket upgrade
  too) or, for a non-browser client, `?token=` on the request itself.
- The websocket also needs an Origin of this server: a page on another site cannot open a
  session with the cookie of a teammate who is logged in.

Tokens and cookies are compared with `hmac.compare_digest` (constant time). The cookie holds
an HMAC of the token, not the token.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web

from npa_sop_tui.errors import UsageError

TOKEN_BYTES = 32
MIN_TOKEN_LENGTH = 16
REFUSED_TEXT = (
    "403: this npa-sop session needs its token.\n"
    "Open the URL that `npa-sop serve` printed (http://HOST:PORT/?token=...), "
    "or ask whoever serves it for that URL.\n"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


MAX_TOKEN_FILE_BYTES = 64 * 1024  # a token is a line; more is not a token file


def read_token_file(path: Path) -> str:
    """The token in `path` (its first line); a clear UsageError when it cannot serve: not a
    regular file (a FIFO is refused at once, not waited on), larger than 64 KiB, or readable
    or writable by anyone but its owner (group too: 0640 is refused)."""
    from npa_sop_tui.home.bounded_read import Unreadable, read_regular_text

    try:
        mode = path.stat().st_mode
        text = read_regular_text(path, limit=MAX_TOKEN_FILE_BYTES, what="token file")
    except (OSError, Unreadable) as exc:
        why = exc.reason if isinstance(exc, Unreadable) else exc.strerror or str(exc)
        raise UsageError(
            f"cannot read --token-file {path} ({why})",
            hint="give a regular file that holds the session token on its first line",
        ) from None
    if mode & 0o077:
        raise UsageError(
            f"--token-file {path} is readable by other users (mode {mode & 0o777:o})",
            hint=f"run chmod 600 {path} (whoever reads the token can open the session)",
        )
    token = (text.splitlines() or [""])[0].strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise UsageError(
            f"the first line of --token-file {path} is shorter than {MIN_TOKEN_LENGTH} characters",
            hint="write a long random token there, e.g. `python3 -c 'import secrets; "
            "print(secrets.token_urlsafe(32))' > FILE`",
        )
    return token


def is_loopback(host: str) -> bool:
    """Whether binding `host` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name may resolve to anything


@dataclass(frozen=True)
class TokenGate:
    """The check for one served session (one port)."""

    token: str = field(repr=False)  # never in a repr: a traceback's locals, a debugger
    port: int
    secure: bool = False

    @property
    def cookie_name(self) -> str:
        # cookies are shared by every port of a host: one name per port keeps two sessions
        # on one machine (say two clusters) from logging each other out
        return f"npa_sop_session_{self.port}"

    def session_value(self) -> str:
        return hmac.new(self.token.encode(), b"npa-sop session", hashlib.sha256).hexdigest()

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def cookie_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(
            given.encode(), self.session_value().encode()
        )

    def allowed(self, request: web.Request) -> bool:
        if "token" in request.query:
            return self.token_ok(request.query.get("token"))
        return self.cookie_ok(request.cookies.get(self.cookie_name))

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self.allowed(request):
            return web.Response(status=403, text=REFUSED_TEXT)
        if request.path == "/ws" and not same_origin(request):
            return web.Response(status=403, text="403: websocket from another site refused\n")
        if request.path == "/" and "token" in request.query:
            # a good token: hand out the session cookie, and drop the token from the URL
            redirect = web.HTTPSeeOther("/")
            redirect.set_cookie(
                self.cookie_name,
                self.session_value(),
                httponly=True,
                samesite="Strict",
                secure=self.secure,
                path="/",
            )
            raise redirect
        response = await handler(request)
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Cache-Control", "no-store")
        return response


def same_origin(request: web.Request) -> bool:
    """A websocket request without an Origin (a script) or with this server's own."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc == request.host
