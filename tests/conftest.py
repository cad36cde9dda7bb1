"""Shared pytest fixtures. Keep each fixture small and documented; add new ones at the end."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from tests import forked_cli

REPO = Path(__file__).resolve().parents[1]

forked_cli.preload()  # once per test process: each forked vtcode run starts with it imported

RunVtcode = Callable[..., tuple[int, str, str]]


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """syrupy with the JSON extension: one pretty, key-sorted `.json` file per snapshot."""
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.fixture
def run_vtcode(tmp_path: Path) -> RunVtcode:
    """Run `python -m vtcode ARGS` as a real child process (forked: tests/forked_cli.py);
    returns (rc, stdout, stderr).

    `cwd` defaults to a fresh temp folder; `input` (str or bytes) is fed to stdin; `env` entries
    are layered over a copy of the current environment (NO_COLOR set, so output is plain).
    Output is decoded as UTF-8 with replacement, so binary garbage never breaks a test.
    """

    def run(
        args: list[str],
        cwd: Path | None = None,
        input: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 60.0,
    ) -> tuple[int, str, str]:
        full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100"}
        if env:
            full_env.update(env)
        data = input.encode("utf-8") if isinstance(input, str) else input
        proc = forked_cli.run(args, cwd=cwd or tmp_path, input=data, env=full_env, timeout=timeout)
        return (
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    return run


# Tool fixtures (appended by the tools work; their type-only imports live here).
import typing as _typing  # noqa: E402

if _typing.TYPE_CHECKING:
    from collections.abc import Iterator

    from vtcode.tools.base import ToolContext
    from vtcode.tools.registry import ToolRegistry


@pytest.fixture
def tool_ctx(tmp_path: Path) -> ToolContext:
    """A ToolContext on a fresh workspace folder (`tmp_path/ws`) with the standard spool dir."""
    from vtcode.tools.base import ToolContext

    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolContext(
        workspace=ws, session_id="test-session", spool_dir=ws / ".vtcode/context/tool_outputs"
    )


@pytest.fixture
def tool_registry() -> Iterator[ToolRegistry]:
    """`default_registry()`; closed at teardown, which kills and reaps every exec session."""
    from vtcode.tools.registry import default_registry

    registry = default_registry()
    try:
        yield registry
    finally:
        registry.close()


# ---- providers: a real HTTP server on 127.0.0.1 that replays recorded SSE byte streams ------

import dataclasses as _dc  # noqa: E402
import json as _json  # noqa: E402
import socket as _socket  # noqa: E402
import threading as _threading  # noqa: E402
from collections.abc import Iterator as _Iterator  # noqa: E402
from http.server import BaseHTTPRequestHandler as _Handler  # noqa: E402
from http.server import ThreadingHTTPServer as _ThreadingHTTPServer  # noqa: E402

SSE_FIXTURES = REPO / "tests" / "fixtures" / "sse"


@_dc.dataclass
class ScriptedReply:
    """One HTTP answer: status, headers, body `chunks` (each sent as one HTTP/1.1 chunk).

    `disconnect` drops the socket after the chunks (no terminating chunk: a mid-stream
    disconnect); `hang` keeps the connection open and silent until the server is closed (lets a
    client read timeout fire); `hold_headers` does so before sending anything (a server that
    loads the model or reads a long prompt first).
    """

    status: int = 200
    chunks: list[bytes] = _dc.field(default_factory=list)
    headers: dict[str, str] = _dc.field(
        default_factory=lambda: {"content-type": "text/event-stream"}
    )
    disconnect: bool = False
    hang: bool = False
    hold_headers: bool = False

    @classmethod
    def sse_file(cls, name: str, chunk_size: int | None = None) -> ScriptedReply:
        data = (SSE_FIXTURES / name).read_bytes()
        return cls.sse_bytes(data, chunk_size)

    @classmethod
    def sse_bytes(cls, data: bytes, chunk_size: int | None = None) -> ScriptedReply:
        size = chunk_size or len(data) or 1
        return cls(chunks=[data[i : i + size] for i in range(0, len(data), size)])

    @classmethod
    def json(
        cls, status: int, body: object, headers: dict[str, str] | None = None
    ) -> ScriptedReply:
        return cls(
            status=status,
            chunks=[_json.dumps(body).encode()],
            headers={"content-type": "application/json", **(headers or {})},
        )


@_dc.dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> _typing.Any:
        return _json.loads(self.body)


class _QuietServer(_ThreadingHTTPServer):
    """A client that hangs up (a cancelled run, a deadline) is what many tests do on purpose:
    no traceback on stderr for it; any other error in a handler is still printed."""

    def handle_error(self, request: object, client_address: object) -> None:
        if isinstance(sys.exc_info()[1], ConnectionResetError | BrokenPipeError):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class SSEServer:
    """Answers POSTs with queued `ScriptedReply`s in order (500 when the queue is empty)."""

    def __init__(self) -> None:
        self.replies: list[ScriptedReply] = []
        self.requests: list[SeenRequest] = []
        self.release = _threading.Event()
        self.arrived = _threading.Event()  # set when a request has been read
        self.sent = _threading.Event()  # set when a reply's chunks have been written
        self._lock = _threading.Lock()
        server = self

        class Handler(_Handler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n)
                with server._lock:
                    server.requests.append(
                        SeenRequest(
                            "POST",
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                        )
                    )
                    server.arrived.set()
                    reply = (
                        server.replies.pop(0)
                        if server.replies
                        else ScriptedReply.json(
                            500, {"error": {"message": "test server: no reply queued"}}
                        )
                    )
                if reply.hold_headers:
                    server.release.wait(30)
                    self.close_connection = True
                    return
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for chunk in reply.chunks:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                server.sent.set()
                if reply.hang:
                    server.release.wait(30)
                    self.close_connection = True
                    return
                if reply.disconnect:
                    self.connection.shutdown(_socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = _threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def queue(self, *replies: ScriptedReply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(10)


@pytest.fixture
def sse_server() -> _Iterator[SSEServer]:
    """A fresh `SSEServer` on 127.0.0.1 (a random free port), shut down after the test."""
    server = SSEServer()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(autouse=True)
def _isolated_user_config(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Point VTCODE_HOME at an empty folder, so no test (or subprocess) reads the developer's
    own ~/.config/vtcode/config.toml. A test that needs a user config sets VTCODE_HOME itself."""
    monkeypatch.setenv("VTCODE_HOME", str(tmp_path_factory.mktemp("vtcode-home")))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


