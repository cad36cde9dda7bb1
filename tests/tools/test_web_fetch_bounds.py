"""web_fetch's bounds in-process against real servers on 127.0.0.1: one deadline over a server
that drips its body, binary refused, a redirect loop stopped, and no redirect to another host
without a permission check to ask (issue 24 item 7)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from vtcode.tools.base import ToolContext, ToolError
from vtcode.tools.web_fetch import MAX_REDIRECTS, WebFetchTool


class _Raw:
    """A TCP server answering each connection with `reply(conn)`; counts connections."""

    def __init__(self, reply: Callable[[socket.socket], None]) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reply = reply
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            with contextlib.suppress(OSError):  # the client hung up: its part of the test
                self.reply(conn)

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, session_id="s", spool_dir=tmp_path / "spool")


@pytest.fixture
def servers() -> Iterator[list[_Raw]]:
    made: list[_Raw] = []
    yield made
    for s in made:
        s.close()


def _drip(stop: threading.Event) -> Callable[[socket.socket], None]:
    def reply(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 999\r\n\r\n")
        while not stop.is_set():  # a byte now and then: no single read ever times out
            conn.sendall(b"x")
            stop.wait(0.05)

    return reply


def test_one_deadline_bounds_a_dripping_server(ctx: ToolContext, servers: list[_Raw]) -> None:
    stop = threading.Event()
    server = _Raw(_drip(stop))
    servers.append(server)
    start = time.monotonic()
    try:
        with pytest.raises(ToolError, match=r"timed out after 0\.5 s"):
            WebFetchTool(deadline_secs=0.5).run({"url": f"http://127.0.0.1:{server.port}/"}, ctx)
    finally:
        stop.set()
    assert time.monotonic() - start < 5


def test_binary_is_refused(ctx: ToolContext, servers: list[_Raw]) -> None:
    server = _Raw(
        lambda c: c.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 4\r\n\r\n\x89PNG"
        )
    )
    servers.append(server)
    with pytest.raises(ToolError, match="is image/png, not text"):
        WebFetchTool().run({"url": f"http://127.0.0.1:{server.port}/x.png"}, ctx)


def test_a_redirect_loop_stops(ctx: ToolContext, servers: list[_Raw]) -> None:
    server = _Raw(
        lambda c: c.sendall(b"HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n")
    )
    servers.append(server)
    with pytest.raises(ToolError, match=f"more than {MAX_REDIRECTS} redirects"):
        WebFetchTool().run({"url": f"http://127.0.0.1:{server.port}/"}, ctx)
    assert server.connections == MAX_REDIRECTS + 1


def test_no_permission_check_no_redirect_to_another_host(
    ctx: ToolContext, servers: list[_Raw]
) -> None:
    server = _Raw(
        lambda c: c.sendall(
            b"HTTP/1.1 301 Moved\r\nLocation: http://localhost/\r\nContent-Length: 0\r\n\r\n"
        )
    )
    servers.append(server)
    with pytest.raises(ToolError, match="no permission check to ask for localhost"):
        WebFetchTool().run({"url": f"http://127.0.0.1:{server.port}/"}, ctx)
    with pytest.raises(ToolError, match="not an http"):
        WebFetchTool().run({"url": "file:///etc/passwd"}, ctx)
