"""Hostile input: whatever the bytes, a clear located report, never a traceback, bounded memory."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vtcode.jsontypes import encode
from vtcode.schemas import reference_validator
from vtcode.validate import (
    FileReport,
    FileStatus,
    ProblemCode,
    Severity,
    ValidateOptions,
    build_report,
    validate_path,
    validate_stream,
)
from vtcode.validate.report import Profile

START = b'{"type":"thread.started","thread_id":"t"}\n'
END = (
    b'{"type":"thread.completed","thread_id":"t","session_id":"t","subtype":"success",'
    b'"outcome_code":"success","usage":{"input_tokens":0,"cached_input_tokens":0,'
    b'"cache_creation_tokens":0,"output_tokens":0},"num_turns":0}\n'
)


def run(data: bytes, **opts: object) -> FileReport:
    report = validate_stream(
        io.BytesIO(data), "<test>", ValidateOptions(profile=Profile.VTCODE, **opts)
    )  # type: ignore[arg-type]
    reference_validator("validate-report").validate(
        encode(build_report([report], ValidateOptions(profile=Profile.VTCODE)))
    )
    return report


def middle(line: bytes) -> FileReport:
    """Validate `line` as line 2 of an otherwise valid log."""
    return run(START + line + b"\n" + END)


def codes(report: FileReport, line: int | None = None) -> list[str]:
    return [p.code.value for p in report.problems if line is None or p.line == line]


def agent(text_json: bytes, iid: bytes = b"item_0") -> bytes:
    return (
        b'{"type":"item.completed","item":{"id":"'
        + iid
        + b'","type":"agent_message","text":'
        + text_json
        + b"}}"
    )


BAD_UTF8 = agent(b'"caf\xc3"')
OVERLONG = agent(b'"\xc0\x80 overlong NUL"')


@pytest.mark.parametrize(
    ("line", "code", "column"),
    [
        (b'{"type":"error","message":NaN}', "non-finite-number", 27),
        (b'{"type":"error","message":Infinity}', "non-finite-number", 27),
        (b'{"type":"error","message":-Infinity}', "non-finite-number", 28),
        (
            b'{"type":"turn.failed","message":"x","usage":{"input_tokens":1e400}}',
            "non-finite-number",
            None,
        ),
        (agent(b'"\\ud800"'), "lone-surrogate", None),
        (agent(b'"\\udc00 low first"'), "lone-surrogate", None),
        (BAD_UTF8, "invalid-utf8", BAD_UTF8.index(b"\xc3") + 1),
        (OVERLONG, "invalid-utf8", OVERLONG.index(b"\xc0") + 1),
        (b"\xef\xbb\xbf" + START.strip(), "malformed-json", 1),
        (b'{"type":"turn.started"', "malformed-json", 23),
        (b'{"type":"turn.started"} trailing', "malformed-json", 25),
        (b'{"type":"turn.started",}', "malformed-json", 23),
        (b"{'type':'turn.started'}", "malformed-json", 2),
        (b"\x00\x00\x00", "malformed-json", 1),
        (b"[" * 2000 + b"]" * 2000, "too-deep", None),
    ],
)
def test_unparsable_lines_get_their_own_code_and_column(
    line: bytes, code: str, column: int | None
) -> None:
    report = middle(line)
    assert report.status is FileStatus.INVALID
    (problem,) = [p for p in report.problems if p.line == 2]
    assert problem.code.value == code
    if column is not None:
        assert problem.column == column
    assert codes(report) == [code]  # the lines around it are still checked, and fine


def test_a_valid_surrogate_pair_and_crlf_endings_are_fine() -> None:
    report = run(START.replace(b"\n", b"\r\n") + agent(b'"\\ud83d\\ude00"') + b"\r\n" + END)
    assert report.status is FileStatus.VALID, report.problems


def test_deep_nesting_falls_back_to_the_reference_validator() -> None:
    # jsonschema-rs refuses values nested past its recursion limit; orjson allows 1024 levels.
    # Schema-wise the line is fine (the fallback says so); only serde_json's depth rule
    # (127 levels) refuses it, so that is the one problem reported.
    deep = b"[" * 1000 + b"]" * 1000
    line = (
        b'{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","tool_name":"t",'
        b'"arguments":' + deep + b"}}"
    )
    assert codes(middle(line)) == ["too-deep"]
    extra = b'{"type":"turn.started","x":' + deep + b"}"
    strict = run(START + b'{"type":"turn.started"}\n{"type":"turn.failed","message":"m"}\n' + END)
    assert strict.status is FileStatus.VALID
    report = run(START + extra + b'\n{"type":"turn.failed","message":"m"}\n' + END, strict=True)
    assert codes(report) == ["extra-field", "too-deep"]


DEEP = b"[" * 1020 + b"]" * 1020  # just under orjson's 1024 limit: parses, then must be explained


@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b'{"type":"item.completed","item":' + DEEP + b"}", "wrong-type"),
        (b'{"type":"turn.failed","message":' + DEEP + b"}", "wrong-type"),
        (b'{"type":' + DEEP + b"}", "wrong-type"),
        (b'{"type":"plan.delta","x":' + DEEP + b"}", "missing-field"),
        (
            b'{"type":"item.completed","item":{"id":"a","type":"mcp_tool_call","tool_name":"x",'
            b'"arguments":' + DEEP + b',"result":' + DEEP + b"}}",
            "wrong-type",
        ),
        (b'{"schema_version":"0.11.0","event":' + DEEP + b"}", "shape-mismatch"),
    ],
    ids=["item", "message", "type", "extra", "arguments+result", "envelope"],
)
def test_values_nested_1020_deep_anywhere_are_explained_not_crashed(
    line: bytes, code: str, strict: bool
) -> None:
    report = run(START + line + b"\n", strict=strict, lifecycle=False)
    # 1020 levels is also past serde_json's 127: upstream's reader refuses the line for that too
    assert codes(report) == [code, "too-deep"]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"null", "wrong-type"),
        (b"123", "wrong-type"),
        (b"true", "wrong-type"),
        (b'"turn.started"', "wrong-type"),
        (b"{}", "missing-field"),
        (b'{"type":42}', "wrong-type"),
        (b'{"type":["turn.started"]}', "wrong-type"),
        (b'{"type":{"nested":1}}', "wrong-type"),
        (
            b'{"type":"turn.completed","usage":{"input_tokens":1180591620717411303424,'
            b'"cached_input_tokens":0,"cache_creation_tokens":0,"output_tokens":0}}',
            "out-of-range",
        ),
    ],
)
def test_odd_values_are_schema_problems_not_crashes(line: bytes, code: str) -> None:
    report = middle(line)
    assert code in codes(report, 2)


def test_control_characters_from_the_log_never_reach_the_terminal_raw(
    run_vtcode: object, tmp_path: Path
) -> None:
    evil = "\x1b]0;pwned\x07\x1b[2J"
    log = tmp_path / "evil.jsonl"
    bad_type = orjson.dumps({"type": evil + "x" * 500})
    log.write_bytes(bad_type + b"\n" + START + orjson.dumps({"type": evil, "k": 1}) + b"\n")
    rc, _, err = run_vtcode(["validate", "--profile", "vtcode", "--strict", str(log)])  # type: ignore[operator]
    assert rc == 1
    assert "\x1b" not in err and "\x07" not in err
    assert "Traceback" not in err
    report = validate_path(log, ValidateOptions(profile=Profile.VTCODE, strict=True))
    assert all(len(p.message) <= 400 for p in report.problems)
    assert all(not isinstance(p.value, str) or len(p.value) <= 160 for p in report.problems)


def test_random_binary_file_is_reported_and_capped(tmp_path: Path) -> None:
    log = tmp_path / "random.bin"
    log.write_bytes(random.Random(7).randbytes(2 * 1024 * 1024))
    report = validate_path(log, ValidateOptions(profile=Profile.VTCODE, max_problems=50))
    assert report.status is FileStatus.INVALID
    assert len(report.problems) == 50
    assert report.errors + report.warnings == 50 + report.suppressed
    assert report.suppressed > 0
    assert {p.code for p in report.problems} <= {
        ProblemCode.INVALID_UTF8,
        ProblemCode.MALFORMED_JSON,
        ProblemCode.BLANK_LINE,
        ProblemCode.TORN_LINE,
        ProblemCode.LONE_SURROGATE,
        ProblemCode.NON_FINITE_NUMBER,
    }


def test_a_file_of_newlines_has_no_events() -> None:
    report = run(b"\n" * 5000)
    assert report.lines == 5000
    assert report.errors == 1 and report.warnings == 5000
    assert report.suppressed == 5001 - 1000
    assert report.problems[0].code is ProblemCode.BLANK_LINE
    assert report.status is FileStatus.INVALID  # no thread at all


def test_unterminated_but_parsable_last_line_is_only_a_warning() -> None:
    report = run(START + END.rstrip(b"\n"))
    assert report.status is FileStatus.VALID
    assert codes(report) == ["missing-newline"]


def test_torn_line_after_a_complete_thread_is_still_an_error() -> None:
    report = run(START + END + b'{"type":"turn.sta', partial=True)
    assert [(p.code.value, p.severity) for p in report.problems] == [
        ("torn-line", Severity.WARNING)
    ]
    report = run(START + END + b'{"type":"turn.sta')
    assert codes(report) == ["torn-line"]


# The measured process is started by a small launcher: a child's ru_maxrss includes the RSS of the
# process it was (v)forked from, so spawning it straight from pytest would report pytest's size.
_LAUNCH = (
    "import os, subprocess, sys\n"
    "p = subprocess.Popen(sys.argv[1:])\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "sys.stderr.write(f'\\nMAXRSS {usage.ru_maxrss}\\n')\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def _child_max_rss_mb(args: list[str]) -> tuple[int, float, str]:
    """Run `vtcode validate ARGS`; return its exit code, its own peak RSS (MiB) and output."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _LAUNCH,
            sys.executable,
            "-m",
            "vtcode",
            "validate",
            "--profile",
            "vtcode",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    text, _, rss = (proc.stdout + proc.stderr).rpartition("\nMAXRSS ")
    assert "Traceback" not in text
    return proc.returncode, int(rss) / 1024, text


