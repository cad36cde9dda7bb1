"""Structured final output (`exec --output-schema FILE`, `agent.output_schema`).

The schema is loaded and checked against the JSON Schema 2020-12 meta-schema before anything
runs (a bad file is exit 2, no session). The provider gets it as its native structured output
where it has one; whatever the provider did, the loop validates the final answer with
`jsonschema`: an answer that is not JSON or does not match gets the validation errors back as a
user message and another turn, up to `agent.output_schema_retries` times, then the run ends
`error_during_execution` / `output_schema_invalid` (exit 1) with the last answer in the log.
Only the final answer is checked: messages beside tool calls are not constrained.
"""

from __future__ import annotations

import errno
import itertools
import json
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vtcode.errors import UsageError
from vtcode.events.enums import HarnessEventKind
from vtcode.loop.outcomes import Outcome, OutcomeKind
from vtcode.loop.text_turn import end_or_nudge
from vtcode.messages import Message, OutputSchema

if TYPE_CHECKING:
    from vtcode.loop.runner import Runner

__all__ = [
    "OUTPUT_SCHEMA",
    "answer_json",
    "check_final_answer",
    "ends_or_retries",
    "load_output_schema",
    "schema_errors",
]

OUTPUT_SCHEMA = "output_schema"  # the harness items' error_category
MAX_SCHEMA_BYTES = 1 << 20
_MAX_ERRORS = 8
_MAX_MESSAGE = 300  # jsonschema quotes the failing value whole: a big answer is not sent back
_MAX_STARTS = 64  # JSON after prose: the first this many `{`/`[` are tried as its start
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")
# The block starts after the last newline of the blanks that follow the info string. Atomic,
# as a retry from an earlier newline cannot find a closing ``` the first try missed (only
# blanks lie between) but made a fence that never closes quadratic.
_FENCE = re.compile(r"```[A-Za-z0-9_-]*(?>\s*\n)(.*?)\n?```", re.DOTALL)


def load_output_schema(path: Path, *, option: str) -> OutputSchema:
    """The schema in `path` (a regular file, UTF-8 JSON, a valid 2020-12 schema); anything
    else is a `UsageError` naming `option` and the place, raised before the run starts."""
    where = f"{option} {path}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        why = "a FIFO with no writer" if e.errno == errno.ENXIO else (e.strerror or str(e))
        raise UsageError(f"cannot read the output schema: {why}", location=where) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError("the output schema is not a regular file", location=where)
        if st.st_size > MAX_SCHEMA_BYTES:
            raise UsageError(
                f"the output schema is {st.st_size:,} bytes, more than {MAX_SCHEMA_BYTES:,}",
                location=where,
            )
        os.set_blocking(fd, True)
        data = os.read(fd, MAX_SCHEMA_BYTES + 1)[:MAX_SCHEMA_BYTES]
    except OSError as e:
        raise UsageError(
            f"cannot read the output schema: {e.strerror or e}", location=where
        ) from None
    finally:
        os.close(fd)
    try:
        schema = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise UsageError("the output schema is not UTF-8 text", location=where) from None
    except RecursionError:
        raise UsageError("the output schema is nested too deeply", location=where) from None
    except json.JSONDecodeError as e:
        raise UsageError(
            f"the output schema is not JSON: {e.msg}", location=f"{where}:{e.lineno}:{e.colno}"
        ) from None
    if not isinstance(schema, dict | bool):
        raise UsageError("the output schema must be a JSON object", location=where)
    from jsonschema import Draft202012Validator  # here: a run without a schema never loads it
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except RecursionError:
        raise UsageError("the output schema is nested too deeply", location=where) from None
    except SchemaError as e:
        at = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise UsageError(
            f"the output schema is not a valid JSON Schema (2020-12) at {at}: {e.message}",
            location=where,
        ) from None
    if isinstance(schema, bool):
        raise UsageError("the output schema must be a JSON object", location=where)
    _check_refs(schema, where)
    return OutputSchema(name=_schema_name(schema), schema=schema)


def _check_refs(schema: dict[str, Any], where: str) -> None:
    """Every `$ref` must point inside the file and resolve: vtcode fetches no schema from
    elsewhere, and a reference that cannot be resolved would fail only when an answer
    reaches it, mid-run."""
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012

    base = "urn:vtcode:output-schema"
    resolver = Registry().with_resource(base, DRAFT202012.create_resource(schema)).resolver(base)
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
            ref = node.get("$ref")
            if not isinstance(ref, str):
                continue
            if not ref.startswith("#"):
                raise UsageError(
                    f"the output schema refers to {ref!r}: only references inside the file"
                    " (#...) are supported",
                    location=where,
                )
            try:
                resolver.lookup(ref)
            except Unresolvable:
                raise UsageError(
                    f"the output schema's reference {ref!r} does not resolve", location=where
                ) from None


