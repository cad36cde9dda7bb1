"""Red team of the fast validator (issue 14 item 3): the screen, the split, hostile input.

Three promises, each attacked where the existing tests (test_validate_screen/_split/_hostile) do
not already look:

1. A line the typed screen accepts gets no finding in any mode: the whole report with the screen
   switched off (every line down the exact path) equals the report with it on.
2. `--jobs 2` gives the `--jobs 1` report for any file: random lifecycles (resumes, reused ids,
   other thread ids, unknown call ids, seq jumps, CRLF, garbage first lines, torn, blank and
   over-long lines) split at every line, and a file cut back while it is validated.
3. No traceback, no hang, no orphan process and bounded memory on hostile input through the real
   CLI: signals during a split, the path swapped between open and fork, an endless stdin line,
   a FIFO, a growing file, a directory.

Eight bugs found here were fixed (the ts regex, 309-digit free-form integers, a seq gap's
place after a split, a file cut back during a split, SIGINT/SIGTERM leaving or waiting for the
child, a FIFO swapped in at the path, one-turn logs forking for nothing); their tests stay.
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import split_sweep
from exec_support import vtcode
from lean import run_lean
from test_validate_screen import _exact_ok  # the exact path's verdict on one line

import vtcode.validate.scan as scan_module
import vtcode.validate.split as split_module
from vtcode.lineshape import LineShape
from vtcode.validate import FormatOption, ValidateOptions, validate_path
from vtcode.validate.engine import finish_report, start_state
from vtcode.validate.report import Profile
from vtcode.validate.screen import screen_for
from vtcode.validate.split import can_split, validate_split

REPO = Path(__file__).resolve().parents[2]
LOGS = sorted((REPO / "fixtures" / "logs").glob("*/*.jsonl"))
MODES = [
    ValidateOptions(profile=Profile.VTCODE, format=FormatOption.AUTO),
    ValidateOptions(profile=Profile.VTCODE, format=FormatOption.AUTO, strict=True),
    ValidateOptions(profile=Profile.VTCODE, format=FormatOption.AUTO, partial=True),
    ValidateOptions(profile=Profile.VTCODE, format=FormatOption.AUTO, lifecycle=False),
]
needs_split = pytest.mark.skipif(not can_split(), reason="needs fork and two CPUs")

START = b'{"type":"thread.started","thread_id":"t"}\n'
TURN = (
    b'{"type":"turn.started"}\n{"type":"turn.completed","usage":{"input_tokens":1,'
    b'"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":1}}\n'
)
END = (
    b'{"type":"thread.completed","thread_id":"t","session_id":"t","subtype":"success",'
    b'"outcome_code":"success","usage":{"input_tokens":0,"cached_input_tokens":0,'
    b'"cache_creation_tokens":0,"output_tokens":0},"num_turns":0}\n'
)
WRAPPED_TURN = b'{"schema_version":"0.11.0","event":{"type":"turn.started"},"seq":2,"ts":"TS"}'


def _report(path: Path, opts: ValidateOptions) -> dict[str, Any]:
    return dataclasses.asdict(validate_path(path, opts, jobs=1, display="log"))


def _split_report(path: Path, opts: ValidateOptions, at: int) -> dict[str, Any] | None:
    with path.open("rb") as f:
        state = start_state(opts)
        if validate_split(f, state, at=at) is None:
            return None
    return dataclasses.asdict(finish_report("log", state))


def _line_starts(data: bytes) -> list[int]:
    return [i + 1 for i, b in enumerate(data) if b == 0x0A and i + 1 < len(data)]


# --- 1. the screen --------------------------------------------------------------------------


class _NoScreen:
    """A screen that proves nothing: every line takes the exact path."""

    def __init__(self, shape: LineShape) -> None:
        real = screen_for(shape)
        self.variants = real.variants
        self.items = real.items

    def __call__(self, data: bytes | bytearray) -> None:
        return None


@pytest.fixture
def exact_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """While active, `scan` sends every line down the exact path (the reference verdict)."""
    monkeypatch.setattr(scan_module, "screen_for", _NoScreen)
    yield


def _both_paths(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, Any]]:
    """(fast, exact-only) report of `path` in every mode."""
    fast = [_report(path, o) for o in MODES]
    with monkeypatch.context() as m:
        m.setattr(scan_module, "screen_for", _NoScreen)
        exact = [_report(path, o) for o in MODES]
    return list(zip(fast, exact, strict=True))


def _exotic_lines() -> list[bytes]:
    """Valid or nearly valid lines at the edges of msgspec vs orjson/serde_json/jsonschema-rs."""
    item = (
        b'{"type":"item.completed","item":{"id":"a","type":"tool_invocation","tool_name":"t",'
        b'"status":"completed","arguments":ARGS}}'
    )
    args = [
        b"123456789012345678901234567890",  # past u64: serde reads an f64, not an integer field
        b"18446744073709551616",
        b"-9223372036854775809",
        b"-0",
        b'{"a":null,"b":[],"c":{}}',
        b'"\\/slash"',  # the long escape of `/`: re-encodes shorter
        b'"\\u2028\\u2029\\u007f"',
        b'"\xe2\x80\xa8"',  # a raw U+2028
        b'"\\ud83d\\ude00"',  # a surrogate pair
        b'"\\ud800"',  # a lone surrogate
        b"[" * 62 + b"]" * 62,  # under serde_json's depth with the envelope
        b"[" * 125 + b"]" * 125,
        b'{"x":1,"x":1}',
        b"1.0",
        b"1E400",
    ]
    out = [item.replace(b"ARGS", a) for a in args]
    done = END.rstrip(b"\n")
    for cost in (b"0", b"-0", b"1e-400", b"1.7976931348623157e308", b"1.8e308", b"7", b'"7"'):
        out.append(done.replace(b',"num_turns"', b',"total_cost_usd":' + cost + b',"num_turns"'))
    # the tag last, the item's id after its details, an empty optional object
    out.append(b'{"item":{"type":"agent_message","text":"x","id":"b"},"type":"item.completed"}')
    out.append(b'{"type":"turn.started","token_breakdown":{}}')
    return out


def test_exotic_lines_get_the_same_report_with_and_without_the_screen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "exotic.jsonl"
    log.write_bytes(START + b"\n".join(_exotic_lines()) + b"\n" + END)
    for fast, exact in _both_paths(log, monkeypatch):
        assert fast == exact
    accepted = [ln for ln in _exotic_lines() if screen_for(LineShape.RAW)(ln) is not None]
    assert len(accepted) >= 8, accepted  # the comparison covered the screen, not only refusals
    assert all(_exact_ok(ln, LineShape.RAW) for ln in accepted)


def test_every_fixture_log_gets_the_same_report_with_and_without_the_screen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for path in LOGS:
        for fast, exact in _both_paths(path, monkeypatch):
            assert fast == exact, path.name


# msgspec checks `Meta(pattern=...)` with Python's `re.search`: `\d` is any Unicode digit and `$`
# also matches before a final newline; the first three passed `_RFC3339` (fixed: [0-9], \Z).
@pytest.mark.parametrize(
    "ts",
    [
        pytest.param("2026-08-23T05:11:10Z\\n"),
        pytest.param(
            "\u0662\u0660\u0662\u0666-08-23T05:11:10Z",  # Arabic-Indic year
        ),
        pytest.param(
            "2026-08-23T05:11:10.\uff11Z",  # a fullwidth digit in the fraction
        ),
        "2026-08-23T05:11:10-00:00",
        "2026-08-23T05:11:10.123456789+23:59",
        "2026-08-23T05:11:10.1234567891Z",
        "2024-02-29T05:11:10Z",
        "2026-08-23T23:59:60Z",
        "2026-08-23t05:11:10z",
        "2026-08-23 05:11:10Z",
    ],
)
def test_a_ts_the_screen_accepts_is_a_valid_date_time(ts: str) -> None:
    line = WRAPPED_TURN.replace(b"TS", ts.encode())
    if screen_for(LineShape.WRAPPED)(line) is not None:
        assert _exact_ok(line, LineShape.WRAPPED)


# Was a bug: msgspec keeps a 309+ digit free-form integer exact; orjson/serde_json refuse it.


@pytest.mark.parametrize("digits", [b"9" * 309, b"-" + b"1" * 400])
def test_a_free_form_integer_past_the_double_range_is_not_screened(digits: bytes) -> None:
    line = _exotic_lines()[0].replace(b"123456789012345678901234567890", digits)
    assert screen_for(LineShape.RAW)(line) is None or _exact_ok(line, LineShape.RAW)


def test_cli_a_400_digit_tool_argument_is_the_error_it_is_on_the_exact_path(
    tmp_path: Path,
) -> None:
    line = _exotic_lines()[0].replace(b"123456789012345678901234567890", b'{"n":' + b"9" * 400)
    line = line.replace(b"}}", b"}}}")
    fast = tmp_path / "fast.jsonl"
    fast.write_bytes(START + line + b"\n" + END)
    slow = tmp_path / "slow.jsonl"  # a float elsewhere in the line refuses the screen
    slow.write_bytes(START + line.replace(b'{"n":', b'{"f":1.5,"n":') + b"\n" + END)
    codes = []
    for log in (fast, slow):
        out = vtcode(
            ["validate", "--profile", "vtcode", "--json", "--jobs", "1", str(log)], tmp_path
        )
        codes.append([p["code"] for p in orjson.loads(out.stdout)["files"][0]["problems"]])
    assert codes[1] == ["non-finite-number"]
    assert codes[0] == codes[1]


def test_cli_reports_a_ts_with_a_trailing_newline_or_foreign_digits(tmp_path: Path) -> None:
    log = tmp_path / "ts.wrapped.jsonl"
    lines = [
        b'{"schema_version":"0.11.0","event":{"type":"thread.started","thread_id":"t"},"seq":1,'
        b'"ts":"2026-08-23T05:11:10Z\\n"}',
        b'{"schema_version":"0.11.0","event":'
        + END.rstrip(b"\n")
        + ',"seq":2,"ts":"\u0662\u0660\u0662\u0666-08-23T05:11:10Z"}'.encode(),
    ]
    log.write_bytes(b"\n".join(lines) + b"\n")
    out = vtcode(["validate", "--profile", "vtcode", "--json", "--jobs", "1", str(log)], tmp_path)
    report = orjson.loads(out.stdout)
    assert out.returncode == 1, report
    assert [p["line"] for p in report["files"][0]["problems"]] == [1, 2]


# --- 2. the split ---------------------------------------------------------------------------


@needs_split
def test_a_seq_gap_on_an_unterminated_last_line_keeps_its_place_after_a_split(
    tmp_path: Path,
) -> None:
    first = (
        b'{"schema_version":"0.11.0","event":{"type":"thread.started","thread_id":"t"},"seq":1}\n'
    )
    log = tmp_path / "gap.wrapped.jsonl"
    log.write_bytes(first + b'{"schema_version":"0.11.0","event":{"type":"turn.started"},"seq":3}')
    opts = ValidateOptions(profile=Profile.VTCODE, partial=True)
    assert _split_report(log, opts, len(first)) == _report(log, opts)


@needs_split
def test_cli_seq_gap_on_an_unterminated_last_line(tmp_path: Path) -> None:
    first = (
        b'{"schema_version":"0.11.0","event":{"type":"thread.started","thread_id":"t"},"seq":1}\n'
    )
    log = tmp_path / "gap.wrapped.jsonl"
    log.write_bytes(first + b'{"schema_version":"0.11.0","event":{"type":"turn.started"},"seq":3}')
    args = ["validate", "--profile", "vtcode", "--json", "--partial", str(log)]
    one = vtcode([*args, "--jobs", "1"], tmp_path)
    two = vtcode([*args, "--jobs", "2"], tmp_path)
    assert one.stdout == two.stdout


def _thread_done(tid: str) -> dict[str, Any]:
    done: dict[str, Any] = orjson.loads(END)
    return {**done, "thread_id": tid, "session_id": tid}


def _item(etype: str, iid: str, kind: str, call: str) -> dict[str, Any]:
    details: dict[str, Any] = {
        "agent_message": {"text": "x"},
        "tool_invocation": {"tool_name": "t", "status": "completed"},
        "tool_output": {"call_id": call, "output": "o", "status": "completed"},
    }[kind]
    return {"type": etype, "item": {"id": iid, "type": kind, **details}}


def _lifecycle(rng: random.Random) -> list[dict[str, Any]]:
    """Runs of turns of items, ids drawn from a small pool (reused across runs and halves)."""
    ids = [f"i{k}" for k in range(6)]
    events: list[dict[str, Any]] = []
    for _ in range(rng.randint(1, 3)):
        events.append({"type": "thread.started", "thread_id": rng.choice("ttts")})
        for _ in range(rng.randint(0, 3)):
            events.append({"type": "turn.started"})
            for _ in range(rng.randint(0, 4)):
                iid, call = rng.choice(ids), rng.choice(ids)
                kind = rng.choice(["agent_message", "tool_invocation", "tool_output"])
                steps = rng.choice(
                    [
                        ["started", "completed"],
                        ["completed"],
                        ["started", "updated", "completed"],
                        ["started"],
                        ["updated"],
                    ]
                )
                events += [_item(f"item.{s}", iid, kind, call) for s in steps]
            if rng.random() < 0.2:
                events.append(
                    {
                        "type": "thread.compact_boundary",
                        "thread_id": rng.choice("ts"),
                        "trigger": "auto",
                        "mode": "local",
                        "original_message_count": 3,
                        "compacted_message_count": 1,
                    }
                )
            if rng.random() < 0.9:
                events.append(orjson.loads(TURN.split(b"\n")[1]))
        if rng.random() < 0.85:
            events.append(_thread_done(rng.choice("ttts")))
    for _ in range(rng.randint(0, 3)):  # dropped, repeated and swapped events
        i, j = rng.randrange(len(events)), rng.randrange(len(events))
        op = rng.randrange(3)
        if op == 0:
            del events[i]
        elif op == 1:
            events.insert(i, events[j])
        else:
            events[i], events[j] = events[j], events[i]
        if not events:
            break
    return events


_DAMAGE: list[Callable[[bytes], bytes]] = [
    lambda ln: ln[: len(ln) // 2],  # torn
    lambda ln: ln.replace(b'"t"', b'"t","thread_id":"u"', 1),  # repeated key
    lambda ln: b"",  # blank
    lambda ln: b"[1,2]",  # not an object
    lambda ln: ln.replace(b":0,", b":0.0,", 1),  # float for an integer
    lambda ln: ln.replace(b'"thread_id":"t"', b'"thread_id":7', 1),  # not a string
    lambda ln: ln.replace(b'"id":"i', b'"id":1,"x":"i', 1),  # an id that is not a string
    lambda ln: ln.replace(b'"agent_message"', b'"reasoning"', 1),  # the item type changes
    lambda ln: ln.replace(b'"x"', b'"' + b"y" * 200 + b'"', 1),  # over a 120-byte cap
    lambda ln: ln.replace(b'"seq":', b'"seq":1.0,"q":', 1),
]


def _random_log(rng: random.Random) -> bytes:
    wrapped = rng.random() < 0.5
    lines: list[bytes] = []
    seq = 0
    for ev in _lifecycle(rng):
        if not wrapped:
            lines.append(orjson.dumps(ev))
            continue
        seq += rng.choice([1] * 30 + [2, 3, 0, -1])  # mostly gapless; jumps and steps back
        envelope: dict[str, Any] = {"schema_version": "0.11.0", "event": ev}
        if rng.random() < 0.97:
            envelope["seq"] = seq
        lines.append(orjson.dumps(envelope))
    for _ in range(rng.choice([0, 0, 1, 2])):
        if lines:
            i = rng.randrange(len(lines))
            lines[i] = rng.choice(_DAMAGE)(lines[i])
    sep = b"\r\n" if rng.random() < 0.15 else b"\n"
    data = sep.join(lines) + (sep if rng.random() < 0.8 else b"")
    if rng.random() < 0.2:
        data = b"garbage\n{not json\n" + data
    return data


_FUZZ_OPTIONS = [
    ValidateOptions(profile=Profile.VTCODE),
    ValidateOptions(profile=Profile.VTCODE, strict=True, max_problems=2),
    ValidateOptions(profile=Profile.VTCODE, partial=True, format=FormatOption.AUTO),
    ValidateOptions(profile=Profile.VTCODE, lifecycle=False, max_problems=1),
    ValidateOptions(profile=Profile.VTCODE, max_problems=1),
    ValidateOptions(profile=Profile.VTCODE, format=FormatOption.AUTO, max_line_bytes=120),
]


@needs_split
def test_random_lifecycles_split_at_every_line_give_the_single_pass_report(
    tmp_path: Path,
) -> None:
    """Items open across the split, ids reused, resumed runs, other thread ids, unknown call ids,
    seq jumps and steps back, caps of 1 and 2, CRLF, torn/blank/over-long lines, garbage first."""
    rng = random.Random(1414)
    cases = []
    for case in range(25):
        data = _random_log(rng)
        log = tmp_path / f"log-{case}.jsonl"
        log.write_bytes(data)
        opts = rng.choice(_FUZZ_OPTIONS)
        if opts.format is FormatOption.RAW and data.startswith(b'{"schema_version"'):
            opts = dataclasses.replace(opts, format=FormatOption.WRAPPED)
        cases.append((log, opts))
    # In a lean interpreter: each split forks, and a fork from this worker costs 2-3x more.
    sweep = run_lean(split_sweep.every_line, cases, {})
    assert sweep.wrong == []
    assert sweep.joined > 80  # the comparisons ran on real joins, not only on declines


@needs_split
@pytest.mark.parametrize(
    "data",
    [
        START,  # one line
        START.rstrip(b"\n"),  # no newline at all
        START + END.rstrip(b"\n"),
        b"x\n" * 3 + START + TURN + END,  # garbage before the first object (format auto)
        b"\n\n" + START.replace(b"\n", b"\r\n") + TURN.replace(b"\n", b"\r\n") + END,
        START
        + b'{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"'
        + b"z" * 300
        + b'"}}\n'
        + TURN
        + END,  # a line over the cap right before and after split points
    ],
)
def test_degenerate_files_split_anywhere(tmp_path: Path, data: bytes) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(data)
    for opts in (
        ValidateOptions(profile=Profile.VTCODE, format=FormatOption.AUTO),
        ValidateOptions(
            profile=Profile.VTCODE, format=FormatOption.AUTO, max_line_bytes=200, max_problems=1
        ),
    ):
        expected = _report(log, opts)
        for at in _line_starts(data):
            got = _split_report(log, opts, at)
            assert got is None or got == expected, at


@needs_split
def test_a_valid_one_turn_log_is_joined_at_the_automatic_split_point(tmp_path: Path) -> None:
    items = b"".join(
        b'{"type":"item.started","item":{"id":"i%d","type":"agent_message","text":"x"}}\n'
        b'{"type":"item.completed","item":{"id":"i%d","type":"agent_message","text":"xy"}}\n'
        % (i, i)
        for i in range(2000)
    )
    log = tmp_path / "exec.jsonl"
    log.write_bytes(
        START + TURN.split(b"\n")[0] + b"\n" + items + TURN.split(b"\n")[1] + b"\n" + END
    )
    assert _report(log, ValidateOptions(profile=Profile.VTCODE))["status"].value == "valid"
    with log.open("rb") as f:  # no turn boundary to split at: no second process is wasted
        assert validate_split(f, start_state(ValidateOptions(profile=Profile.VTCODE))) is None


@needs_split
def test_a_file_cut_back_during_a_split_gives_a_consistent_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(START + TURN * 60 + END)
    parent = os.getpid()
    first_half_done = tmp_path / "first-half-done"
    scan, count = scan_module.scan, split_module._count_lines

    def scan_then_mark(*args: Any, **kw: Any) -> None:
        scan(*args, **kw)
        if os.getpid() == parent:
            first_half_done.touch()

    def cut_then_count(fd: int, end: int) -> int:  # in the child
        deadline = time.monotonic() + 30
        while not first_half_done.exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        os.truncate(log, len(START))  # e.g. a log rotated in place
        return count(fd, end)

    monkeypatch.setattr(split_module, "scan", scan_then_mark)
    monkeypatch.setattr(split_module, "_count_lines", cut_then_count)
    report = validate_path(log, ValidateOptions(profile=Profile.VTCODE), jobs=2)
    assert report.events <= report.lines
    assert all(p.line <= report.lines for p in report.problems)
