"""Reader parity: what upstream's serde_json refuses is an error in every mode, located by key.

Each rule is tested on both sides of its boundary (the expected verdicts come from serde_json's
source, cited in vtcode/validate/parity.py, not from the code under test), in the default and
the --strict mode, in both line shapes, and through the real CLI with exit codes and --json codes.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest
from syrupy.assertion import SnapshotAssertion

from vtcode.jsontypes import encode
from vtcode.schemas import reference_validator
from vtcode.validate import (
    FileReport,
    FileStatus,
    ValidateOptions,
    build_report,
    validate_stream,
)
from vtcode.validate.report import Profile

RunVtcode = Callable[..., tuple[int, str, str]]
TID = "3b7e2c1a-9f4d-4e8a-b1c2-7d5e9a0f6b13"
START = b'{"type":"thread.started","thread_id":"t"}\n'
END = (
    b'{"type":"thread.completed","thread_id":"t","session_id":"t","subtype":"success",'
    b'"outcome_code":"success","usage":{"input_tokens":0,"cached_input_tokens":0,'
    b'"cache_creation_tokens":0,"output_tokens":0},"num_turns":0}\n'
)
MODES = pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])


def run(data: bytes, *, strict: bool = False, lifecycle: bool = True) -> FileReport:
    options = ValidateOptions(profile=Profile.VTCODE, strict=strict, lifecycle=lifecycle)
    report = validate_stream(io.BytesIO(data), "<test>", options)
    reference_validator("validate-report").validate(encode(build_report([report], options)))
    return report


def middle(line: bytes, *, strict: bool = False) -> FileReport:
    """`line` as line 2 of an otherwise valid raw log."""
    return run(START + line + b"\n" + END, strict=strict)


def found(report: FileReport) -> list[tuple[int, str, str, str]]:
    return [(p.line, p.code.value, p.pointer, p.severity.value) for p in report.problems]


def command(exit_code: bytes) -> bytes:
    return (
        b'{"type":"item.completed","item":{"id":"c","type":"command_execution",'
        b'"command":"true","aggregated_output":"","exit_code":'
        + exit_code
        + b',"status":"completed"}}'
    )


def tool(arguments: bytes) -> bytes:
    return (
        b'{"type":"item.completed","item":{"id":"i","type":"tool_invocation","tool_name":"t",'
        b'"arguments":' + arguments + b',"status":"completed","outcome":"success"}}'
    )


def nest(levels: int) -> bytes:
    """A value that is `levels` arrays deep."""
    return b"[" * levels + b"]" * levels


# ---------------------------------------------------------------- integers written as floats


@MODES
@pytest.mark.parametrize("literal", [b"0.0", b"1e3", b"1E+2", b"-0", b"-0.0", b"10.000"])
def test_an_integer_field_written_as_a_float_is_an_error_in_every_mode(
    literal: bytes, strict: bool
) -> None:
    report = middle(command(literal), strict=strict)
    assert found(report) == [(2, "float-for-integer", "/item/exit_code", "error")]
    assert report.problems[0].value == literal.decode()
    assert report.status is FileStatus.INVALID


@pytest.mark.parametrize("literal", [b"0", b"-1", b"2147483647", b"-2147483648"])
def test_integer_literals_are_fine(literal: bytes) -> None:
    assert found(middle(command(literal), strict=True)) == []


def test_a_fractional_value_is_the_schemas_wrong_type_only() -> None:
    assert [c for _, c, _, _ in found(middle(command(b"0.5")))] == ["wrong-type"]


def test_an_integer_beyond_64_bits_is_a_float_to_serde_json() -> None:
    line = END.replace(b'"num_turns":0', b'"num_turns":18446744073709551616')
    report = run(START + line)
    assert (2, "float-for-integer", "/num_turns", "error") in found(report)


def test_floats_where_the_contract_has_numbers_or_free_form_values_are_fine() -> None:
    line = END.replace(b'"num_turns":0', b'"num_turns":0,"total_cost_usd":1e-3')
    assert found(run(START + line, strict=True)) == []
    assert found(middle(tool(b'{"ratio":1.0,"n":1e3,"z":-0}'), strict=True)) == []


def test_every_integer_field_of_usage_and_the_envelope_seq_are_checked() -> None:
    usage = END.replace(b'"input_tokens":0', b'"input_tokens":1.0').replace(
        b'"output_tokens":0', b'"output_tokens":2e0'
    )
    assert found(run(START + usage)) == [
        (2, "float-for-integer", "/usage/input_tokens", "error"),
        (2, "float-for-integer", "/usage/output_tokens", "error"),
    ]
    wrapped = (
        b'{"schema_version":"0.11.0","event":{"type":"thread.started","thread_id":"t"},"seq":1.0}\n'
    )
    report = run(wrapped, lifecycle=False)
    assert (1, "float-for-integer", "/seq", "error") in found(report)


# ---------------------------------------------------------------- duplicate keys


@MODES
@pytest.mark.parametrize(
    ("line", "ptr"),
    [
        (
            b'{"type":"item.started","type":"item.completed","item":{"id":"a",'
            b'"type":"agent_message","text":"x"}}',
            "/type",
        ),
        (
            b'{"type":"item.completed","item":{"id":"a","type":"agent_message",'
            b'"text":"x","text":"y"}}',
            "/item/text",
        ),
        (tool(b'{"path":"a","deep":[{"k":1,"k":2}]}'), "/item/arguments/deep/0/k"),
    ],
    ids=["event-type", "item-text", "inside-arguments"],
)
def test_a_repeated_key_at_any_depth_is_an_error(line: bytes, ptr: str, strict: bool) -> None:
    assert found(middle(line, strict=strict)) == [(2, "duplicate-key", ptr, "error")]


def test_non_canonical_spacing_without_a_repeat_is_fine() -> None:
    # not what orjson writes, so it takes the slow path; it must find nothing there
    line = b'{ "type" : "item.completed", "item" : { "id" : "a", "type" : "agent_message", ' + (
        b'"text" : "x" } }'
    )
    assert found(middle(line, strict=True)) == []


# ---------------------------------------------------------------- depth


def test_127_levels_is_fine_and_128_is_too_deep_in_a_raw_line() -> None:
    # line {=1, item {=2, arguments [=3: arguments of n levels make the line n + 2 deep
    assert found(middle(tool(nest(125)), strict=True)) == []
    report = middle(tool(nest(126)))
    assert found(report) == [
        (2, "too-deep", "/item/arguments" + "/0" * 125, "error"),
    ]
    assert "127" in report.problems[0].message


def test_the_envelope_counts_as_one_level_in_a_wrapped_line() -> None:
    def wrapped(levels: int) -> bytes:
        event = orjson.loads(tool(b"null"))
        line = {"schema_version": "0.11.0", "event": event, "seq": 1}
        return orjson.dumps(line).replace(b'"arguments":null', b'"arguments":' + nest(levels))

    assert found(run(wrapped(124) + b"\n", lifecycle=False)) == []
    assert found(run(wrapped(125) + b"\n", lifecycle=False)) == [
        (1, "too-deep", "/event/item/arguments" + "/0" * 124, "error")
    ]


def test_objects_count_like_arrays() -> None:
    # arguments is the first of the objects: line {=1, item {=2, then n objects
    value = b'{"a":' * 126 + b"1" + b"}" * 126
    assert found(middle(tool(value))) == [(2, "too-deep", "/item/arguments" + "/a" * 125, "error")]
    value = b'{"a":' * 125 + b"1" + b"}" * 125
    assert found(middle(tool(value), strict=True)) == []


# ---------------------------------------------------------------- the u8 percentage


def reset(percent: bytes) -> bytes:
    return (
        b'{"type":"context.reset","thread_id":"t","turn_id":"u","trigger":"plan_approval",'
        b'"plan_preserved":true,"previous_context_usage_percent":' + percent + b","
        b'"tool_budget_reset":true}'
    )


@pytest.mark.parametrize(
    ("percent", "default", "strict"),
    [
        (b"100", [], []),
        (b"101", ["warning"], ["error"]),
        (b"255", ["warning"], ["error"]),
        (b"256", ["error"], ["error"]),
        (b"-1", ["error"], ["error"]),
    ],
)
def test_previous_context_usage_percent_is_a_u8_upstream(
    percent: bytes, default: list[str], strict: list[str]
) -> None:
    for mode, expected in ((False, default), (True, strict)):
        report = middle(reset(percent), strict=mode)
        assert [p.severity.value for p in report.problems] == expected
        assert all(p.pointer == "/previous_context_usage_percent" for p in report.problems)


def test_previous_context_usage_percent_written_as_a_float_is_an_error() -> None:
    assert found(middle(reset(b"50.0"))) == [
        (2, "float-for-integer", "/previous_context_usage_percent", "error")
    ]


# ---------------------------------------------------------------- the CLI


def test_cli_exit_codes_and_json_problem_codes(
    run_vtcode: RunVtcode, tmp_path: Path, snapshot_json: SnapshotAssertion
) -> None:
    log = tmp_path / "parity.jsonl"
    log.write_bytes(
        START
        + b'{"type":"turn.started","type":"turn.started"}\n'
        + command(b"1e0")
        + b"\n"
        + tool(nest(126))
        + b"\n"
        + reset(b"140")
        + b"\n"
        + b'{"type":"turn.completed","usage":{"input_tokens":0,"cached_input_tokens":0,'
        b'"cache_creation_tokens":0,"output_tokens":0}}\n' + END
    )
    for flags in ([], ["--strict"]):
        rc, out, err = run_vtcode(
            ["validate", "--profile", "vtcode", *flags, "parity.jsonl"], cwd=tmp_path
        )
        assert rc == 1, err
        assert "Traceback" not in err
        lines = err.splitlines()
        assert lines[:3] == [
            "parity.jsonl:2: error [duplicate-key] (shape) /type: key 'type' appears more than "
            "once in one object; upstream's reader (serde_json) refuses a repeated field, and "
            "readers differ on which value wins",
            "parity.jsonl:3: error [float-for-integer] (shape) /item/exit_code: exit_code is "
            "written 1e0; upstream's reader (serde_json) reads that as a float and refuses it for "
            "an integer field",
            "parity.jsonl:4: error [too-deep] (shape) /item/arguments"
            + "/0" * 125
            + ": nested 128 arrays/objects deep; upstream's reader (serde_json) stops at 127",
        ]
        severity = "error" if flags else "warning"
        assert lines[3].startswith(f"parity.jsonl:5: {severity} [out-of-range] ")
    rc, out, _ = run_vtcode(
        ["validate", "--profile", "vtcode", "--json", "parity.jsonl"], cwd=tmp_path
    )
    assert rc == 1
    doc = orjson.loads(out)
    reference_validator("validate-report").validate(doc)
    assert doc == snapshot_json
    codes = [(p["line"], p["code"], p["severity"]) for p in doc["files"][0]["problems"]]
    assert codes == [
        (2, "duplicate-key", "error"),
        (3, "float-for-integer", "error"),
        (4, "too-deep", "error"),
        (5, "out-of-range", "warning"),
    ]