# ---- the signal state every test starts from ------------------------------------------------

import signal as _signal  # noqa: E402
import warnings as _warnings  # noqa: E402

_STOP_SIGNALS = (_signal.SIGINT, _signal.SIGTERM)
# A signal the test process ignores or blocks is ignored or blocked in every program it starts
# (both survive exec): Ctrl-C tests of a spawned `vtcode` then see it run to its end. A worker
# started with SIGINT ignored (a CI runner that starts the suite in the background) or left
# with a blocked mask by an earlier test breaks tests that are not at fault; so each test
# starts with both signals deliverable and default-handled, and one that leaves them otherwise
# is named in a warning.
_signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOP_SIGNALS)
for _sig in _STOP_SIGNALS:
    if _signal.getsignal(_sig) == _signal.SIG_IGN:
        _signal.signal(
            _sig, _signal.default_int_handler if _sig == _signal.SIGINT else _signal.SIG_DFL
        )
_SIGNAL_START = {s: _signal.getsignal(s) for s in _STOP_SIGNALS}


@pytest.fixture(autouse=True)
def _deliverable_stop_signals(request: pytest.FixtureRequest) -> _Iterator[None]:
    yield
    blocked = set(_signal.pthread_sigmask(_signal.SIG_BLOCK, [])) & set(_STOP_SIGNALS)
    changed = [s for s in _STOP_SIGNALS if _signal.getsignal(s) != _SIGNAL_START[s]]
    if not blocked and not changed:
        return
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, _STOP_SIGNALS)
    for sig in changed:
        _signal.signal(sig, _SIGNAL_START[sig])
    _warnings.warn(
        f"{request.node.nodeid} left SIGINT/SIGTERM blocked {sorted(blocked)} or re-handled "
        f"{sorted(changed)}; restored",
        stacklevel=1,
    )


