"""Provider costs, each next to a baseline measured in the same process (prints; never asserts).

    .venv/bin/python bench/bench_providers.py [--quick]

- SSE parsing throughput (MB/s) of `SSEParser` fed 16 B and 4 KiB chunks, vs a baseline that
  buffers the whole body and splits on blank lines (no incremental state, LF only);
- OpenAI stream decoding end to end over a real 127.0.0.1 HTTP server: events/s and the time to
  stream one response, vs a bare httpx GET of the same bytes;
- replay provider: deltas per second for a long scripted answer.
"""

from __future__ import annotations

import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import orjson

from vtcode.messages import Message, ModelRequest
from vtcode.providers.collect import collect
from vtcode.providers.openai import OpenAIProvider
from vtcode.providers.replay import ReplayProvider
from vtcode.providers.retry import RetryPolicy
from vtcode.providers.script import ReplayScript, ScriptTurn
from vtcode.providers.sse import SSEParser

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sse" / "openai_text.sse"


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def baseline_split(data: bytes) -> int:
    n = 0
    for block in data.decode("utf-8").split("\n\n"):
        lines = [ln[6:] for ln in block.split("\n") if ln.startswith("data: ")]
        if lines:
            n += 1
    return n


def parse_chunks(data: bytes, size: int) -> int:
    p = SSEParser()
    n = 0
    for i in range(0, len(data), size):
        n += len(p.feed(data[i : i + size]))
    return n + len(p.close())


def bench_sse(quick: bool) -> None:
    body = FIXTURE.read_bytes() * (200 if quick else 2000)
    mb = len(body) / 1e6
    repeat = 3 if quick else 5
    base = best(lambda: baseline_split(body), repeat)
    big = best(lambda: parse_chunks(body, 4096), repeat)
    small = best(lambda: parse_chunks(body, 16), max(1, repeat - 2))
    print(f"sse: {mb:.1f} MB body, {parse_chunks(body, 4096)} events")
    print(f"  baseline split-on-blank-lines : {mb / base:8.1f} MB/s")
    for label, t in (("4 KiB chunks", big), ("16 B chunks ", small)):
        print(f"  SSEParser, {label}       : {mb / t:8.1f} MB/s  ({t / base:.2f}x baseline time)")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = b""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._send()

    def do_GET(self) -> None:
        self._send()


def _openai_body(n: int) -> bytes:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return b"data: " + orjson.dumps({**base, "choices": [choice]}) + b"\n\n"

    parts = [chunk({"role": "assistant", "content": ""})]
    parts += [chunk({"content": f" token{i}"}) for i in range(n)]
    parts.append(chunk({}, "stop"))
    usage = {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": n + 10}
    parts.append(b"data: " + orjson.dumps({**base, "choices": [], "usage": usage}) + b"\n\n")
    parts.append(b"data: [DONE]\n\n")
    return b"".join(parts)


def bench_http(quick: bool) -> None:
    _Handler.body = _openai_body(2000 if quick else 20000)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    )
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    p = OpenAIProvider(model="m", base_url=f"{url}/v1", retry=RetryPolicy(max_retries=0))
    client = httpx.Client()
    req = ModelRequest(model="m", messages=(Message(role="user", content="hi"),))
    repeat = 3 if quick else 7
    n_events = sum(1 for _ in p.stream(req))
    base = best(lambda: client.get(url).read(), repeat)
    full = best(lambda: collect(p.stream(req)), repeat)
    print(f"openai stream over 127.0.0.1: {len(_Handler.body) / 1e3:.0f} kB, {n_events} events")
    print(f"  bare httpx GET of the bytes   : {base * 1e3:8.2f} ms")
    print(
        f"  OpenAIProvider.stream+collect : {full * 1e3:8.2f} ms  "
        f"({full / base:.2f}x baseline time, {n_events / full:,.0f} events/s)"
    )
    client.close()
    p.close()
    httpd.shutdown()
    httpd.server_close()


def bench_replay(quick: bool) -> None:
    text = "lorem ipsum dolor sit amet " * (2000 if quick else 20000)
    script = ReplayScript(turn=[ScriptTurn(text=text)] * 3)
    req = ModelRequest(model="m", messages=(Message(role="user", content="hi"),))
    p = ReplayProvider(script)
    t = time.perf_counter()
    n = sum(1 for _ in p.stream(req))
    dt = time.perf_counter() - t
    base = best(lambda: [text[i : i + 24] for i in range(0, len(text), 24)], 3)
    print(
        f"replay: {n} deltas of 24 chars in {dt * 1e3:.1f} ms ({n / dt:,.0f} deltas/s; "
        f"{dt / base:.1f}x a bare slicing loop)"
    )


def main() -> None:
    quick = "--quick" in sys.argv
    bench_sse(quick)
    bench_http(quick)
    bench_replay(quick)


if __name__ == "__main__":
    main()
