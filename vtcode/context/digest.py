"""One linear pass over a history that collects what the local summary and the envelope need.

Everything is derived from the messages alone (deterministic, offline): the objective (first user
message), constraints stated by the user, files the tools touched, the last action and its result,
tool usage counts, recent failures, open questions. Only cheap per-message work happens here, so a
100k-message history digests in a few tens of milliseconds.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import orjson

from vtcode.messages import Message

__all__ = ["HistoryDigest", "describe_result", "digest_history", "one_line"]

FILE_TOOLS = frozenset({"write_file", "apply_patch", "edit_file", "create_file", "delete_file"})
_PATH_KEYS = ("path", "file_path", "target", "destination")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
_CONSTRAINT = re.compile(
    r"\b(?:must|never|don't|do not|always|only|avoid|without|keep|prefer|should not)\b",
    re.IGNORECASE,
)
_FAILURE = re.compile(
    r"^(?:blocked by|permission denied|unknown tool|invalid arguments|invalid JSON|error|"
    r"cancelled|not run|tool call limit|per-turn tool)",
    re.IGNORECASE,
)
_EXIT_CODE = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
LIST_KEEP = 5


def one_line(text: str, limit: int) -> str:
    """Whitespace-collapsed, cut to `limit` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: max(0, limit - 1)] + "…"


@dataclass(slots=True)
class ToolEvent:
    """A tool call and (when present) its result, in history order."""

    name: str
    arguments: str
    result: str | None
    failed: bool


@dataclass(slots=True)
class HistoryDigest:
    message_count: int = 0
    objective: str | None = None
    user_requests: list[str] = field(default_factory=list)  # newest last, capped
    constraints: list[str] = field(default_factory=list)
    touched_files: list[str] = field(default_factory=list)
    tool_counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    recent_tools: list[ToolEvent] = field(default_factory=list)  # newest last, capped
    last_assistant_text: str | None = None
    assistant_notes: list[str] = field(default_factory=list)  # newest last, capped
    open_questions: list[str] = field(default_factory=list)
    previous_summary: str | None = None


def describe_result(result: str, limit: int) -> str:
    """A one-line view of a tool result; exec tools' JSON answers become `exit N: output`."""
    head = result.lstrip()[:1]
    if head == "{" and len(result) < 1_000_000:
        try:
            data = orjson.loads(result)
        except orjson.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("output"), str):
            if data.get("is_exited") is False:
                state = "still running"
            elif "exit_code" in data:
                state = f"exit {data['exit_code']}"
            else:
                state = "done"
            return one_line(f"{state}: {data['output']}", limit)
    return one_line(result, limit)


def _looks_failed(result: str) -> bool:
    head = result[:200].lstrip()
    if _FAILURE.match(head):
        return True
    m = _EXIT_CODE.search(result[:400])
    return m is not None and m.group(1) != "0"


def _paths_of(name: str, arguments: str) -> list[str]:
    if name not in FILE_TOOLS or not arguments:
        return []
    if name == "apply_patch":
        return [p.strip() for p in _PATCH_FILE.findall(arguments)]
    try:
        data = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return []
    if not isinstance(data, dict):
        return []
    return [str(data[k]) for k in _PATH_KEYS if isinstance(data.get(k), str)]


def _push(items: list[str], value: str, keep: int = LIST_KEEP) -> None:
    """Append, dropping an earlier equal value (latest wins), keeping the newest `keep`."""
    if value in items:
        items.remove(value)
    items.append(value)
    if len(items) > keep:
        del items[0]


def digest_history(history: list[Message]) -> HistoryDigest:
    d = HistoryDigest(message_count=len(history))
    calls: dict[str, ToolEvent] = {}
    for m in history:
        role = m.role
        if role == "user":
            text = m.content.strip()
            if not text:
                continue
            if d.objective is None:
                d.objective = one_line(text, 600)
            _push(d.user_requests, one_line(text, 300), 3)
            if len(text) <= 4000:
                for line in text.splitlines():
                    if _CONSTRAINT.search(line):
                        _push(d.constraints, one_line(line.strip(" -*"), 200))
        elif role == "assistant":
            text = m.content.strip()
            if text:
                d.last_assistant_text = text
                _push(d.assistant_notes, one_line(text, 240), 3)
            for c in m.tool_calls:
                d.tool_counts[c.name] += 1
                ev = ToolEvent(c.name, c.arguments, None, False)
                calls[c.id] = ev
                d.recent_tools.append(ev)
                if len(d.recent_tools) > LIST_KEEP:
                    del d.recent_tools[0]
                for p in _paths_of(c.name, c.arguments):
                    _push(d.touched_files, p)
        elif role == "tool":
            answered = calls.pop(m.tool_call_id or "", None)
            failed = _looks_failed(m.content)
            if answered is not None:
                answered.result = m.content
                answered.failed = failed
            if failed:
                who = answered.name if answered is not None else (m.name or "tool")
                _push(d.failures, f"{who}: {one_line(m.content, 200)}", 3)
        elif role == "system" and m.content.startswith("Previous conversation summary:"):
            d.previous_summary = m.content.split("\n", 1)[1] if "\n" in m.content else ""
    if d.last_assistant_text:
        for sentence in re.split(r"(?<=[.?!])\s+", d.last_assistant_text[-2000:]):
            if sentence.endswith("?"):
                _push(d.open_questions, one_line(sentence, 200))
    return d
