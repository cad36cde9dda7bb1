"""The OpenAI Responses API, streamed (`POST {base}/responses`, `stream: true`, `store: false`).

Stateless on purpose: vtcode owns the transcript (durable, resumable), so nothing is stored
server-side and each request carries the whole history as input items. A reasoning model's
reasoning then survives a turn only as an encrypted item, so every request asks for
`include: ["reasoning.encrypted_content"]` and every earlier assistant message's reasoning items
(`ReasoningBlock(kind="reasoning_item")`: id, summary, encrypted_content) go back verbatim and
in order before its function calls. An item without encrypted content is not sent: with
`store: false` the server cannot find it by id and rejects the request. OpenAI rejects `include`
for models that do not reason (gpt-4o: "Encrypted content is not supported with this model"):
use the `openai` (Chat Completions) kind for those.

Request mapping: system messages join into `instructions`; user and assistant text are easy
input messages; an assistant's tool calls are `function_call` items and tool results
`function_call_output` items, linked by `call_id`; `--effort` is `reasoning.effort` with
`summary: "auto"` (the summary is what streams as reasoning text); the output cap is
`max_output_tokens`, which counts reasoning tokens too, so an effort adds the same reasoning
budget as the Chat Completions provider does.
Stream: `response.output_text.delta` (text), `response.reasoning_summary_text.delta`
(reasoning), `response.output_item.added` / `.done` (function_call with call_id and name;
reasoning items kept), `response.function_call_arguments.delta` (arguments by output_index,
or by item id when the server sends no output_index, as llama.cpp's server does),
`response.completed` / `response.incomplete` (usage, stop reason), `response.failed` and `error`
(a classified `ProviderError`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from vtcode.events.types import Usage
from vtcode.messages import (
    Message,
    ModelRequest,
    ReasoningBlock,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
)
from vtcode.providers.anthropic import THINKING_BUDGETS
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.collect import MAX_COLLECTED_CALLS
from vtcode.providers.http import classify_error, json_or_error
from vtcode.providers.http_provider import HTTPProvider
from vtcode.providers.openai import DEFAULT_BASE_URL, takes_temperature
from vtcode.providers.pricing import context_window_for, pricing_for
from vtcode.providers.sse import SSEEvent

__all__ = ["INCOMPLETE_REASONS", "OpenAIResponsesProvider", "input_items"]

# incomplete_details.reason -> upstream's stop reasons
INCOMPLETE_REASONS = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}


def _reasoning_item(b: ReasoningBlock) -> dict[str, Any]:
    return {
        "type": "reasoning",
        "id": b.id or "",
        "summary": [{"type": "summary_text", "text": s} for s in b.summary],
        "encrypted_content": b.data,
    }


def _items(m: Message) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [
            {"type": "function_call_output", "call_id": m.tool_call_id or "", "output": m.content}
        ]
    if m.role == "user" and m.images:
        parts: list[dict[str, Any]] = [
            {"type": "input_image", "image_url": i.data_url(), "detail": "auto"} for i in m.images
        ]
        if m.content:
            parts.append({"type": "input_text", "text": m.content})
        return [{"role": "user", "content": parts}]
    if m.role == "user":
        return [{"role": "user", "content": m.content}]
    out: list[dict[str, Any]] = [
        _reasoning_item(b)
        for b in m.reasoning_blocks
        if b.kind == "reasoning_item" and b.id and b.data
    ]
    if m.content:
        out.append({"role": "assistant", "content": m.content})
    out.extend(
        {"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}
        for c in m.tool_calls
    )
    return out


def input_items(messages: tuple[Message, ...]) -> tuple[str, list[dict[str, Any]]]:
    """(instructions, input items) for a history."""
    instructions = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    items = [item for m in messages if m.role != "system" for item in _items(m)]
    return instructions, items


def _usage(raw: Any) -> Usage:
    if not isinstance(raw, dict):
        return Usage()

    def n(v: Any) -> int:
        return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0

    details = raw.get("input_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(
        input_tokens=n(raw.get("input_tokens")),
        cached_input_tokens=n(cached),
        output_tokens=n(raw.get("output_tokens")),
    )


def _summary(item: dict[str, Any]) -> tuple[str, ...]:
    parts = item.get("summary")
    if not isinstance(parts, list):
        return ()
    return tuple(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


class OpenAIResponsesProvider(HTTPProvider):
    """A `Provider` for the streaming Responses API (stateless: `store: false`)."""

    name = "openai-responses"
    PATH = "/responses"
    BASE_ENV = "OPENAI_BASE_URL"
    KEY_ENV = "OPENAI_API_KEY"
    DEFAULT_BASE = DEFAULT_BASE_URL

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        # The same models as Chat Completions: their prices and windows come from OpenAI's table.
        self._pricing = self._pricing or pricing_for("openai", self.model)
        self._context_window = self._context_window or context_window_for("openai", self.model)

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"authorization": f"Bearer {api_key}"} if api_key else {}

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent for `request`."""
        instructions, items = input_items(request.messages)
        cap = request.max_output_tokens or self.max_output_tokens
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "input": items,
            "stream": True,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        if instructions:
            body["instructions"] = instructions
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "strict": False,
                }
                for t in request.tools
            ]
        if request.output_schema is not None and request.purpose == "turn":
            # Not `strict`, as in the chat provider: the loop validates the answer anyway.
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": request.output_schema.name,
                    "schema": request.output_schema.schema,
                    "strict": False,
                }
            }
        if request.reasoning_effort:
            body["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
            cap += THINKING_BUDGETS.get(request.reasoning_effort, 0)
        elif request.temperature is not None and takes_temperature(str(body["model"])):
            body["temperature"] = request.temperature
        body["max_output_tokens"] = cap
        return body

    def _decode(self, events: Iterator[SSEEvent]) -> Iterator[StreamEvent]:
        calls = _Calls()  # output item -> tool call ordinal, the first MAX_COLLECTED_CALLS only
        has_args: set[int] = set()  # ordinals whose arguments arrived
        kept: dict[ItemKey, ReasoningBlock] = {}  # reasoning items, in arrival order
        for event in events:
            data = json_or_error(self.name, event)
            if not isinstance(data, dict):
                raise self._protocol(f"expected a JSON object, got {type(data).__name__}")
            kind = data.get("type") or event.event
            if kind == "response.output_text.delta" or kind == "response.refusal.delta":
                delta = data.get("delta")
                if isinstance(delta, str) and delta:
                    yield TextDelta(delta)
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                delta = data.get("delta")
                if isinstance(delta, str) and delta:
                    yield ReasoningDelta(delta)
            elif kind in ("response.output_item.added", "response.output_item.done"):
                item = data.get("item")
                key = _item_key(data.get("output_index"), item)
                if key is None or not isinstance(item, dict):
                    raise self._protocol(f"{kind} without output_index, item id or item")
                yield from self._item(kind.endswith(".added"), key, item, calls, has_args, kept)
            elif kind == "response.function_call_arguments.delta":
                key, delta = _delta_key(data), data.get("delta")
                if key is not None and key not in calls and calls.skipped:
                    continue  # a call past the cap: counted when added, its arguments dropped
                if key is None or key not in calls:
                    raise self._protocol("arguments for an output item that is not a function call")
                if isinstance(delta, str) and delta:
                    has_args.add(calls[key])
                    yield ToolCallDelta(calls[key], arguments=delta)
            elif kind == "response.function_call_arguments.done":
                key, args = _delta_key(data), data.get("arguments")
                if key is not None and key in calls and calls[key] not in has_args:
                    has_args.add(calls[key])
                    yield ToolCallDelta(calls[key], arguments=args if isinstance(args, str) else "")
            elif kind in ("response.completed", "response.incomplete"):
                response = data.get("response")
                if not isinstance(response, dict):
                    raise self._protocol(f"{kind} without a response object")
                yield ResponseCompleted(
                    self._stop(response, saw_calls=bool(calls.ordinals)),
                    _usage(response.get("usage")),
                    reasoning_blocks=_in_output_order(kept),
                )
                return
            elif kind == "response.failed":
                response = data.get("response")
                err = response.get("error") if isinstance(response, dict) else None
                raise self._failure(err if isinstance(err, dict) else {})
            elif kind == "error":
                raise self._failure(data)
            # other event types (created, in_progress, content_part, *.done) carry nothing new
        raise ProviderError(
            f"{self.name} stream ended before the response completed",
            kind=FailureKind.TRANSIENT,
            provider=self.name,
        )

    def _item(
        self,
        added: bool,
        key: ItemKey,
        item: dict[str, Any],
        calls: _Calls,
        has_args: set[int],
        kept: dict[ItemKey, ReasoningBlock],
    ) -> Iterator[StreamEvent]:
        itype = item.get("type")
        if itype == "function_call" and added:
            if key in calls:
                raise self._protocol(f"output item {key[1]!r} added twice")
            ordinal = calls.ordinals
            calls.ordinals += 1
            if ordinal >= MAX_COLLECTED_CALLS:  # counted (the loop reports it), never kept
                calls.skipped += 1
                call_id, name = _str(item.get("call_id")), _str(item.get("name"))
                yield ToolCallDelta(ordinal, id=call_id, name=name)
                return
            calls[key] = ordinal
            item_id = _str(item.get("id"))
            if key[0] == "index" and item_id is not None:
                calls.setdefault(("id", item_id), ordinal)  # arguments may name it by id
            args = _str(item.get("arguments"))
            if args:  # a server may send the whole call at once
                has_args.add(ordinal)
            yield ToolCallDelta(
                ordinal,
                id=_str(item.get("call_id")),
                name=_str(item.get("name")),
                arguments=args or "",
            )
        elif itype == "function_call" and key in calls and calls[key] not in has_args:
            args = item.get("arguments")
            has_args.add(calls[key])
            yield ToolCallDelta(calls[key], arguments=args if isinstance(args, str) else "{}")
        elif itype == "reasoning" and (not added or key not in kept):
            kept[key] = ReasoningBlock(
                kind="reasoning_item",
                id=_str(item.get("id")),
                summary=_summary(item),
                data=_str(item.get("encrypted_content")),
            )

    def _stop(self, response: dict[str, Any], *, saw_calls: bool) -> str:
        if response.get("status") == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            return INCOMPLETE_REASONS.get(str(reason), str(reason or "max_tokens"))
        return "tool_calls" if saw_calls else "end_turn"

    def _failure(self, err: dict[str, Any]) -> ProviderError:
        """`response.failed`'s error or an `error` event: {code, message}, classified."""
        code = err.get("code")
        message = err.get("message")
        return classify_error(
            provider=self.name,
            key_env=self._http.endpoint.key_env,
            model=self.model,
            status=None,
            err_type=str(code) if code is not None else None,
            message=message if isinstance(message, str) else None,
        )

    def _protocol(self, what: str) -> ProviderError:
        return ProviderError(
            f"malformed stream from {self.name}: {what}", kind=FailureKind.FATAL, provider=self.name
        )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# How an output item is known across events: its `output_index` when the server sends one
# (OpenAI does), else its `id` (llama.cpp's server sends no output_index, and item ids only).
ItemKey = tuple[str, int | str]


class _Calls(dict[ItemKey, int]):
    """Output item -> tool call ordinal, plus how many calls were numbered and how many were
    past `MAX_COLLECTED_CALLS` (numbered, announced, never stored: a response with 200,000
    calls keeps this bounded, and numbering is a counter, not a scan of the map)."""

    def __init__(self) -> None:
        super().__init__()
        self.ordinals = 0
        self.skipped = 0


def _item_key(index: Any, item: Any) -> ItemKey | None:
    if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
        return ("index", index)
    item_id = item.get("id") if isinstance(item, dict) else None
    return ("id", item_id) if isinstance(item_id, str) and item_id else None


def _delta_key(data: dict[str, Any]) -> ItemKey | None:
    """The item an arguments event belongs to: `output_index`, else `item_id`."""
    index, item_id = data.get("output_index"), data.get("item_id")
    if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
        return ("index", index)
    return ("id", item_id) if isinstance(item_id, str) and item_id else None


def _in_output_order(kept: dict[ItemKey, ReasoningBlock]) -> tuple[ReasoningBlock, ...]:
    """Reasoning items by output_index when every one had it, else in arrival order."""
    keys = list(kept)
    if all(k[0] == "index" for k in keys):
        keys.sort(key=lambda k: int(k[1]))
    return tuple(kept[k] for k in keys)
