"""The text tool-call reader (issue 28 item 4): table-driven over what small models write.

Each row is a reply text and what must come of it against the catalog: the calls (name and
arguments as parsed JSON), whether it was tool-call-shaped, whether it was only that. Names not
in the catalog, nonsense and unparsable text never become calls; near-JSON is repaired only for
the listed mistakes; huge or hostile text is read in bounded time.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from vtcode.loop.near_json import loads_near_json
from vtcode.loop.text_calls import MAX_CALLS, MAX_SCAN_CHARS, scan_text_calls

CATALOG = {"read_file", "list_files", "apply_patch", "exec_command", "write_file"}

Call = tuple[str, dict[str, Any]]

ROWS: list[tuple[str, str, list[Call], bool, bool]] = [
    # (id, text, calls, shaped, only_calls)
    (
        "bare",
        '{"name": "list_files", "arguments": {"path": "."}}',
        [("list_files", {"path": "."})],
        True,
        True,
    ),
    (
        "fenced-json",
        'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "a.py"}}\n```',
        [("read_file", {"path": "a.py"})],
        True,
        True,
    ),
    (
        "fence-no-lang",
        '```\n{"name": "list_files", "arguments": {}}\n```',
        [("list_files", {})],
        True,
        True,
    ),
    (
        "parameters-key",
        '{"name": "read_file", "parameters": {"path": "x"}}',
        [("read_file", {"path": "x"})],
        True,
        True,
    ),
    (
        "arguments-as-string",
        '{"name": "read_file", "arguments": "{\\"path\\": \\"x\\"}"}',
        [("read_file", {"path": "x"})],
        True,
        True,
    ),
    (
        "openai-function-shape",
        '{"type": "function", "function": {"name": "list_files", "arguments": "{}"}}',
        [("list_files", {})],
        True,
        True,
    ),
    (
        "hermes-two",
        '<tool_call>\n{"name": "exec_command", "arguments": {"command": "ls"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "b"}}\n</tool_call>',
        [("exec_command", {"command": "ls"}), ("read_file", {"path": "b"})],
        True,
        True,
    ),
    (
        "hermes-unclosed",
        '<tool_call>\n{"name": "list_files", "arguments": {"path": "src"}}',
        [("list_files", {"path": "src"})],
        True,
        True,
    ),
    (
        "array-of-calls",
        '[{"name": "list_files", "arguments": {}},'
        ' {"name": "read_file", "arguments": {"path": "a"}}]',
        [("list_files", {}), ("read_file", {"path": "a"})],
        True,
        True,
    ),
    (
        "two-fences",
        '```json\n{"name": "list_files", "arguments": {}}\n```\nthen\n'
        '```json\n{"name": "read_file", "arguments": {"path": "a"}}\n```',
        [("list_files", {}), ("read_file", {"path": "a"})],
        True,
        True,
    ),
    (
        "near-json",
        "{'name': 'write_file', 'arguments': "
        "{'path': 'a.txt', 'content': 'x\ny', 'force': True, 'mode': None,},}",
        [("write_file", {"path": "a.txt", "content": "x\ny", "force": True, "mode": None})],
        True,
        True,
    ),
    ("not-in-catalog", '```json\n{"name": "sum_to", "arguments": {"n": 3}}\n```', [], True, True),
    # A name that is no tool but plainly means one (issue 28, qwen0.5b on llama.cpp): an alias
    # of a built-in tool, or arguments shaped exactly like one tool's.
    (
        "alias-bash",
        '{"name": "bash", "arguments": {"command": "ls"}}',
        [("exec_command", {"command": "ls"})],
        True,
        True,
    ),
    (
        "alias-case-and-space",
        '{"name": " Cat ", "arguments": {"path": "a.py"}}',
        [("read_file", {"path": "a.py"})],
        True,
        True,
    ),
    (
        "task-function-with-write-arguments",
        '{"name": "sum_to", "arguments": {"path": "sum_to.py", "content": "x = 1\\n"}}',
        [("write_file", {"path": "sum_to.py", "content": "x = 1\n"})],
        True,
        True,
    ),
    (
        "task-file-with-a-command",
        '{"name": "test_sum.py", "arguments": "{\\"command\\": \\"python3 test_sum.py\\"}"}',
        [("exec_command", {"command": "python3 test_sum.py"})],
        True,
        True,
    ),
    # Anything less plain stays no call: extra keys, a path alone (a read or a listing?), an
    # alias of a tool the catalog does not hold.
    (
        "shape-with-extra-key",
        '{"name": "sum_to", "arguments": {"path": "a", "content": "b", "n": 1}}',
        [],
        True,
        True,
    ),
    ("shape-path-only", '{"name": "sum_to", "arguments": {"path": "a"}}', [], True, True),
    (
        "alias-not-in-catalog",
        '{"name": "grep_files", "arguments": {"pattern": "x"}}',
        [],
        True,
        True,
    ),
    ("file-as-tool", '{"name": "greet.py", "arguments": {}}', [], True, True),
    ("unparsable", '{"name": "read_file", "arguments": {"path": "a.py"', [], True, True),
    ("hermes-garbage", "<tool_call>call read_file please</tool_call>", [], True, True),
    ("arguments-not-object", '{"name": "read_file", "arguments": [1, 2]}', [], True, True),
    ("bare-word-not-guessed", '{"name": "read_file", "arguments": {"path": a.py}}', [], True, True),
    ("prose", "The function returns the sum of 1..n. Use {n} in f-strings.", [], False, False),
    ("code-fence", '```python\nd = {"name": 1}\nprint(d)\n```', [], False, False),
    ("json-without-name", '```json\n{"answer": 42}\n```', [], False, False),
    ("empty", "", [], False, False),
    (
        "long-prose-with-bad-call",
        "Here is a long explanation. " * 20 + '\n{"name": "nope", "arguments": {}}',
        [],
        True,
        False,
    ),
]


@pytest.mark.parametrize(
    ("text", "calls", "shaped", "only"), [r[1:] for r in ROWS], ids=[r[0] for r in ROWS]
)
def test_scan(text: str, calls: list[Call], shaped: bool, only: bool) -> None:
    got = scan_text_calls(text, CATALOG)
    assert [(c.name, json.loads(c.arguments)) for c in got.calls] == calls
    assert got.shaped is shaped
    assert got.only_calls is only
    if shaped and not calls:
        assert got.problems  # the nudge can say what was wrong


def test_repairs_are_named_and_strict_json_needs_none() -> None:
    got = scan_text_calls("{'name': 'list_files', 'arguments': {'all': True,}}", CATALOG)
    assert got.calls[0].repairs == ("Python literals", "single quotes", "trailing comma")
    assert (
        scan_text_calls('{"name": "list_files", "arguments": {}}', CATALOG).calls[0].repairs == ()
    )


@pytest.mark.parametrize(
    "text",
    [
        "{'a': 1 'b': 2}",  # a missing comma is not guessed
        '{"a": "unterminated',
        "{a: 1}",  # bare keys are not guessed
        '{"a": NaN}',
        '{"a": 1} trailing prose',
    ],
)
def test_near_json_refuses_what_it_would_have_to_guess(text: str) -> None:
    assert loads_near_json(text) is None


def test_prose_keeps_the_text_around_the_calls() -> None:
    got = scan_text_calls(
        'Listing now:\n```json\n{"name": "list_files", "arguments": {}}\n```\nDone.', CATALOG
    )
    assert got.prose == "Listing now:\n\nDone."


def test_calls_are_capped() -> None:
    text = "\n".join('{"name": "list_files", "arguments": {}}' for _ in range(MAX_CALLS * 3))
    assert len(scan_text_calls(text, CATALOG).calls) == MAX_CALLS


@pytest.mark.parametrize(
    "text",
    [
        "{" * 2_000_000,
        "[" * 2_000_000,
        "<tool_call>" * 200_000,
        '\n{"name": "x"}' * 200_000,
        '{"name": "read_file", "arguments": "' + "a" * 2_000_000,
        "```json\n" * 200_000,
        "'" * 2_000_000,
    ],
    ids=["braces", "brackets", "tags", "many-objects", "huge-string", "fences", "quotes"],
)
def test_huge_hostile_text_is_bounded(text: str) -> None:
    t0 = time.monotonic()
    got = scan_text_calls(text, CATALOG)
    assert time.monotonic() - t0 < 5.0
    assert not got.calls


def test_a_call_past_the_scan_window_is_not_read() -> None:
    text = " " * MAX_SCAN_CHARS + '\n{"name": "list_files", "arguments": {}}'
    assert not scan_text_calls(text, CATALOG).calls


@pytest.mark.parametrize("opener", ["[", '{"a": '])
def test_nesting_past_the_parsers_depth_is_no_call_and_no_crash(opener: str) -> None:
    """json.loads raises RecursionError, not ValueError, past about 1,000 levels."""
    text = '{"name": "write_file", "arguments": ' + opener * 5000
    assert loads_near_json(opener * 5000) is None
    got = scan_text_calls(text, CATALOG)
    assert got.shaped and not got.calls
