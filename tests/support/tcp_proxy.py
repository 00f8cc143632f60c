"""A TCP relay in front of the PostgreSQL server: taking it down is, to a daemon connected
through it, the database going away (the server itself, shared by other tests, keeps running);
bringing it back on the same port is the database returning. Freezing it is a database that
hangs: connections stay open and new ones are accepted, but no byte goes either way until it
thaws."""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpProxy:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._flowing = threading.Event()
        self._flowing.set()

    def freeze(self) -> None:
        """Hold every byte, as a stuck server or a network that drops packets does."""
        self._flowing.clear()

    def thaw(self) -> None:
        self._flowing.set()

    def up(self) -> TcpProxy:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    def down(self) -> None:
        """Refuse new connections and cut the open ones."""
        with self._lock:
            listener, self._listener = self._listener, None
            open_now, self._open = self._open, []
        for sock in [s for s in (listener,) if s is not None] + open_now:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._flowing.set()  # relays held by a freeze wake up to find their sockets closed

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=_pipe, args=(a, b, self._flowing), daemon=True).start()


def _pipe(source: socket.socket, sink: socket.socket, flowing: threading.Event) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            flowing.wait()
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
