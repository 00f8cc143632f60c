"""A read that must answer in time, for the daemon's probes and scrapes: a database that hangs
(a server stopped mid-reply, a network that drops packets) holds a connection for as long as
TCP lets it, far beyond any statement timeout, which only the server applies. The read runs on
a thread of its own and the caller waits at most `deadline_s`; while one read hangs, later
callers wait on that same read instead of starting another, so a hanging database costs one
thread and one connection, however often it is probed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")


class DeadlineRead(Generic[T]):
    def __init__(self, read: Callable[[], T], deadline_s: float, name: str) -> None:
        self._read = read
        self.deadline_s = deadline_s
        self._name = name
        self._lock = threading.Lock()
        self._pending: Future[T] | None = None

    def __call__(self) -> T:
        """The read's result; TimeoutError when it has not answered within the deadline."""
        return self._start().result(timeout=self.deadline_s)

    def _start(self) -> Future[T]:
        with self._lock:
            if self._pending is None or self._pending.done():
                future: Future[T] = Future()
                thread = threading.Thread(
                    target=self._run, args=(future,), name=self._name, daemon=True
                )
                self._pending = future
                thread.start()
            return self._pending

    def _run(self, future: Future[T]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(self._read())
        except BaseException as exc:  # handed to whoever waits for the result
            future.set_exception(exc)
