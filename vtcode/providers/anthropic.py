"""Anthropic Messages API, streamed (`POST {base}/v1/messages`, `anthropic-version: 2023-06-01`).

Request mapping: system messages join into the top-level `system`; tool results become
`tool_result` blocks at the start of a user message; consecutive same-role messages merge into
one (the API wants alternation and tool results right after their `tool_use`). Reasoning effort
enables extended thinking with a budget: low 2,048, medium 8,192, high 24,576 tokens, and
`max_tokens` = that budget + the output allowance (the budget counts against `max_tokens`).
Usage follows upstream's TOTAL-prompt convention: input = input + cache_read + cache_creation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import orjson

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
from vtcode.providers.base import FailureKind, ProviderError
from vtcode.providers.collect import MAX_COLLECTED_CALLS
from vtcode.providers.http import json_or_error
from vtcode.providers.http_provider import DEFAULT_MAX_OUTPUT_TOKENS, HTTPProvider
from vtcode.providers.sse import SSEEvent

__all__ = [
    "ANSWER_TOOL",
    "ANTHROPIC_VERSION",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_TOKENS",
    "STOP_REASONS",
    "THINKING_BUDGETS",
    "AnthropicProvider",
]

DEFAULT_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = DEFAULT_MAX_OUTPUT_TOKENS  # the shared default cap (http_provider.py)
# The tool whose input is a structured-output run's final answer (Claude Code's way too).
ANSWER_TOOL = "structured_output"
THINKING_BUDGETS = {"low": 2048, "medium": 8192, "high": 24576}
STOP_REASONS = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
}


def _tool_input(arguments: str) -> dict[str, Any]:
    """`tool_use.input` must be an object; invalid model JSON is kept visible, not dropped."""
    if not arguments.strip():
        return {}
    try:
        value = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return {"_invalid_json": arguments}
    return value if isinstance(value, dict) else {"_value": value}


def _blocks(m: Message, thinking: bool) -> list[dict[str, Any]]:
    if m.role == "tool":
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id or ""}
        if m.content:
            block["content"] = m.content
        return [block]
    out: list[dict[str, Any]] = []
    if m.role == "assistant" and m.reasoning_blocks:
        # Verbatim and in order, signatures included: the API checks them on a tool-use turn.
        out.extend(_thinking_block(b) for b in m.reasoning_blocks if b.kind != "reasoning_item")
    elif m.role == "assistant" and thinking and m.reasoning and m.reasoning_signature:
        out.append(
            {"type": "thinking", "thinking": m.reasoning, "signature": m.reasoning_signature}
        )
    if m.role == "user":  # images before the text, as Anthropic's vision guide advises
        out.extend(
            {
                "type": "image",
                "source": {"type": "base64", "media_type": i.media_type, "data": i.base64()},
            }
            for i in m.images
        )
    if m.content:
        out.append({"type": "text", "text": m.content})
    if m.role == "assistant":
        out.extend(
            {"type": "tool_use", "id": c.id, "name": c.name, "input": _tool_input(c.arguments)}
            for c in m.tool_calls
        )
    return out


def _thinking_block(b: ReasoningBlock) -> dict[str, Any]:
    if b.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": b.data or ""}
    return {"type": "thinking", "thinking": b.text, "signature": b.signature or ""}


def convert_messages(
    messages: tuple[Message, ...], *, thinking: bool = False
) -> tuple[str, list[dict[str, Any]]]:
    """(system text, API messages) for a history."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks = _blocks(m, thinking)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            prev = out[-1]["content"]
            if role == "user" and blocks[0]["type"] == "tool_result":
                # tool_result blocks must come first in their user message
                results = [b for b in prev if b["type"] == "tool_result"]
                others = [b for b in prev if b["type"] != "tool_result"]
                out[-1]["content"] = results + blocks + others
            else:
                prev.extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return system, out