# ---- outside programs from Debian (zsh, fish, chromium): installed on first use when missing --

import shutil as _shutil  # noqa: E402

_APT_RESULTS: dict[str, str] = {}  # package -> why it could not be installed


def _apt_install(package: str) -> str | None:
    """Try `apt-get install -y PACKAGE` (after `apt-get update` if that fails); None on success,
    else the reason. Tried once per test session; never fatal (offline machines just skip)."""
    if package in _APT_RESULTS:
        return _APT_RESULTS[package] or None
    reason = ""
    if not _shutil.which("apt-get"):
        reason = "apt-get is not available"
    elif os.geteuid() != 0:
        reason = "not root, so apt-get install cannot run"
    else:
        reason = _apt_run(package)
    _APT_RESULTS[package] = reason
    return reason or None


def _apt_run(package: str) -> str:
    """One apt-get install at a time across pytest-xdist workers (dpkg's own lock would make a
    second concurrent install fail rather than wait); "" on success, else the reason."""
    import tempfile

    from filelock import FileLock

    reason = ""
    with FileLock(os.path.join(tempfile.gettempdir(), "vtcode-tests-apt.lock")):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        cmd = ["apt-get", "install", "-y", "-q", package]
        for step in (cmd, ["apt-get", "update", "-q"], cmd):
            try:
                proc = subprocess.run(
                    step, env=env, capture_output=True, text=True, timeout=900, check=False
                )
            except subprocess.TimeoutExpired:
                reason = f"`{' '.join(step)}` timed out"
                break
            if step is cmd and proc.returncode == 0:
                reason = ""
                break
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            reason = f"`{' '.join(step)}` exited {proc.returncode}: {tail[0]}"
    return reason


@pytest.fixture(scope="session")
def debian_tool() -> Callable[[str, str], str]:
    """`debian_tool(binary, package)`: the path of `binary`, installing Debian's `package` with
    apt-get when it is missing; skips the test with the reason when it cannot be had."""

    def get(binary: str, package: str) -> str:
        path = _shutil.which(binary)
        if path is None:
            reason = _apt_install(package)
            path = _shutil.which(binary)
            if path is None:
                pytest.skip(f"{binary} is not installed and could not be: {reason or 'not found'}")
        return path

    return get


# ---- the `e2e` marker: tests that start real processes ---------------------------------------
# Set here, not by hand, so a new test cannot forget it: a test is end-to-end when it uses the
# `run_vtcode` fixture or its module starts processes (the CLI through tests/exec_support.py,
# subprocess, tmux, Chromium). `pytest -m "not e2e"` runs the in-process tests alone.

_E2E_SIGNS = ("exec_support", "subprocess", "run_vtcode", "spawn_vtcode", "tmux", "chromium")
_E2E_MODULES: dict[str, bool] = {}


def _module_starts_processes(path: Path) -> bool:
    key = str(path)
    if key not in _E2E_MODULES:
        text = path.read_text(encoding="utf-8", errors="replace")
        _E2E_MODULES[key] = any(sign in text for sign in _E2E_SIGNS)
    return _E2E_MODULES[key]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        uses_cli = isinstance(item, pytest.Function) and "run_vtcode" in item.fixturenames
        if uses_cli or _module_starts_processes(Path(item.path)):
            item.add_marker(pytest.mark.e2e)
