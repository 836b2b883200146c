"""An address that accepts connections and never answers: what a cloud endpoint behind a
dead proxy or a black-holed route looks like to a client (it waits for its deadline)."""

from __future__ import annotations

import socket
import threading


class SilentServer:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed
                return
            self.held.append(conn)  # kept open, never read or written

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()
