"""The answer extraction and error list of `--output-schema` (in process: pure functions)."""

from __future__ import annotations

import pytest

from vtcode.loop.structured import answer_json, schema_errors
from vtcode.messages import OutputSchema


@pytest.mark.parametrize(
    ("text", "json_text"),
    [
        (' {"a": 1}\n', '{"a": 1}'),
        ('Here it is:\n```json\n{"a": 1}\n```', '{"a": 1}'),
        ('Done. {"a": [1, {"b": 2}]}', '{"a": [1, {"b": 2}]}'),
        ("[1, 2]", "[1, 2]"),
        ("42", "42"),
        ("no JSON here", None),
        ('{"a": 1} and more prose', None),
    ],
)
def test_the_answer_json(text: str, json_text: str | None) -> None:
    found = answer_json(text)
    assert (found[0] if found else None) == json_text


def test_errors_are_capped_in_number_and_size_and_sorted_by_path() -> None:
    schema = OutputSchema(
        name="n",
        schema={"type": "array", "items": {"type": "integer"}},
    )
    _, errors = schema_errors(schema, "[" + ", ".join(['"x"'] * 20) + "]")
    assert len(errors) == 9 and errors[-1] == "... and 12 more"
    assert errors[0] == "at /0: 'x' is not of type 'integer'"
    _, (big,) = schema_errors(
        OutputSchema(name="n", schema={"type": "array"}), '"' + "y" * 10**6 + '"'
    )
    assert len(big) <= 301 and big.endswith("…")


def test_mixed_paths_and_deep_answers_do_not_raise() -> None:
    schema = OutputSchema(
        name="n",
        schema={
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"type": "string"}}},
            "required": ["b"],
        },
    )
    _, errors = schema_errors(schema, '{"a": [1]}')
    assert sorted(errors) == sorted(
        ["at /a/0: 1 is not of type 'string'", "'b' is a required property"]
    )
    deep = "[" * 50_000 + "]" * 50_000
    assert schema_errors(schema, deep)[1] == ["the answer is not a JSON value"]
