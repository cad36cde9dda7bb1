"""Any OpenAI-compatible Chat Completions server (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
OpenRouter), streamed over SSE.

Request: `stream: true` with `stream_options.include_usage`, tools as `{"type": "function"}`,
`reasoning_effort` passed through when set, an output cap on every request:
`max_completion_tokens` for api.openai.com (the SDK marks `max_tokens` deprecated there and
reasoning models reject it) and `max_tokens` elsewhere (llama.cpp, Ollama and LM Studio read only
`max_tokens`; vLLM reads both). With an effort the cap adds the effort's reasoning budget (the
Anthropic budgets), since reasoning tokens count against `max_completion_tokens`.
Response: text deltas, reasoning deltas from `reasoning_content` (DeepSeek, vLLM) or `reasoning`
(OpenRouter, Ollama), tool-call deltas by index, usage from the final chunk, `finish_reason`
mapped to upstream's stop reasons (`length` -> `max_tokens`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from vtcode.events.types import Usage
from vtcode.messages import (
    Message,
    ModelRequest,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from vtcode.providers.anthropic import THINKING_BUDGETS
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.http import (
    json_or_error,
)
from vtcode.providers.http_provider import HTTPProvider
from vtcode.providers.sse import SSEEvent

__all__ = [
    "DEFAULT_BASE_URL",
    "FINISH_REASONS",
    "OpenAIProvider",
    "map_finish_reason",
    "takes_temperature",
]

# OpenAI's reasoning families refuse any temperature but the default (400 "Unsupported value").
_NO_TEMPERATURE = re.compile(r"^(?:[\w.-]+/)?(?:o\d|gpt-5)", re.IGNORECASE)


def takes_temperature(model: str) -> bool:
    """Whether a request for `model` may set a temperature: not OpenAI's reasoning models
    (o1, o3, o4-mini, gpt-5...), even with no reasoning effort asked (a compact run forced on
    one asks for 0.2)."""
    return _NO_TEMPERATURE.match(model) is None


DEFAULT_BASE_URL = "https://api.openai.com/v1"

FINISH_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


def map_finish_reason(finish: str | None, *, saw_tool_calls: bool) -> str:
    """Upstream's names; a server that says `stop` after tool calls (Ollama) means tool_calls."""
    if finish is None or finish == "stop":
        return "tool_calls" if saw_tool_calls else "end_turn"
    return FINISH_REASONS.get(finish, finish)


def _message(m: Message) -> dict[str, Any]:
    if m.role == "tool":
        return {"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content}
    out: dict[str, Any] = {"role": m.role}
    if m.role == "assistant" and m.tool_calls:
        out["content"] = m.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls
        ]
    elif m.role == "user" and m.images:
        # Images first, then the text (as Anthropic advises; the same order for every provider).
        parts: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": i.data_url()}} for i in m.images
        ]
        if m.content:
            parts.append({"type": "text", "text": m.content})
        out["content"] = parts
    else:
        out["content"] = m.content
    if m.name and m.role in ("user", "system", "assistant"):
        out["name"] = m.name
    return out


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None

    def n(v: Any) -> int:
        return v if isinstance(v, int) and v >= 0 else 0

    return Usage(
        input_tokens=n(raw.get("prompt_tokens")),
        cached_input_tokens=n(cached),
        output_tokens=n(raw.get("completion_tokens")),
    )


class OpenAIProvider(HTTPProvider):
    """A `Provider` for `POST {base}/chat/completions` with `stream: true`."""

    name = "openai"
    PATH = "/chat/completions"
    BASE_ENV = "OPENAI_BASE_URL"
    KEY_ENV = "OPENAI_API_KEY"
    DEFAULT_BASE = DEFAULT_BASE_URL

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._official = urlsplit(self.endpoint.base_url).hostname == "api.openai.com"

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent for `request`."""
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "messages": [_message(m) for m in request.messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in request.tools
            ]
        if request.output_schema is not None and request.purpose == "turn":
            # Not `strict`: strict mode refuses many valid schemas (optional properties,
            # open objects); the loop validates the answer whatever the server did.
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": request.output_schema.name,
                    "schema": request.output_schema.schema,
                    "strict": False,
                },
            }
        if request.reasoning_effort:
            body["reasoning_effort"] = request.reasoning_effort
        elif request.temperature is not None and takes_temperature(str(body["model"])):
            body["temperature"] = request.temperature
        cap = request.max_output_tokens or self.max_output_tokens
        if request.reasoning_effort:
            cap += THINKING_BUDGETS.get(request.reasoning_effort, 0)
        body["max_completion_tokens" if self._official else "max_tokens"] = cap
        return body

    def _decode(self, events: Iterator[SSEEvent]) -> Iterator[StreamEvent]:
        finish: str | None = None
        usage = Usage()
        saw_tools = False
        refusal = False
        done = False
        for event in events:
            if event.data.strip() == "[DONE]":
                done = True
                break
            chunk = json_or_error(self.name, event)
            if not isinstance(chunk, dict):
                raise self._protocol(f"expected a JSON object, got {type(chunk).__name__}")
            if "error" in chunk and not chunk.get("choices"):
                raise self._http.stream_error(chunk)
            if chunk.get("usage"):
                usage = _usage(chunk["usage"])
            choices = chunk.get("choices") or []
            if not isinstance(choices, list):
                raise self._protocol("`choices` is not an array")
            for choice in choices:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                if not isinstance(delta, dict):
                    raise self._protocol("`delta` is not an object")
                for key in ("reasoning_content", "reasoning"):
                    r = delta.get(key)
                    if isinstance(r, str) and r:
                        yield ReasoningDelta(r)
                        break
                content = delta.get("content")
                if isinstance(content, str) and content:
                    yield TextDelta(content)
                text = delta.get("refusal")
                if isinstance(text, str) and text:
                    refusal = True
                    yield TextDelta(text)
                for pos, call in enumerate(delta.get("tool_calls") or []):
                    if not isinstance(call, dict):
                        raise self._protocol("a tool call delta is not an object")
                    fn = call.get("function") or {}
                    index = call.get("index", pos)
                    if not isinstance(index, int) or not isinstance(fn, dict):
                        raise self._protocol("a tool call delta has a bad index or function")
                    saw_tools = True
                    args = fn.get("arguments")
                    yield ToolCallDelta(
                        index,
                        id=call.get("id") or None,
                        name=fn.get("name") or None,
                        arguments=args if isinstance(args, str) else "",
                    )
                reason = choice.get("finish_reason")
                if isinstance(reason, str) and reason:
                    finish = reason
        if not done and finish is None:
            raise ProviderError(
                f"{self.name} stream ended before the response completed",
                kind=FailureKind.TRANSIENT,
                provider=self.name,
            )
        stop = map_finish_reason(finish, saw_tool_calls=saw_tools)
        if refusal and stop == "end_turn":
            stop = "refusal"
        yield ResponseCompleted(stop, usage)

    def _protocol(self, what: str) -> ProviderError:
        return ProviderError(
            f"malformed stream from {self.name}: {what}", kind=FailureKind.FATAL, provider=self.name
        )
