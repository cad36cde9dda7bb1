"""The official SDKs as judges of what vtcode sends (issue 16.5): a request body must validate
against the SDK's own parameter TypedDict, strictly (no coerced types, no unknown top-level
keys; pydantic itself ignores a TypedDict's extra keys).

`judge_requests` dispatches on the path a test server saw, so one autouse fixture per provider
test module checks every body any of its tests produced.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from pydantic import TypeAdapter

__all__ = ["judge_anthropic", "judge_openai", "judge_requests"]

_OPENAI = TypeAdapter(CompletionCreateParamsStreaming)
_ANTHROPIC = TypeAdapter(MessageCreateParamsStreaming)


def _known_keys(body: Any, params: Any) -> None:
    """pydantic ignores a TypedDict's unknown keys, so the top level is checked by name."""
    known = params.__required_keys__ | params.__optional_keys__
    unknown = sorted(set(body) - known) if isinstance(body, dict) else []
    assert not unknown, f"not a {params.__name__} key: {unknown}"


def judge_openai(body: Any) -> None:
    _known_keys(body, CompletionCreateParamsStreaming)
    _OPENAI.validate_python(body, strict=True)


def judge_anthropic(body: Any) -> None:
    _known_keys(body, MessageCreateParamsStreaming)
    _ANTHROPIC.validate_python(body, strict=True)


def judge_requests(seen: Iterable[tuple[str, Any]]) -> int:
    """Judge each (path, JSON body); returns how many were judged."""
    n = 0
    for path, body in seen:
        if path.endswith("/chat/completions"):
            judge_openai(body)
        elif path.endswith("/v1/messages"):
            judge_anthropic(body)
        else:
            continue
        n += 1
    return n
