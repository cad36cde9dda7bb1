"""Streaming large answers: log bytes per answer byte and seconds per MiB, by answer size.

Run: .venv/bin/python bench/streaming.py [--sizes 16,64,1024,4096] [--repeats 3] [--args-mib 4]

For each answer size (KiB) and each source, `vtcode exec --json` runs for real (a subprocess)
and streams one answer:

- replay: a script whose turn is the answer, streamed in the replay provider's 24-char deltas;
- openai: a real OpenAI-compatible chat-completions SSE server on 127.0.0.1 (in this process),
  48-char deltas, written in 16 KiB chunks;
- args: a `write_file` call whose 1 and `--args-mib` MiB of content stream as tool arguments
  (32-char deltas) - the case that once cost 53 s for 4 MB.

The baseline is the same run with a 16-byte answer, measured in this process; the marginal time
(median of --repeats, minus the baseline) per MiB of answer is printed with the log size per
answer byte. Linear streaming shows as both staying flat across sizes: the last columns are the
ratios to the smallest size (1.00 = linear; a quadratic log or CPU grows them with the size).
A marginal time under `NOISE` seconds is within the start-up noise: its s/MiB is not shown, and
time ratios start at the first size that is measurable.

Then the same paths in this process, without start-up noise, for 64 KiB to `--inproc-mib` MiB:
the recorder turning deltas into events (each encoded as the log line it becomes) for text and
for tool arguments, and the OpenAI decoder over the SSE parser fed 16 KiB chunks. Their s/MiB
ratio to 64 KiB is the CPU linearity (1.00 = linear).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

KIB = 1024
MIB = 1024 * KIB
NOISE = 0.1  # seconds: below this a marginal time is start-up jitter


def answer(size: int) -> str:
    line = "The quick brown fox jumps over the lazy dog, line "
    parts: list[str] = []
    n = i = 0
    while n < size:
        piece = f"{line}{i}.\n"
        parts.append(piece)
        n += len(piece)
        i += 1
    return "".join(parts)[:size]


class SSEServer:
    """Answers every POST with the current `body` (text/event-stream), then closes."""

    def __init__(self) -> None:
        self.body = b""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                body = server.body
                for i in range(0, len(body), 16 * KIB):
                    self.wfile.write(body[i : i + 16 * KIB])
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def serve(self, text: str) -> None:
        chunks = [text[i : i + 48] for i in range(0, len(text), 48)]
        events: list[dict[str, object]] = [
            {"choices": [{"index": 0, "delta": {"content": c}, "finish_reason": None}]}
            for c in chunks
        ]
        events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self.body = body.encode()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


Setup = Callable[[Path, str], list[str]]  # (workspace, answer) -> extra exec arguments


def _replay(ws: Path, text: str) -> list[str]:
    (ws / "s.toml").write_text(f"[[turn]]\ntext = {json.dumps(text)}\n")
    return ["--script", "s.toml"]


def _args(ws: Path, text: str) -> list[str]:
    (ws / "s.toml").write_text(
        '[[turn]]\nchunk_size = 32\n[[turn.tool_calls]]\nname = "write_file"\n'
        f'arguments = {{ path = "out.txt", content = {json.dumps(text)} }}\n\n'
        '[[turn]]\ntext = "Done."\n'
    )
    return ["--script", "s.toml"]


def _openai(server: SSEServer) -> Setup:
    def setup(ws: Path, text: str) -> list[str]:
        server.serve(text)
        return ["--provider", "openai", "--model", "m"]

    return setup


def run_once(setup: Setup, text: str, env: dict[str, str]) -> tuple[float, int]:
    """(seconds for the whole `vtcode exec --json`, bytes of its log)."""
    ws = Path(tempfile.mkdtemp(prefix="vtcode-bench-stream-"))
    try:
        extra = setup(ws, text)
        cmd = [sys.executable, "-m", "vtcode", "exec", "--json", "--session-id", "b", *extra]
        start = time.perf_counter()
        proc = subprocess.run(
            [*cmd, "go"], cwd=ws, env=env, capture_output=True, timeout=900, check=False
        )
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"vtcode failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        log = ws / ".vtcode" / "sessions" / "b" / "events.jsonl"
        return elapsed, log.stat().st_size
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def measure(setup: Setup, size: int, repeats: int, env: dict[str, str]) -> tuple[float, int]:
    text = answer(size)
    runs = [run_once(setup, text, env) for _ in range(repeats)]
    return statistics.median(t for t, _ in runs), runs[0][1]


def _inproc_text(size: int, tool: bool) -> tuple[float, int]:
    from vtcode.events.codec import encode_raw_line
    from vtcode.events.enums import ToolCallStatus, ToolOutcome
    from vtcode.events.types import ThreadEvent
    from vtcode.loop.recorder import Recorder

    text = answer(size)
    written = [0]

    def emit(event: ThreadEvent) -> None:
        written[0] += len(encode_raw_line(event))

    rec = Recorder(emit)
    step = 32 if tool else 24
    start = time.perf_counter()
    if tool:
        call = rec.tool_call("write_file", "call_1")
        for i in range(0, len(text), step):
            call.push(text[i : i + step])
        call.complete({"content": call.raw_args}, ToolCallStatus.COMPLETED, ToolOutcome.SUCCESS)
    else:
        item = rec.text()
        for i in range(0, len(text), step):
            item.push(text[i : i + step])
        item.finish()
    return time.perf_counter() - start, written[0]


def _inproc_sse(size: int) -> tuple[float, int]:
    from vtcode.providers.openai import OpenAIProvider
    from vtcode.providers.sse import iter_sse

    server = SSEServer.__new__(SSEServer)  # only its body builder
    SSEServer.serve(server, answer(size))
    body = server.body
    chunks = [body[i : i + 16 * KIB] for i in range(0, len(body), 16 * KIB)]
    provider = OpenAIProvider(model="m", base_url="http://127.0.0.1:9/v1")
    start = time.perf_counter()
    n = sum(1 for _ in provider._decode(iter_sse(chunks)))
    elapsed = time.perf_counter() - start
    provider.close()
    return elapsed, n


def inproc(max_mib: int) -> None:
    sizes = [64 * KIB, MIB] + [m * MIB for m in (4, 16) if m <= max_mib]
    print()
    print(f"{'in-process':14} {'answer':>9} {'seconds':>8} {'s/MiB':>7} {'s/MiB ratio':>11}")
    cases: list[tuple[str, Callable[[int], tuple[float, int]]]] = [
        ("recorder text", lambda n: _inproc_text(n, tool=False)),
        ("recorder args", lambda n: _inproc_text(n, tool=True)),
        ("sse+decode", _inproc_sse),
    ]
    for name, fn in cases:
        first: float | None = None
        for size in sizes:
            t = statistics.median(fn(size)[0] for _ in range(3))
            per_mib = t / (size / MIB)
            first = first or per_mib
            print(
                f"{name:14} {size // KIB:>7}Ki {t:>8.3f} {per_mib:>7.3f} {per_mib / first:>11.2f}"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="16,64,1024,4096", help="answer sizes in KiB")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--args-mib", type=int, default=4, help="largest tool-argument stream")
    ap.add_argument("--inproc-mib", type=int, default=16, help="largest in-process answer")
    opts = ap.parse_args()
    sizes = [int(s) * KIB for s in opts.sizes.split(",")]
    server = SSEServer()
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "",
        "VTCODE_HOME": tempfile.mkdtemp(prefix="vtcode-bench-home-"),
    }
    sources: list[tuple[str, Setup, list[int]]] = [
        ("replay", _replay, sizes),
        ("openai", _openai(server), sizes),
        ("args", _args, [MIB, opts.args_mib * MIB]),
    ]
    try:
        print(
            f"{'source':8} {'answer':>9} {'log bytes':>11} {'log/answer':>10} "
            f"{'s total':>8} {'s/MiB':>7} {'log ratio':>9} {'s/MiB ratio':>11}"
        )
        for name, setup, sizes_for in sources:
            base_t, _ = measure(setup, 16, opts.repeats, env)
            first_bytes: float | None = None
            first_time: float | None = None
            for size in sizes_for:
                t, log = measure(setup, size, opts.repeats, env)
                per_byte = log / size
                marginal = t - base_t
                first_bytes = first_bytes or per_byte
                per_mib = f"{marginal / (size / MIB):>7.2f}" if marginal >= NOISE else "      -"
                ratio = "          -"
                if marginal >= NOISE:
                    first_time = first_time or marginal / (size / MIB)
                    ratio = f"{marginal / (size / MIB) / first_time:>11.2f}"
                print(
                    f"{name:8} {size // KIB:>7}Ki {log:>11} {per_byte:>10.2f} {t:>8.2f} "
                    f"{per_mib} {per_byte / first_bytes:>9.2f} {ratio}"
                )
            print(f"{name:8} baseline (16-byte answer): {base_t:.2f} s")
    finally:
        server.close()
    inproc(opts.inproc_mib)


if __name__ == "__main__":
    main()
