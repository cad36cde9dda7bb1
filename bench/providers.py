"""vtcode's HTTP providers vs the official `openai` and `anthropic` SDKs (issue 16.5).

    .venv/bin/python bench/providers.py [--quick]

Prints, for each API, ratios measured in this one run (never asserts):

- import time: a fresh interpreter importing our provider module vs the SDK (best of N);
- per-request overhead: one short streamed reply (the llama.cpp-shaped fixture the tests use)
  from a 127.0.0.1 server, ours vs the SDK's streaming client, both reusing one connection
  pool; and a long reply (2,000 deltas) to show per-delta cost;
- the code the SDKs would replace (lines of the transport, SSE, retry and deadline modules).

Retry and error semantics are compared in the report, not here (they are behaviour, not speed).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anthropic
import openai
import orjson

from vtcode.messages import Message, ModelRequest
from vtcode.providers.anthropic import AnthropicProvider
from vtcode.providers.collect import collect
from vtcode.providers.openai import OpenAIProvider
from vtcode.providers.openai_responses import OpenAIResponsesProvider
from vtcode.providers.retry import RetryPolicy

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "sse"
ASK = ModelRequest(model="m", messages=(Message(role="user", content="x"),))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else delayed ACKs add ~40 ms to whichever client trips them
    bodies: dict[str, bytes] = {}

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        kind = self.path.rsplit("/", 1)[-1]
        body = self.bodies[kind if kind in ("messages", "responses") else "chat"]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _long_chat(n: int) -> bytes:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return (
            b"data: "
            + orjson.dumps(
                {
                    "id": "c",
                    "object": "chat.completion.chunk",
                    "created": 1,
                    "model": "m",
                    "choices": [choice],
                }
            )
            + b"\n\n"
        )

    parts = [chunk({"content": f" token{i}"}) for i in range(n)] + [chunk({}, "stop")]
    return b"".join(parts) + b"data: [DONE]\n\n"


def best(fn: Callable[[], object], repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def import_time(module: str, repeat: int) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(repeat)
    ]
    return min(runs)


def bench_imports(repeat: int) -> None:
    print(f"import time (fresh interpreter, best of {repeat})")
    for ours, sdk in (
        ("vtcode.providers.openai", "openai"),
        ("vtcode.providers.anthropic", "anthropic"),
    ):
        a, b = import_time(ours, repeat), import_time(sdk, repeat)
        print(
            f"  {ours:28s} {a * 1e3:7.1f} ms | {sdk:9s} {b * 1e3:7.1f} ms | sdk/ours {b / a:5.2f}x"
        )


def bench_requests(url: str, n: int, long_n: int) -> None:
    fast = RetryPolicy(max_retries=0)
    ours_oa = OpenAIProvider(model="m", base_url=f"{url}/v1", retry=fast)
    ours_an = AnthropicProvider(model="m", base_url=url, retry=fast)
    sdk_oa = openai.OpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
    sdk_an = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0)
    ours_rs = OpenAIResponsesProvider(model="m", base_url=f"{url}/v1", retry=fast)

    def oa_ours() -> object:
        return collect(ours_oa.stream(ASK))

    def oa_sdk() -> object:
        with sdk_oa.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        ) as s:
            return list(s)

    def an_ours() -> object:
        return collect(ours_an.stream(ASK))

    def an_sdk() -> object:
        with sdk_an.messages.stream(
            model="m", max_tokens=64, messages=[{"role": "user", "content": "x"}]
        ) as s:
            return s.get_final_message()

    def rs_ours() -> object:
        return collect(ours_rs.stream(ASK))

    def rs_sdk() -> object:
        with sdk_oa.responses.create(model="m", input="x", stream=True) as s:
            return list(s)

    def per_request(fn: Callable[[], object]) -> float:
        for _ in range(5):
            fn()  # warm the pool and caches
        samples = []
        for _ in range(5):
            samples.append(best(lambda: [fn() for _ in range(n)], 1) / n)
        return statistics.median(samples)

    print(f"per request, short streamed reply from 127.0.0.1 (median of 5 x {n})")
    for label, ours, sdk in (
        ("chat completions", oa_ours, oa_sdk),
        ("messages", an_ours, an_sdk),
        ("responses", rs_ours, rs_sdk),
    ):
        a, b = per_request(ours), per_request(sdk)
        print(
            f"  {label:16s} ours {a * 1e6:7.0f} us | sdk {b * 1e6:7.0f} us | sdk/ours {b / a:5.2f}x"
        )
    _Handler.bodies["chat"] = _long_chat(long_n)
    a, b = best(oa_ours, 3), best(oa_sdk, 3)
    print(
        f"  long reply ({long_n} deltas) ours {a * 1e3:6.1f} ms | sdk {b * 1e3:6.1f} ms"
        f" | sdk/ours {b / a:5.2f}x"
    )
    for closable in (ours_oa, ours_an, ours_rs, sdk_oa, sdk_an):
        closable.close()


def bench_code() -> None:
    names = ["http.py", "http_provider.py", "sse.py", "retry.py", "deadline.py"]
    lines = {n: len((ROOT / "vtcode" / "providers" / n).read_text().splitlines()) for n in names}
    print("code an SDK transport would replace (lines; decoders and body builders stay either way)")
    print("  " + ", ".join(f"{n} {c}" for n, c in lines.items()) + f"; total {sum(lines.values())}")


def main() -> None:
    quick = "--quick" in sys.argv
    _Handler.bodies = {
        "chat": (FIXTURES / "llamacpp_openai_text.sse").read_bytes(),
        "messages": (FIXTURES / "llamacpp_anthropic_text.sse").read_bytes(),
        "responses": (FIXTURES / "responses_text.sse").read_bytes(),
    }
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
    ).start()
    try:
        bench_imports(3 if quick else 7)
        bench_requests(
            f"http://127.0.0.1:{httpd.server_address[1]}",
            20 if quick else 100,
            500 if quick else 2000,
        )
        bench_code()
    finally:
        httpd.shutdown()
        httpd.server_close()


if __name__ == "__main__":
    main()
