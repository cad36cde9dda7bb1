"""Unix sockets with `network = false` (issue 23 item 2), through the real CLI.

A command reaches a pathname socket only in the workspace, its private $TMPDIR, or on
`sandbox.allow_unix_sockets`; a listener in a shared temp dir (where ssh-agent and tmux keep
theirs) or elsewhere outside is refused, also through a symlink in the workspace, also while the
link is swapped under the connecting process; datagram sockets are refused; abstract names stay
in the command's own network namespace. An untrusted workspace cannot add to the list.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import sys
import threading
from pathlib import Path

import pytest

from tests.security.test_sandbox import _run
from vtcode.sandbox import Sandbox

pytestmark = pytest.mark.skipif(
    not Sandbox().available, reason="no Landlock + namespaces on this machine"
)


class _UnixListener:
    """A pathname unix socket that counts the connections it accepts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen(64)
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        # shutdown wakes the accept() the serving thread is blocked in; close alone does not
        # (Linux), and each close waited out the join's 5 s.
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        self.thread.join(timeout=5)
        assert not self.thread.is_alive(), "the listener's thread did not end"


def _py(code: str) -> str:
    return f"{sys.executable} -c {json.dumps(code)}"


_CONNECT = _py("import socket, sys; socket.socket(socket.AF_UNIX).connect(sys.argv[1])")
_OWN_SERVER = _py(
    "import socket, sys; srv = socket.socket(socket.AF_UNIX); srv.bind(sys.argv[1]); "
    "srv.listen(1); c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); "
    "a, _ = srv.accept(); c.send(b'ok'); print(a.recv(2))"
)


def test_network_off_reaches_only_the_workspace_tmpdir_and_listed_sockets(
    area: Path, tmp_path: Path
) -> None:
    in_temp = _UnixListener(tmp_path / "agent.sock")  # a shared temp dir: refused
    outside = _UnixListener(area / "outside" / "docker.sock")
    listed = _UnixListener(area / "outside" / "listed" / "ok.sock")
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0vtcode-test-" + secrets.token_hex(4))
    abstract.listen(1)
    commands = {
        "temp": f"{_CONNECT} {in_temp.path}",
        "outside": f"{_CONNECT} {outside.path}",
        "via_link": f"ln -s {outside.path} link.sock && {_CONNECT} link.sock",
        "dgram": _py(
            "import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)"
            f".sendto(b'x', {str(in_temp.path)!r})"
        ),
        "dgram_pair": _py("import socket; socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)"),
        "abstract": _py(
            f"import socket; socket.socket(socket.AF_UNIX).connect({abstract.getsockname()!r})"
        ),
        "listed": f"{_CONNECT} {listed.path}",
        "workspace": f"{_OWN_SERVER} own.sock",
        "tmpdir": f'{_OWN_SERVER} "$TMPDIR/own.sock"',
        "pair": _py("import socket; a, b = socket.socketpair(); a.send(b'ok'); print(b.recv(2))"),
    }
    try:
        proc, outputs = _run(
            area / "ws",
            list(commands.values()),
            "-c",
            f"sandbox.allow_unix_sockets=[{json.dumps(str(listed.path))}]",
        )
    finally:
        for listener in (in_temp, outside, listed):
            listener.close()
        abstract.close()
    assert proc.returncode == 0, proc.stderr
    out = dict(zip(commands, outputs, strict=True))
    for name in ("temp", "outside", "via_link", "dgram", "dgram_pair"):
        assert out[name]["exit_code"] != 0, (name, out[name])
        assert "Permission denied" in out[name]["output"], (name, out[name])
    assert out["abstract"]["exit_code"] != 0  # the host's abstract names are another netns's
    assert "Connection refused" in out["abstract"]["output"], out["abstract"]
    for name in ("listed", "workspace", "tmpdir", "pair"):
        assert out[name]["exit_code"] == 0, (name, out[name])
    for name in ("workspace", "tmpdir", "pair"):
        assert "b'ok'" in out[name]["output"], (name, out[name])
    assert (in_temp.accepted, outside.accepted, listed.accepted) == (0, 0, 1)