class AnthropicProvider(HTTPProvider):
    """A `Provider` for the streaming Messages API."""

    name = "anthropic"
    PATH = "/v1/messages"
    BASE_ENV = "ANTHROPIC_BASE_URL"
    KEY_ENV = "ANTHROPIC_API_KEY"
    DEFAULT_BASE = DEFAULT_BASE_URL

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def body(self, request: ModelRequest) -> dict[str, Any]:
        """The exact JSON body sent for `request`."""
        budget = None
        if request.reasoning_effort:
            budget = THINKING_BUDGETS.get(request.reasoning_effort)
            if budget is None:
                known = ", ".join(THINKING_BUDGETS)
                raise ProviderError(
                    f"unknown reasoning effort {request.reasoning_effort!r} (known: {known})",
                    kind=FailureKind.FATAL,
                    provider=self.name,
                )
        system, messages = convert_messages(request.messages, thinking=budget is not None)
        allowance = request.max_output_tokens or self.max_output_tokens
        body: dict[str, Any] = {
            "model": request.model or self.model,
            "max_tokens": allowance + (budget or 0),
            "messages": messages,
            "stream": True,
        }
        if system:
            body["system"] = system
        if request.temperature is not None and budget is None:  # thinking requires the default
            body["temperature"] = request.temperature
        if request.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in request.tools
            ]
        answer_tool = _answer_tool(request)
        if answer_tool is not None:
            body.setdefault("tools", []).append(answer_tool)
            # `any`: every reply is a tool call, so the final answer must come through the
            # answer tool; the API refuses a forced choice with extended thinking on.
            body["tool_choice"] = {"type": "auto" if budget is not None else "any"}
        if budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        return body

    def _decode(self, events: Iterator[SSEEvent]) -> Iterator[StreamEvent]:
        counts: dict[str, int] = {}
        tools: dict[int, int] = {}  # content block index -> tool call ordinal (the first
        # MAX_COLLECTED_CALLS; later ones are numbered and announced, never stored)
        numbered = skipped = 0
        tool_has_json: set[int] = set()
        answers: set[int] = set()  # blocks of the structured-output answer tool (text to us)
        answer_json: set[int] = set()
        stop: str | None = None
        signature: str | None = None
        # thinking/redacted_thinking blocks by content index, kept in stream order
        kept: dict[int, ReasoningBlock] = {}
        done = False
        for event in events:
            data = json_or_error(self.name, event)
            if not isinstance(data, dict):
                raise self._protocol(f"expected a JSON object, got {type(data).__name__}")
            kind = data.get("type") or event.event
            if kind == "ping":
                continue
            if kind == "error":
                raise self._http.stream_error(data)
            if kind == "message_start":
                message = data.get("message")
                if isinstance(message, dict):
                    _merge_usage(counts, message.get("usage"))
            elif kind == "content_block_start":
                index, block = data.get("index"), data.get("content_block")
                if not isinstance(index, int) or not isinstance(block, dict):
                    raise self._protocol("content_block_start without index or content_block")
                btype = block.get("type")
                if btype == "tool_use" and block.get("name") == ANSWER_TOOL:
                    # The final answer of a structured-output run: its input is the answer.
                    answers.add(index)
                    if block.get("input"):
                        answer_json.add(index)
                        yield TextDelta(orjson.dumps(block["input"]).decode())
                elif btype == "tool_use":
                    ordinal, numbered = numbered, numbered + 1
                    yield ToolCallDelta(
                        ordinal, id=block.get("id") or None, name=block.get("name") or None
                    )
                    if ordinal >= MAX_COLLECTED_CALLS:
                        skipped += 1
                        continue
                    tools[index] = ordinal
                    if block.get("input"):
                        tool_has_json.add(index)
                        yield ToolCallDelta(
                            ordinal, arguments=orjson.dumps(block["input"]).decode()
                        )
                elif btype == "text" and block.get("text"):
                    yield TextDelta(str(block["text"]))
                elif btype == "thinking":
                    kept[index] = ReasoningBlock(
                        kind="thinking",
                        text=str(block.get("thinking") or ""),
                        signature=_str_or_none(block.get("signature")),
                    )
                    if block.get("thinking"):
                        yield ReasoningDelta(str(block["thinking"]))
                elif btype == "redacted_thinking":
                    kept[index] = ReasoningBlock(
                        kind="redacted_thinking", data=_str_or_none(block.get("data"))
                    )
            elif kind == "content_block_delta":
                index, delta = data.get("index"), data.get("delta")
                if not isinstance(delta, dict):
                    raise self._protocol("content_block_delta without a delta object")
                dtype = delta.get("type")
                if dtype == "text_delta" and delta.get("text"):
                    yield TextDelta(str(delta["text"]))
                elif dtype == "thinking_delta" and delta.get("thinking"):
                    piece = str(delta["thinking"])
                    if isinstance(index, int) and index in kept:
                        b = kept[index]
                        kept[index] = dataclasses.replace(b, text=b.text + piece)
                    yield ReasoningDelta(piece)
                elif dtype == "signature_delta" and isinstance(delta.get("signature"), str):
                    signature = delta["signature"]
                    if isinstance(index, int) and index in kept:
                        kept[index] = dataclasses.replace(kept[index], signature=signature)
                elif dtype == "input_json_delta" and index in answers:
                    part = delta.get("partial_json")
                    if isinstance(part, str) and part:
                        answer_json.add(index)
                        yield TextDelta(part)
                elif dtype == "input_json_delta":
                    if skipped and isinstance(index, int) and index not in tools:
                        continue  # a call past the cap: its arguments are dropped
                    if not isinstance(index, int) or index not in tools:
                        raise self._protocol("input_json_delta for a block that is not tool_use")
                    part = delta.get("partial_json")
                    if isinstance(part, str) and part:
                        tool_has_json.add(index)
                        yield ToolCallDelta(tools[index], arguments=part)
            elif kind == "content_block_stop":
                index = data.get("index")
                if index in answers and index not in answer_json:
                    answer_json.add(index)
                    yield TextDelta("{}")
                if isinstance(index, int) and index in tools and index not in tool_has_json:
                    tool_has_json.add(index)
                    yield ToolCallDelta(tools[index], arguments="{}")
            elif kind == "message_delta":
                delta = data.get("delta")
                if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                    stop = delta["stop_reason"]
                _merge_usage(counts, data.get("usage"))
            elif kind == "message_stop":
                done = True
                break
            # unknown event types are ignored: the API documents that new ones may appear
        if not done:
            raise ProviderError(
                f"{self.name} stream ended before message_stop",
                kind=FailureKind.TRANSIENT,
                provider=self.name,
            )
        if stop == "tool_use" and answers and not numbered:
            stop = "end_turn"  # the answer tool was the only call: the reply is the answer
        mapped = STOP_REASONS.get(stop or "end_turn", stop or "end_turn")
        yield ResponseCompleted(
            mapped,
            _usage(counts),
            reasoning_signature=signature,
            reasoning_blocks=tuple(kept[i] for i in sorted(kept)),
        )

    def _protocol(self, what: str) -> ProviderError:
        return ProviderError(
            f"malformed stream from {self.name}: {what}", kind=FailureKind.FATAL, provider=self.name
        )


def _answer_tool(request: ModelRequest) -> dict[str, Any] | None:
    """Anthropic's structured output: a tool whose input is the final answer (its schema must
    be an object schema; any other shape is left to the loop's validation alone)."""
    schema = request.output_schema
    if schema is None or request.purpose != "turn" or schema.schema.get("type") != "object":
        return None
    return {
        "name": ANSWER_TOOL,
        "description": (
            "Give your final answer: call this once, when the task is done, with the answer as"
            " its input. Use the other tools for the work before that."
        ),
        "input_schema": schema.schema,
    }


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _merge_usage(counts: dict[str, int], raw: Any) -> None:
    """message_delta usage is cumulative: later values replace earlier ones, field by field."""
    if not isinstance(raw, dict):
        return
    for key, value in raw.items():
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            counts[key] = value


def _usage(counts: dict[str, int]) -> Usage:
    read = counts.get("cache_read_input_tokens", 0)
    write = counts.get("cache_creation_input_tokens", 0)
    return Usage(
        input_tokens=counts.get("input_tokens", 0) + read + write,
        cached_input_tokens=read,
        cache_creation_tokens=write,
        output_tokens=counts.get("output_tokens", 0),
    )
