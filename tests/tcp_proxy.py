"""A TCP forwarder on a free loopback port, in front of a server: a test closes it to make the
server refuse connections (and cut those open), or blackholes it (nothing forwarded either way,
nothing closed: a network cut off, a hung middlebox), without touching the server itself."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


class Proxy:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._dark = threading.Event()  # blackholed: every byte either way is dropped
        self._trigger: tuple[bytes, ...] = ()
        self._cut_on: bytes | None = None  # cut: see ``cut``
        self._silent: set[socket.socket] = set()  # cut: their bytes dropped, nothing closed
        self.cut_done = threading.Event()
        self.ended: set[int] = set()  # local ports of server sockets whose end was passed on

    def blackhole(self, after: Sequence[bytes] = ()) -> None:
        """Forward nothing more, either way, and close nothing: at once, or once a client's
        connection has sent each of ``after`` in turn (that last message still reaches the
        server; its answer does not come back). New connections are accepted, never served."""
        if after:
            self._trigger = tuple(after)
        else:
            self._dark.set()

    def cut(self, on: bytes) -> None:
        """Once a client's connection sends ``on`` (forwarded still: the server gets it, its
        answer does not come back), every connection open at that moment goes silent, either
        way, for good, and none is closed: the server's side stays open, as after a partition
        or a client host that lost its power. Connections made afterwards are served."""
        self._cut_on = on

    def server_ports(self) -> list[int]:
        """The local ports of every open connection's socket towards the server: the sessions
        of the clients of this proxy (``pg_stat_activity.client_port``)."""
        with self._lock:
            ports = []
            for sock in self._open:
                with contextlib.suppress(OSError):
                    if sock.getpeername()[1] == self.upstream[1]:
                        ports.append(sock.getsockname()[1])
            return ports

    def dark(self) -> bool:
        return self._dark.is_set()

    def restore(self) -> None:
        """Forward again; every connection open meanwhile is cut (what it sent is lost)."""
        self._trigger = ()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()
            self._dark.clear()

    def accept(self) -> None:
        """Listen (again, on the same port) and forward every connection."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(128)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._serve, args=(listener,), daemon=True).start()

    def refuse(self) -> None:
        """Stop listening (new connections are refused) and cut every open one."""
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):  # wakes the accepting thread (close alone does not)
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        with self._lock:
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def _serve(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # refused meanwhile
                    client.close()
                    server.close()
                    return
                self._open.update((client, server))
            for a, b, watched in ((client, server, True), (server, client, False)):
                threading.Thread(target=self._pump, args=(a, b, watched), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, watched: bool) -> None:
        """Copy ``source`` to ``sink``; ``watched``: a client's side, which may set off a
        blackhole (the messages it waits for, in turn)."""
        seen = 0
        port = None if watched else source.getsockname()[1]
        try:
            while data := source.recv(65536):
                if self._dark.is_set() or source in self._silent:
                    continue  # dropped: nothing forwarded, nothing closed
                if watched and self._cut_on is not None and self._cut_on in data:
                    self._cut_on = None
                    with self._lock:
                        self._silent.update(self._open)  # this one's message still goes
                    self.cut_done.set()
                trigger = self._trigger
                if watched and trigger and seen < len(trigger) and trigger[seen] in data:
                    seen += 1
                    if seen == len(trigger):
                        self._dark.set()  # before it is sent: its answer never comes back
                sink.sendall(data)
        except OSError:
            pass
        finally:
            if source not in self._silent:  # a silent one's end is not told either
                with contextlib.suppress(OSError):
                    sink.shutdown(socket.SHUT_WR)
                if port is not None:
                    self.ended.add(port)


@contextmanager
def tcp_proxy(host: str, port: int) -> Iterator[Proxy]:
    proxy = Proxy((host, port))
    proxy.accept()
    try:
        yield proxy
    finally:
        proxy.refuse()