def _schema_name(schema: dict[str, Any]) -> str:
    title = schema.get("title")
    name = _NAME_CHARS.sub("_", title).strip("_")[:64] if isinstance(title, str) else ""
    return name or "final_answer"


def answer_json(text: str) -> tuple[str, Any] | None:
    """(JSON text, value) of the answer: the whole text, else its last fenced block, else a
    JSON value that ends the text after some prose ("Here it is: {...}"); None when none is."""
    stripped = text.strip()
    starts = (i for i, c in enumerate(stripped) if c in "{[" and i > 0)
    candidates = itertools.chain(
        (stripped,),
        reversed(_FENCE.findall(stripped)),
        (stripped[i:] for i in itertools.islice(starts, _MAX_STARTS)),
    )
    decoder = json.JSONDecoder()
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            value, end = decoder.raw_decode(candidate)
        except (json.JSONDecodeError, RecursionError):
            continue
        if end == len(candidate):
            return candidate, value
    return None


def schema_errors(schema: OutputSchema, text: str) -> tuple[str | None, list[str]]:
    """(the answer's JSON text, what is wrong with it): no errors when it validates."""
    found = answer_json(text)
    if found is None:
        return None, ["the answer is not a JSON value"]
    json_text, value = found
    from jsonschema import Draft202012Validator
    from referencing.exceptions import Unresolvable

    validator = Draft202012Validator(schema.schema)
    try:
        errors = sorted(validator.iter_errors(value), key=lambda e: str(list(e.absolute_path)))
    except RecursionError:
        return json_text, ["the answer is nested too deeply to check"]
    except Unresolvable as bad:  # a reference the load-time check could not see (nested $id)
        return json_text, [f"the schema cannot be applied: {bad}"]
    lines = []
    for e in errors[:_MAX_ERRORS]:
        at = "/".join(str(p) for p in e.absolute_path)
        message = e.message if len(e.message) <= _MAX_MESSAGE else e.message[:_MAX_MESSAGE] + "…"
        lines.append(f"at /{at}: {message}" if at else message)
    if len(errors) > _MAX_ERRORS:
        lines.append(f"... and {len(errors) - _MAX_ERRORS} more")
    return json_text, lines


def ends_or_retries(self: Runner, content: str) -> bool:
    """For a reply with no tool calls: True when this ended the run or asked the model again.
    Under an output schema the answer is checked against the schema alone (a valid JSON answer
    is never taken for a tool call written as text); else the text-turn rules apply."""
    if self.output_schema is None:
        return end_or_nudge(self, content)
    return check_final_answer(self, content)


def check_final_answer(self: Runner, content: str) -> bool:
    """For a final answer under an output schema: True when this ended the run or asked the
    model again (the machine has been fired), False when the answer stands. A valid answer's
    JSON text becomes `final_text` (thread.completed.result and `-o`)."""
    schema = self.output_schema
    if schema is None:
        return False
    json_text, errors = schema_errors(schema, content)
    if not errors:
        assert json_text is not None
        self.final_text = json_text
        return False
    listed = "; ".join(errors)
    if self.schema_retries_used >= self.limits.output_schema_retries or (
        self.limit_outcome() is not None
    ):
        ending = Outcome(
            OutcomeKind.OUTPUT_SCHEMA_INVALID, detail=listed, limit=self.schema_retries_used
        )
        if self.chat is not None:
            self.recorder.warning(ending.description())
            self.chat.block(ending)
        self.machine.responded(
            facts=self.facts(user_turn_over=self.chat is not None), ending=ending
        )
        return True
    self.schema_retries_used += 1
    text = (
        "Your final answer does not match the required JSON Schema: "
        f"{listed}. Reply again with only a JSON value that matches the schema "
        f"(retry {self.schema_retries_used} of {self.limits.output_schema_retries})."
    )
    self.recorder.harness(
        HarnessEventKind.CONTINUATION_STARTED, message=text, error_category=OUTPUT_SCHEMA
    )
    self.append(Message(role="user", content=text))
    self.machine.followed_up(
        facts=self.facts(compaction_due=self.hooks.compaction_due(in_tool_loop=False)),
    )
    return True
