"""What the redactor adds per event, next to plain encoding measured in the same process.

    .venv/bin/python bench/redact.py [--quick]

The gate calls `Redactor.event` on every event before anything sees it. Per event shape (a short
streamed text snapshot, a command's tool output, a long streamed snapshot), it prints the cost of
`encode_raw_line` (what every consumer pays to serialise the event once; the baseline) and of:

- `event` with no secret collected (only the URL-userinfo check runs);
- `event` with the secrets of a typical CI environment (two provider keys, an OTLP header, three
  secret-named variables) and none of them in the event: the common case;
- `event` on the same event with one secret in it: the rare case, the event is rebuilt;
- the detection step alone two ways, over the plain secrets only: the needles scanned with
  `bytes.__contains__` (what `might_contain` did before it also looked for encoded forms, about
  20 per secret, with one Aho-Corasick automaton) and the same needles as one compiled
  alternation.

Then a tool output holding a URL, an `@` and one long word (a minified file, a base64 blob): the
userinfo masking used to be quadratic in the word's length (about 50 s for 100,000 characters);
it prints `event` against `encode` per length, and the expression it replaced on the shorter
ones.

Ratios are against the baseline of the same event. Prints only; never asserts.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from collections.abc import Callable
from functools import partial

import orjson

from vtcode.events.codec import encode_raw_line
from vtcode.events.enums import ToolCallStatus
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ItemUpdatedEvent,
    ThreadEvent,
    ThreadItem,
    ToolOutputItem,
)
from vtcode.redact import Redactor, collect_secrets

CI_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/home/runner",
    "OPENAI_API_KEY": "sk-proj-" + "a1b2c3d4" * 6,
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "z9y8x7w6" * 8,
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + "otlp0123" * 4,
    "GITHUB_TOKEN": "ghs_" + "Q1w2E3r4" * 4,
    "NPM_TOKEN": "npm_" + "T5y6U7i8" * 4,
    "DATABASE_PASSWORD": "correct-horse-battery-staple",
}
PROSE = "The build failed in step 3 because the fixture path moved; see https://ci.example/run. "


def events() -> dict[str, ThreadEvent]:
    output = orjson.dumps(
        {
            "success": True,
            "output": "".join(f"test_case_{i} ... ok ({i % 7} ms)\n" for i in range(300)),
            "exit_code": 0,
            "command": "pytest -q",
        }
    ).decode()
    return {
        "text 200 B": ItemUpdatedEvent(
            item=ThreadItem(id="item_7", details=AgentMessageItem(text=PROSE * 2))
        ),
        "tool output 8 KB": ItemCompletedEvent(
            item=ThreadItem(
                id="call_3:output",
                details=ToolOutputItem(
                    call_id="item_6", output=output, status=ToolCallStatus.COMPLETED
                ),
            )
        ),
        "text 40 KB": ItemUpdatedEvent(
            item=ThreadItem(id="item_9", details=AgentMessageItem(text=PROSE * 450))
        ),
    }


def with_secret(event: ThreadEvent, secret: str) -> ThreadEvent:
    assert isinstance(event, ItemUpdatedEvent | ItemCompletedEvent)
    details = event.item.details
    if isinstance(details, AgentMessageItem):
        details = AgentMessageItem(text=details.text + secret)
    elif isinstance(details, ToolOutputItem):
        details = dataclasses.replace(details, output=details.output + secret)
    item = ThreadItem(id=event.item.id, details=details)
    return type(event)(item=item)


def _scan_in(needles: list[bytes], data: bytes) -> bool:
    return any(n in data for n in needles)


def best(fn: Callable[[], object], repeat: int, inner: int) -> float:
    """Best per-call seconds over `repeat` rounds of `inner` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - t) / inner)
    return min(times)


def main(quick: bool) -> None:
    repeat, inner = (3, 200) if quick else (7, 2000)
    secrets = collect_secrets(CI_ENV)
    none, typical = Redactor(), Redactor(secrets)
    needles = [orjson.dumps(s)[1:-1] for s in secrets]
    alternation = re.compile(b"|".join(re.escape(n) for n in needles))
    print(f"{len(secrets)} secrets collected from a CI-like environment; best of {repeat}x{inner}")
    header = f"{'event':<18}{'encode':>10}{'no secrets':>18}{'typical':>18}{'hit':>18}"
    print(header + f"{'scan in':>12}{'scan re':>12}")
    for name, event in events().items():
        hit = with_secret(event, CI_ENV["GITHUB_TOKEN"])
        assert typical.event(hit) is not hit and typical.event(event) is event
        encoded = orjson.dumps(event)
        base = best(partial(encode_raw_line, event), repeat, inner)
        cols = [
            best(partial(none.event, event), repeat, inner),
            best(partial(typical.event, event), repeat, inner),
            best(partial(typical.event, hit), repeat, inner),
        ]
        scan_in = best(partial(_scan_in, needles, encoded), repeat, inner)
        scan_re = best(partial(alternation.search, encoded), repeat, inner)
        cells = "".join(f"{c * 1e6:>8.1f} µs {c / base:>4.2f}x" for c in cols)
        print(
            f"{name:<18}{base * 1e6:>7.1f} µs{cells}"
            f"{scan_in * 1e6:>9.2f} µs{scan_re * 1e6:>9.2f} µs"
        )


_OLD_USERINFO = re.compile(
    r"([A-Za-z][A-Za-z0-9+.\-]*://)[^\s/?#\"'<>\\@]+(?:@[^\s/?#\"'<>\\@]+)*@"
)


def long_words(quick: bool) -> None:
    print("\ntool output 'URL: http://h/x' + one word of N characters + ' @'")
    print(f"{'N':>8}{'encode':>12}{'event':>22}{'old expression':>24}")
    none = Redactor()
    for n in (5_000, 20_000) if quick else (5_000, 20_000, 100_000, 1_000_000):
        text = f"URL: http://h/x\n{'x' * n} @"
        event = ItemCompletedEvent(
            item=ThreadItem(
                id="item_1",
                details=ToolOutputItem(call_id="c1", output=text, status=ToolCallStatus.COMPLETED),
            )
        )
        base = best(partial(encode_raw_line, event), 3, 3)
        new = best(partial(none.event, event), 3, 3)
        old_sub = partial(_OLD_USERINFO.sub, r"\1***@", text)
        old = f"{best(old_sub, 1, 1):>10.3f} s" if n <= 20_000 else "-"
        print(f"{n:>8}{base * 1e3:>9.2f} ms{new * 1e3:>10.2f} ms {new / base:>6.1f}x{old:>24}")


if __name__ == "__main__":
    main("--quick" in sys.argv[1:])
    long_words("--quick" in sys.argv[1:])
