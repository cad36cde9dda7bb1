"""The conversation as providers see it: messages, tool calls, tool specs, stream events.

One definition serves the loop, every provider, the tools (their `ToolSpec`) and compaction.
It is part of the core layer (docs/architecture.md), not of `vtcode.providers`: tools, MCP,
context and the store's transcript all speak it without depending on a model backend.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from vtcode.events.types import Usage

Role = Literal["system", "user", "assistant", "tool"]

# `Message.name` of the decision ledger a request carries after its history (a harness note, not
# part of the conversation: `vtcode.context.ledger`); the replay provider's expectations skip it.
LEDGER_NAME = "decision_ledger"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A tool call the model asked for; `arguments` is the raw JSON text the model produced."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> Any:
        """The arguments as JSON (raises ValueError when the model produced invalid JSON)."""
        import orjson

        return orjson.loads(self.arguments) if self.arguments.strip() else {}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningBlock:
    """One opaque, provider-signed piece of reasoning that must go back verbatim on later requests.

    Anthropic requires the thinking blocks of a tool-use turn (with their `signature`, or a
    `redacted_thinking` block's encrypted `data`) in the next request; the Responses API keeps
    reasoning across stateless turns as items (`id`, `summary`, `encrypted_content`). One shape
    serves both, so the loop and the transcript carry them without knowing the wire format:
    `kind` says which, and a provider sends back only the kinds it produced.
    """

    kind: Literal["thinking", "redacted_thinking", "reasoning_item"]
    text: str = ""  # thinking text (Anthropic thinking)
    signature: str | None = None  # Anthropic thinking signature
    data: str | None = None  # redacted_thinking data, or a reasoning item's encrypted_content
    id: str | None = None  # Responses reasoning item id
    summary: tuple[str, ...] = ()  # Responses reasoning summary texts


@dataclass(frozen=True, slots=True, kw_only=True)
class Image:
    """An image the user attached to a message (`exec -i FILE`): its bytes and media type.

    The type comes from the bytes' magic numbers (`vtcode.images.sniff`), never from a file
    name; each provider writes it in its own wire format (a data URL, an `input_image`, a base64
    `image` block). The session keeps the bytes as `images/<sha256>.<ext>` beside its transcript,
    so a resumed conversation sends the same image again.
    """

    media_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: bytes = field(repr=False)

    @property
    def sha256(self) -> str:
        import hashlib

        return hashlib.sha256(self.data).hexdigest()

    @property
    def extension(self) -> str:
        return {"image/jpeg": "jpg"}.get(self.media_type, self.media_type.split("/", 1)[1])

    def base64(self) -> str:
        import base64

        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message of the history. `intent_id` tags user messages that came from steering."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[Image, ...] = ()  # attached by the user (user messages only)
    intent_id: str | None = None
    reasoning: str | None = None
    # Anthropic signs its thinking; sending it back (with `reasoning`) keeps extended thinking
    # valid across tool calls. Copy it from `ResponseCompleted.reasoning_signature`.
    reasoning_signature: str | None = None
    # The response's signed/encrypted reasoning in order, sent back verbatim (see ReasoningBlock).
    reasoning_blocks: tuple[ReasoningBlock, ...] = ()

    def with_content(self, content: str) -> Message:
        return dataclasses.replace(self, content=content)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool as offered to the model: name, description and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputSchema:
    """The JSON Schema (2020-12) a run's final answer must satisfy (`exec --output-schema`).

    Providers with native structured output send it (OpenAI chat `response_format`, Responses
    `text.format`, Anthropic a tool the model must use); the loop validates the answer anyway,
    since a provider's enforcement is partial (non-strict schemas, local servers that ignore it).
    """

    name: str  # `^[A-Za-z0-9_-]{1,64}$`: the name every provider accepts for it
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """Everything a provider needs for one model response."""

    model: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    reasoning_effort: str | None = None
    max_output_tokens: int | None = None
    purpose: Literal["turn", "summary"] = "turn"
    output_schema: OutputSchema | None = None  # the final answer's shape, when one is asked for
    temperature: float | None = None  # None: the server's default (set by the compact lead-in)


# Stream events: what a provider yields while a response streams in.


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of tool call `index`; `id` and `name` arrive with the first piece."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class ResponseCompleted:
    """The end of one response. `stop_reason` uses upstream's names (end_turn, tool_calls, ...)."""

    stop_reason: str
    usage: Usage
    reasoning_signature: str | None = None  # provider's signature of the reasoning (Anthropic)
    reasoning_blocks: tuple[ReasoningBlock, ...] = ()  # copy to the assistant Message


StreamEvent = TextDelta | ReasoningDelta | ToolCallDelta | ResponseCompleted
