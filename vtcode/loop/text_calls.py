"""Tool calls a model wrote into its text instead of the provider's tool-call fields.

Small local models (Qwen2.5-Coder 0.5B/1.5B on llama.cpp, issue 28) answer a tool request with
text: a bare or ```json-fenced `{"name": ..., "arguments": ...}` (or `"parameters"`, arguments
as a JSON string), Hermes/Qwen `<tool_call>{...}</tool_call>` blocks, several in one message,
often near-JSON. Taken as a final answer, that text made every run "succeed" with nothing done.

`scan_text_calls` reads such text against the tool catalog. It is one pure function, used by the
runner for every provider (the provider-independent place where a reply becomes tool calls):

- a call is recovered only when its name is in the catalog and its arguments are an object
  (strict JSON, or near-JSON repaired by `near_json`); its arguments are re-encoded as JSON;
- text that looks like a tool call (a `<tool_call>` tag, or a JSON object with a "name" key)
  but yields no usable call is reported as `shaped`, with the reasons, so the runner can correct
  the model instead of reporting success;
- the work is bounded: only the first `MAX_SCAN_CHARS` are read, at most `MAX_CANDIDATES`
  objects are tried and `MAX_CALLS` are returned, each candidate found in one linear scan.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass

from vtcode.loop.near_json import loads_near_json

__all__ = ["MAX_CALLS", "MAX_SCAN_CHARS", "TextCall", "TextCallScan", "scan_text_calls"]

MAX_SCAN_CHARS = 256 * 1024
MAX_CANDIDATES = 32
MAX_CALLS = 16
# A reply is "only" a tool call when at most this much prose is left around the call-shaped parts.
MAX_PROSE_CHARS = 160

_HERMES = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n(.*?)(?:```|\Z)", re.S)
_NAME_KEY = re.compile(r"""["']name["']\s*:""")
_ARG_KEYS = ("arguments", "parameters", "args", "input")

# A name that is not a tool, read as the built-in tool it plainly means (when that tool is in
# the catalog): what small models write for a shell, a read or a write.
NAME_ALIASES = {
    **dict.fromkeys(
        ("bash", "shell", "sh", "run", "run_command", "run_shell", "execute", "exec", "terminal",
         "command", "cmd", "shell_command", "execute_command"),
        "exec_command",
    ),
    **dict.fromkeys(("cat", "read", "open", "open_file", "view", "view_file", "show_file"),
                    "read_file"),
    **dict.fromkeys(("write", "create_file", "save", "save_file", "create", "edit_file"),
                    "write_file"),
    **dict.fromkeys(("ls", "list", "list_dir", "list_directory", "listdir"), "list_files"),
}  # fmt: skip
# A call whose name is no tool (qwen0.5b names the task's own function: `sum_to`) but whose
# argument keys are exactly one built-in tool's: the arguments say what the model meant.
ARGUMENT_SHAPES = {
    frozenset({"path", "content"}): "write_file",
    frozenset({"command"}): "exec_command",
}


@dataclass(frozen=True, slots=True)
class TextCall:
    """One recovered call: a catalog name and its arguments as JSON text of an object."""

    name: str
    arguments: str
    repairs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TextCallScan:
    """What the text held: usable calls, whether it looked like tool calls, the rest of it."""

    calls: tuple[TextCall, ...] = ()
    shaped: bool = False  # something looked like a tool call
    problems: tuple[str, ...] = ()  # why call-shaped parts gave no call
    prose: str = ""  # the text with the call-shaped parts removed

    @property
    def only_calls(self) -> bool:
        """The reply was (almost) nothing but call-shaped text."""
        return self.shaped and len(self.prose.strip()) <= MAX_PROSE_CHARS


def scan_text_calls(text: str, catalog: Collection[str]) -> TextCallScan:
    """Read the tool calls written into `text`; `catalog` holds the names that may be called."""
    head = text[:MAX_SCAN_CHARS]
    if "{" not in head and "<tool_call>" not in head:
        return TextCallScan(prose=text)
    spans = _candidate_spans(head)
    calls: list[TextCall] = []
    problems: list[str] = []
    shaped = False
    used: list[tuple[int, int]] = []
    for start, end, tagged in spans[:MAX_CANDIDATES]:
        body = head[start:end].strip()
        if not tagged and not body.startswith(("{", "[")):
            continue  # a fence of code, not of a call
        looks = tagged or bool(_NAME_KEY.search(body[:4096]))
        if not looks:
            continue
        shaped = True
        used.append((start, end))
        found, why = _calls_in(body, catalog)
        if why:
            problems.append(why)
        calls.extend(found)
    if not shaped:
        return TextCallScan(prose=text)
    prose = _without(head, used) + text[MAX_SCAN_CHARS:]
    return TextCallScan(
        calls=tuple(calls[:MAX_CALLS]),
        shaped=True,
        problems=tuple(dict.fromkeys(problems)),
        prose=_strip_fences(prose),
    )


def _candidate_spans(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, tagged) of each part that may hold calls, in order, not overlapping."""
    spans: list[tuple[int, int, bool]] = []
    for m in _HERMES.finditer(text):
        spans.append((m.start(1), m.end(1), True))
        if len(spans) >= MAX_CANDIDATES:
            return spans
    # Fences never overlap one another (each begins after the last one's closing ```), so a
    # fence start needs checking against the tag spans alone: fewer than MAX_CANDIDATES of
    # them, a bounded check however many fences the text holds (all are kept, as sorted
    # below: capping here could change which spans come first).
    tags = spans[:]
    for m in _FENCE.finditer(text):
        if not _inside(m.start(), tags):
            spans.append((m.start(1), m.end(1), False))
    i = 0
    while len(spans) < MAX_CANDIDATES:
        i = text.find("{", i)
        if i < 0:
            break
        if _inside(i, spans) or not _at_line_start(text, i):
            i += 1
            continue
        j = text.rfind("[", text.rfind("\n", 0, i) + 1, i)
        start = j if j >= 0 and not text[j + 1 : i].strip() else i  # an array of calls
        end = _balanced_end(text, start)
        if end is None:  # an object that never closes: the rest of the text
            end = len(text)
        spans.append((start, end, False))
        i = end
    return sorted(spans)


def _inside(i: int, spans: list[tuple[int, int, bool]]) -> bool:
    return any(a <= i < b for a, b, _ in spans)


def _at_line_start(text: str, i: int) -> bool:
    """What comes before `i` on its line, stripped, is nothing, `[` or ends with `:`.

    Read backwards over blanks only, never to the line start (a scan and a copy per `{`
    made a long line of `{` quadratic); `str.isspace` is the set `str.strip` removes."""
    k = _blank_before(text, i)
    if k < 0 or text[k] == "\n":
        return True
    if text[k] == ":":
        return True
    if text[k] != "[":
        return False
    k = _blank_before(text, k)
    return k < 0 or text[k] == "\n"


def _blank_before(text: str, i: int) -> int:
    """Index of the last character before `i` that is a newline or not blank (-1: none)."""
    k = i - 1
    while k >= 0 and text[k] != "\n" and text[k].isspace():
        k -= 1
    return k


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the `{...}` opening at `start`, strings respected; None if it never closes."""
    depth = 0
    quote: str | None = None
    i, n = start, len(text)
    while i < n:
        c = text[i]
        if quote is not None:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _calls_in(body: str, catalog: Collection[str]) -> tuple[list[TextCall], str | None]:
    """The calls in one candidate (an object, or an array of them), or why there are none."""
    parsed = loads_near_json(body)
    if parsed is None:
        return [], "not valid JSON"
    values = parsed.value if isinstance(parsed.value, list) else [parsed.value]
    calls: list[TextCall] = []
    why: str | None = None
    for value in values[:MAX_CALLS]:
        call, problem = _call_of(value, catalog, parsed.repairs)
        if call is not None:
            calls.append(call)
        elif problem is not None:
            why = problem
    return calls, why


def _call_of(
    value: object, catalog: Collection[str], repairs: tuple[str, ...]
) -> tuple[TextCall | None, str | None]:
    if not isinstance(value, dict):
        return None, "not a JSON object"
    fn = value.get("function")
    if isinstance(fn, dict) and "name" in fn:  # {"type": "function", "function": {...}}
        value = fn
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None, "no tool name"
    raw: object = next((value[k] for k in _ARG_KEYS if k in value), {})
    if isinstance(raw, str):  # arguments as a JSON string, as the OpenAI wire has them
        inner = loads_near_json(raw) if raw.strip() else None
        if inner is None and raw.strip():
            if name not in catalog:
                return None, f"{name!r} is not a tool"
            return None, f"the arguments of {name} are not valid JSON"
        raw = {} if inner is None else inner.value
        repairs = (*repairs, *(inner.repairs if inner is not None else ()))
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        if name not in catalog:
            return None, f"{name!r} is not a tool"
        return None, f"the arguments of {name} are not a JSON object"
    if name not in catalog:
        meant = _meant(name, raw, catalog)
        if meant is None:
            return None, f"{name!r} is not a tool"
        repairs = (*repairs, f"{name!r} read as {meant}")
        name = meant
    return TextCall(name, json.dumps(raw, ensure_ascii=False), tuple(sorted(set(repairs)))), None


def _meant(name: str, raw: object, catalog: Collection[str]) -> str | None:
    """The catalog tool a call with an unknown `name` plainly means, if one does."""
    meant = NAME_ALIASES.get(name.strip().lower())
    if meant is None and isinstance(raw, dict):
        meant = ARGUMENT_SHAPES.get(frozenset(raw))
    return meant if meant in catalog else None


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    out: list[str] = []
    last = 0
    for a, b in sorted(spans):
        if a < last:
            continue
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    return "".join(out)


def _strip_fences(text: str) -> str:
    """Prose left once the call-shaped parts are gone: no empty fences or bare tags."""
    text = re.sub(r"```[A-Za-z0-9_+-]*[ \t]*\n?\s*(```)?", "", text)
    return re.sub(r"</?tool_call>", "", text).strip()
