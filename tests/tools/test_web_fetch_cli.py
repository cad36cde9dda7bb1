"""web_fetch (issue 24 item 7) through the real CLI on the replay provider, against a real HTTP
server on 127.0.0.1 that records what it was asked: a fetch a domain rule allows, one refused
(no request reaches the server), a redirect to a refused host refused before it is followed, a
huge body cut, a URL with credentials refused without them reaching the log. Each event
sequence is snapshot-tested and every logged line validated against schemas/."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.exec_support import SESSION, canonical_lines, canonical_snapshot, vtcode

PAGE = (
    "<html><head><title>Release notes</title><script>var x = 1;</script></head><body>"
    "<h1>Version 2</h1><p>Faster <b>startup</b>; see <a href='/docs'>the docs</a>.</p>"
    "<ul><li>one</li><li>two</li></ul></body></html>"
)
HUGE = 5 * 1024 * 1024


class _Site:
    """Pages by path; every path asked for is recorded."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.redirect_to = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.seen.append(self.path)
                if self.path == "/go":
                    self.send_response(302)
                    self.send_header("Location", site.redirect_to)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.path == "/huge":
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(HUGE))
                    self.end_headers()
                    block = b"x" * 65536
                    try:
                        for _ in range(HUGE // len(block)):
                            self.wfile.write(block)
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # the client stopped reading at its cap
                    return
                body = PAGE.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site() -> Iterator[_Site]:
    s = _Site()
    try:
        yield s
    finally:
        s.close()


def _allow_loopback(tmp: Path) -> None:
    home = tmp / ".home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text('[permissions]\nallow = ["web_fetch(domain:127.0.0.1)"]\n')


def _fetch(tmp: Path, url: str) -> Any:
    script = tmp / "fetch.toml"
    script.write_text(
        '[[turn]]\nstop_reason = "tool_calls"\n[[turn.tool_calls]]\nname = "web_fetch"\n'
        f"arguments = {{ url = {json.dumps(url)} }}\n\n"
        '[[turn]]\ntext = "Done."\nstop_reason = "end_turn"\n'
    )
    return vtcode(
        ["exec", "--json", "-q", "--session-id", SESSION, "--script", str(script), "read it"], tmp
    )


def _output(tmp: Path) -> dict[str, Any]:
    items = [
        e["event"]["item"]
        for e in canonical_lines(tmp)
        if e["event"]["type"] == "item.completed" and e["event"]["item"]["type"] == "tool_output"
    ]
    assert len(items) == 1
    return items[0]


def _snapshot(tmp: Path, port: int) -> Any:
    return json.loads(json.dumps(canonical_snapshot(tmp)).replace(str(port), "<port>"))


def test_a_fetch_a_domain_rule_allows(
    tmp_path: Path, site: _Site, snapshot_json: SnapshotAssertion
) -> None:
    _allow_loopback(tmp_path)
    run = _fetch(tmp_path, f"http://127.0.0.1:{site.port}/notes")
    assert run.returncode == 0, run.stderr
    assert site.seen == ["/notes"]
    out = _output(tmp_path)
    assert out["status"] == "completed"
    text = out["output"]
    assert "# Release notes" in text and "# Version 2" in text
    assert f"[the docs](http://127.0.0.1:{site.port}/docs)" in text
    assert "- one\n- two" in text and "var x" not in text and "<p>" not in text
    assert _snapshot(tmp_path, site.port) == snapshot_json


def test_a_host_no_rule_allows_is_refused(
    tmp_path: Path, site: _Site, snapshot_json: SnapshotAssertion
) -> None:
    _allow_loopback(tmp_path)
    run = _fetch(tmp_path, f"http://localhost:{site.port}/notes")
    assert run.returncode == 0, run.stderr
    assert site.seen == []  # refused before any connection
    out = _output(tmp_path)
    assert out["status"] == "failed"
    assert "permission denied for web_fetch: the network is off" in out["output"]
    assert "web_fetch(domain:localhost)" in out["output"]
    assert _snapshot(tmp_path, site.port) == snapshot_json


def test_a_redirect_to_a_refused_host_is_not_followed(tmp_path: Path, site: _Site) -> None:
    _allow_loopback(tmp_path)
    site.redirect_to = f"http://localhost:{site.port}/secret"
    run = _fetch(tmp_path, f"http://127.0.0.1:{site.port}/go")
    assert run.returncode == 0, run.stderr
    assert site.seen == ["/go"]  # /secret never asked for
    out = _output(tmp_path)
    assert out["status"] == "failed"
    assert f"redirect to http://localhost:{site.port}/secret refused" in out["output"]
    assert "no allow rule web_fetch(domain:localhost)" in out["output"]


def test_a_redirect_the_rules_allow_is_followed(tmp_path: Path, site: _Site) -> None:
    _allow_loopback(tmp_path)
    site.redirect_to = "/notes"
    run = _fetch(tmp_path, f"http://127.0.0.1:{site.port}/go")
    assert run.returncode == 0, run.stderr
    assert site.seen == ["/go", "/notes"]
    assert f"URL: http://127.0.0.1:{site.port}/notes" in _output(tmp_path)["output"]


def test_a_huge_body_is_cut(tmp_path: Path, site: _Site) -> None:
    _allow_loopback(tmp_path)
    run = _fetch(tmp_path, f"http://127.0.0.1:{site.port}/huge")
    assert run.returncode == 0, run.stderr
    out = _output(tmp_path)["output"]
    assert "Truncated: body cut at 2097152 bytes; text cut at 100000 of 2097152 characters" in out
    assert len(out) < 100_200


def test_credentials_in_a_url_are_refused_and_never_logged(tmp_path: Path, site: _Site) -> None:
    _allow_loopback(tmp_path)
    run = _fetch(tmp_path, f"http://bob:hunter2@127.0.0.1:{site.port}/notes")
    assert run.returncode == 0, run.stderr
    assert site.seen == []
    out = _output(tmp_path)
    assert out["status"] == "failed" and "a URL with credentials is refused" in out["output"]
    session = tmp_path / ".vtcode" / "sessions" / SESSION
    for name in ("events.jsonl", "transcript.jsonl"):
        assert "hunter2" not in (session / name).read_text(), name
    assert "hunter2" not in run.stdout


def test_sandbox_network_on_needs_no_rule(tmp_path: Path, site: _Site) -> None:
    script_run = _fetch  # the same script, with the network on instead of a rule
    (tmp_path / ".home").mkdir()
    (tmp_path / ".home" / "config.toml").write_text("[sandbox]\nnetwork = true\n")
    run = script_run(tmp_path, f"http://127.0.0.1:{site.port}/notes")
    assert run.returncode == 0, run.stderr
    assert site.seen == ["/notes"]


def test_without_network_or_rule_the_tool_is_not_offered(tmp_path: Path, site: _Site) -> None:
    run = _fetch(tmp_path, f"http://127.0.0.1:{site.port}/notes")
    assert run.returncode == 0, run.stderr
    assert site.seen == []
    assert "unknown tool 'web_fetch'" in _output(tmp_path)["output"]