@pytest.fixture(scope="module")
def hundred_mb_line(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "huge.jsonl"
    with path.open("wb") as f:
        f.write(START)
        f.write(b'{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"')
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            f.write(chunk)
        f.write(b'"}}\n')
        f.write(b'{"type":"turn.started"\n')  # checked after the huge line: still line 3
        f.write(END)
    return path


def test_a_100_mb_line_is_skipped_with_memory_bounded_by_the_cap(hundred_mb_line: Path) -> None:
    code, rss_default, text = _child_max_rss_mb([str(hundred_mb_line)])
    assert code == 1
    assert "huge.jsonl:2: error [line-too-long] (reading)" in text
    code, rss_small, _ = _child_max_rss_mb(["--max-line-bytes", "1048576", str(hundred_mb_line)])
    assert code == 1
    # One buffer of at most the cap (64 MiB), not the whole 100 MB line, nor twice the cap.
    assert rss_default < rss_small + 64 + 16, (rss_default, rss_small)
    assert rss_small < 64, rss_small
    report = validate_path(hundred_mb_line)
    assert [(p.line, p.code.value) for p in report.problems] == [
        (2, "line-too-long"),
        (3, "malformed-json"),
    ]
    assert "104857676 bytes" in report.problems[0].message


def test_a_large_valid_line_under_the_cap_is_validated() -> None:
    text = orjson.dumps("y" * (8 * 1024 * 1024))
    assert middle(agent(text)).status is FileStatus.VALID


def test_a_line_exactly_at_the_cap_passes_and_one_byte_more_does_not() -> None:
    line = agent(b'"' + b"z" * 100 + b'"')
    cap = len(line)
    ok = run(START + line + b"\n" + END, max_line_bytes=max(cap, len(END)))
    assert ok.status is FileStatus.VALID
    over = run(START + line + b"z\n", max_line_bytes=cap, lifecycle=False)
    assert codes(over) == ["line-too-long"]


def test_fifo_and_dev_null_inputs(tmp_path: Path) -> None:
    fifo = tmp_path / "events.fifo"
    os.mkfifo(fifo)

    def writer() -> None:
        with fifo.open("wb") as f:
            f.write(START + END)

    t = threading.Thread(target=writer)
    t.start()
    report = validate_path(fifo)
    t.join(timeout=10)
    assert report.status is FileStatus.VALID
    empty = validate_path("/dev/null")
    assert codes(empty) == ["empty-log"]


def test_symlink_loop_and_directory_symlink_are_unreadable(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    (tmp_path / "d").mkdir()
    (tmp_path / "to_dir").symlink_to(tmp_path / "d")
    for p in (loop, tmp_path / "to_dir"):
        report = validate_path(p)
        assert report.status is FileStatus.UNREADABLE
        assert report.problems[0].line == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_permission_denied_is_unreadable(tmp_path: Path) -> None:  # pragma: no cover
    p = tmp_path / "secret.jsonl"
    p.write_bytes(START)
    p.chmod(0)
    report = validate_path(p)
    assert report.problems[0].message == "permission denied"


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
event_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["turn.started", "item.completed", "thread.completed", "x.y", ""])},
    optional={"item": json_values, "usage": json_values, "thread_id": json_values},
)
line_bytes = st.one_of(
    st.binary(max_size=80).map(lambda b: b.replace(b"\n", b"")),
    event_like.map(orjson.dumps),
    st.fixed_dictionaries({"schema_version": json_values, "event": event_like}).map(orjson.dumps),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(line_bytes, max_size=12), st.booleans(), st.booleans(), st.booleans())
def test_fuzz_never_raises_and_always_reports_a_schema_valid_document(
    lines: list[bytes], final_newline: bool, strict: bool, partial: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if final_newline and lines else b"")
    report = run(data, strict=strict, partial=partial)
    n = report.lines
    assert all(0 <= p.line <= max(n, 1) for p in report.problems)
    assert report.status in (FileStatus.VALID, FileStatus.INVALID)
    assert (report.status is FileStatus.INVALID) == (report.errors > 0)