_SWAP = """
import os, socket, sys, threading
allowed, forbidden = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX); srv.bind(allowed); srv.listen(512)
stop = threading.Event()
def swap():
    while not stop.is_set():
        for target in (allowed, forbidden):
            os.symlink(target, "next.sock"); os.replace("next.sock", "link.sock")
threading.Thread(target=swap, daemon=True).start()
ok = refused = 0
for _ in range(400):
    c = socket.socket(socket.AF_UNIX)
    try:
        c.connect("link.sock")
    except OSError:
        refused += 1
    else:
        ok += 1
        srv.accept()[0].close()
    c.close()
stop.set()
print(ok, refused)
"""


def test_a_link_swapped_while_connecting_never_reaches_the_forbidden_socket(area: Path) -> None:
    outside = _UnixListener(area / "outside" / "docker.sock")
    ws = area / "ws"
    (ws / "swap.py").write_text(_SWAP)
    try:
        proc, outputs = _run(ws, [f"{sys.executable} swap.py {ws / 'own.sock'} {outside.path}"])
    finally:
        outside.close()
    assert proc.returncode == 0, proc.stderr
    assert outputs[0]["exit_code"] == 0, outputs[0]
    ok, refused = map(int, outputs[0]["output"].split())
    assert ok + refused == 400 and ok > 0 and refused > 0, (ok, refused)  # both were tried
    assert outside.accepted == 0


def test_an_untrusted_workspace_cannot_allow_a_socket(area: Path) -> None:
    outside = _UnixListener(area / "outside" / "docker.sock")
    ws = area / "ws"
    (ws / "vtcode.toml").write_text(
        f"[sandbox]\nallow_unix_sockets = [{json.dumps(str(outside.path))}]\n"
    )
    try:
        proc, outputs = _run(ws, [f"{_CONNECT} {outside.path}"])
    finally:
        outside.close()
    assert proc.returncode == 0, proc.stderr
    assert outputs[0]["exit_code"] != 0 and "Permission denied" in outputs[0]["output"]
    assert outside.accepted == 0


_OWN_FILTER = """
import ctypes, platform, sys
nr = {"x86_64": 317, "aarch64": 277, "riscv64": 277}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
class Ins(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("ins", ctypes.POINTER(Ins))]
allow = (Ins * 1)(Ins(0x06, 0, 0, 0x7FFF0000))
prog = Prog(1, allow)
listener = libc.syscall(nr, 1, 8, ctypes.byref(prog))  # SECCOMP_FILTER_FLAG_NEW_LISTENER
print("listener", listener, ctypes.get_errno())
plain = libc.syscall(nr, 1, 0, ctypes.byref(prog))
print("plain", plain)
"""


def test_no_way_around_the_broker(area: Path) -> None:
    """A filter of the command's own with a listener (its notification would come first and
    could let the connect through), io_uring, and AF_VSOCK (a VM's host, past any network
    namespace) are refused; a plain filter of its own is fine."""
    ws = area / "ws"
    (ws / "own_filter.py").write_text(_OWN_FILTER)
    commands = [
        f"{sys.executable} own_filter.py",
        _py("import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)"),
        _py(
            "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
            "params = ctypes.create_string_buffer(120); "
            "print(libc.syscall(425, 8, params), ctypes.get_errno())"
        ),
    ]
    proc, outputs = _run(ws, commands)
    assert proc.returncode == 0, proc.stderr
    own, vsock, uring = outputs
    assert "listener -1 13" in own["output"] and "plain 0" in own["output"], own
    assert vsock["exit_code"] != 0 and "Permission denied" in vsock["output"], vsock
    assert "-1 38" in uring["output"], uring  # ENOSYS
