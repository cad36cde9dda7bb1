"""The scans that read model output (untrusted text) run in linear time and find what they did.

Each rewritten scan is checked against its OLD form, copied here verbatim as the reference
(`_old_*` below; do not "fix" them), on thousands of random short strings built from the
characters and words the scan reacts to; then the real function runs on long crafted inputs
that took the old forms quadratic time, each in a subprocess with a generous timeout (a hang
check, not a timing assertion).
"""

from __future__ import annotations

import random
import re
from collections import Counter

import orjson
import pytest

from tests.hang_check import run_python
from vtcode.eval import classify
from vtcode.loop import structured, text_calls
from vtcode.runtime.subagents import parse_verdict

N = 4000

# ---- OLD reference forms, copied verbatim from before the linear rewrite --------------------


def _old_candidate_spans(text: str) -> list[tuple[int, int, bool]]:
    """OLD vtcode.loop.text_calls._candidate_spans (with the OLD `_inside`/`_at_line_start`)."""
    spans: list[tuple[int, int, bool]] = []
    for m in text_calls._HERMES.finditer(text):
        spans.append((m.start(1), m.end(1), True))
        if len(spans) >= text_calls.MAX_CANDIDATES:
            return spans
    for m in text_calls._FENCE.finditer(text):
        if not _old_inside(m.start(), spans):
            spans.append((m.start(1), m.end(1), False))
    i = 0
    while len(spans) < text_calls.MAX_CANDIDATES:
        i = text.find("{", i)
        if i < 0:
            break
        if _old_inside(i, spans) or not _old_at_line_start(text, i):
            i += 1
            continue
        j = text.rfind("[", text.rfind("\n", 0, i) + 1, i)
        start = j if j >= 0 and not text[j + 1 : i].strip() else i  # an array of calls
        end = text_calls._balanced_end(text, start)
        if end is None:  # an object that never closes: the rest of the text
            end = len(text)
        spans.append((start, end, False))
        i = end
    return sorted(spans)


def _old_inside(i: int, spans: list[tuple[int, int, bool]]) -> bool:
    return any(a <= i < b for a, b, _ in spans)


def _old_at_line_start(text: str, i: int) -> bool:
    j = text.rfind("\n", 0, i) + 1
    before = text[j:i].strip()
    return before in ("", "[") or before.endswith(":")


# OLD vtcode.loop.structured._FENCE
_OLD_STRUCTURED_FENCE = re.compile(r"```[A-Za-z0-9_-]*\s*\n(.*?)\n?```", re.DOTALL)

# OLD vtcode.eval.classify._FENCE / _TAGGED / looks_like_tool_call
_OLD_CLASSIFY_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_OLD_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def _old_looks_like_tool_call(text: str | None) -> bool:
    if not text:
        return False
    body = text.strip()
    tagged = _OLD_TAGGED.search(body)
    if tagged:
        return True
    fenced = _OLD_CLASSIFY_FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    if not body.startswith(("{", "[")):
        return False
    try:
        return classify._call_shaped(orjson.loads(body))
    except orjson.JSONDecodeError:
        return False


# OLD vtcode.runtime.subagents._DECISION / _ISSUE / parse_verdict
_OLD_DECISION = re.compile(r"^\s*\**Decision:\**\s*\**(APPROVED|REJECTED)\**\s*$", re.MULTILINE)
_OLD_ISSUE = re.compile(r"^\s*[-*]\s*ISSUE:\s*(.+?)\s*$", re.MULTILINE)


def _old_parse_verdict(text: str | None) -> tuple[bool, list[str]]:
    body = text or ""
    issues = [m.group(1) for m in _OLD_ISSUE.finditer(body)]
    decisions = _OLD_DECISION.findall(body)
    approved = bool(decisions) and decisions[-1] == "APPROVED" and not issues
    if not decisions:
        issues = [*issues, "the verifier gave no `Decision:` line"]
    return approved, issues


# ---- random short strings ------------------------------------------------------------------

# blanks `str.strip` and `\s` both take, some of them no ASCII space or newline
BLANKS = [" ", " ", "\t", "\n", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u00a0", "\u2028"]


def _soup(rng: random.Random, tokens: list[str], most: int) -> str:
    return "".join(rng.choice(tokens) for _ in range(rng.randint(0, most)))


CALL_TOKENS = [
    *BLANKS,
    "```", "```", "```json", "```py", "`", "{", "{", "}", "[", "]", ":", ",", '"', "'", "\\",
    "<tool_call>", "</tool_call>", '"name"', ': "read_file"', '"arguments"', "a", "x y",
    '{"name": "read_file", "arguments": {}}',
]  # fmt: skip
# many short parts: more spans than MAX_CANDIDATES, tags, fences and objects interleaved
MANY_TOKENS = ["```\n", "```", "\n", " ", "<tool_call>x</tool_call>", "\n{}", ":{}", "a", "["]


def test_candidate_spans_and_line_starts_match_the_old_forms() -> None:
    rng = random.Random(28)
    seen: Counter[str] = Counter()
    for n in range(N):
        text = _soup(rng, CALL_TOKENS, 40) if n % 10 else _soup(rng, MANY_TOKENS, 300)
        old = _old_candidate_spans(text)
        assert text_calls._candidate_spans(text) == old, repr(text)
        seen["spans"] += bool(old)
        seen["tagged"] += any(t for _, _, t in old)
        seen["over cap"] += len(old) > text_calls.MAX_CANDIDATES
        for i, c in enumerate(text):
            if c == "{":
                was = _old_at_line_start(text, i)
                assert text_calls._at_line_start(text, i) == was, (repr(text), i)
                seen[f"line start {was}"] += 1
    assert min(seen.values()) >= 50, seen


def test_scan_text_calls_still_reads_a_call_after_blanks_and_a_bracket() -> None:
    text = "Calls:\n\u00a0\t[ \t" + '{"name": "read_file", "arguments": {"path": "a"}}]'
    scan = text_calls.scan_text_calls(text, {"read_file"})
    assert [c.name for c in scan.calls] == ["read_file"]
    assert text_calls.scan_text_calls("x [ {}", {"read_file"}).shaped is False


FENCE_TOKENS = [
    *BLANKS, "```", "```", "```json", "json", "x", "{", "}", '"a"', "1", "`", "\n```",
]  # fmt: skip


def test_structured_fence_finds_the_old_blocks() -> None:
    rng = random.Random(47)
    seen: Counter[str] = Counter()
    for _ in range(N):
        text = _soup(rng, FENCE_TOKENS, 30)
        old = _OLD_STRUCTURED_FENCE.findall(text)
        assert structured._FENCE.findall(text) == old, repr(text)
        seen["blocks" if old else "none"] += 1
        blocks = _OLD_STRUCTURED_FENCE.finditer(text)
        seen["several newlines"] += any(m.group(0).count("\n") > 2 for m in blocks)
    assert min(seen.values()) >= 50, seen


CLASSIFY_TOKENS = [
    *BLANKS, "```", "```", "```json", "`", "{", "}", "[", "]", "x", "</tool_call>",
    '{"name": "f", "arguments": {}}', '{"name": "f"}', ", ",
]  # fmt: skip


def test_looks_like_tool_call_answers_as_before() -> None:
    rng = random.Random(66)
    seen: Counter[str] = Counter()
    for n in range(N):
        tokens = [*CLASSIFY_TOKENS, "<tool_call>"] if n % 4 == 0 else CLASSIFY_TOKENS
        text = _soup(rng, tokens, 12)
        if n % 3 == 0:  # a fence around the whole message, more or less
            opening = rng.choice(["```", "```json", "```a-b", "`"])
            closing = rng.choice(["```", "``", "```x"])
            middle = _soup(rng, [*BLANKS, "json"], 3) + rng.choice(CLASSIFY_TOKENS[-4:])
            text = f"{_soup(rng, BLANKS, 2)}{opening}{middle}{_soup(rng, BLANKS, 3)}{closing}"
        body = text.strip()
        old_fence = _OLD_CLASSIFY_FENCE.match(body)
        new_fence = classify._FENCE.fullmatch(body)
        assert (old_fence is None) == (new_fence is None), repr(body)
        if old_fence and new_fence:
            assert new_fence.group(1).strip() == old_fence.group(1).strip(), repr(body)
            seen["fenced"] += 1
        was = _old_looks_like_tool_call(text)
        assert classify.looks_like_tool_call(text) is was, repr(text)
        seen[f"call {was}"] += 1
        seen["fenced call"] += was and old_fence is not None and "<tool_call>" not in body
    assert min(seen.values()) >= 50, seen
    assert classify.looks_like_tool_call(None) is _old_looks_like_tool_call(None) is False


VERDICT_TOKENS = [
    *BLANKS, "\n", "\n", "Decision:", "Decision:", "Decision", "*", "**", "APPROVED",
    "APPROVED", "REJECTED", "-", "- ", "* ", "ISSUE:", "ISSUE:", "x", "y z", ":",
]  # fmt: skip


def _verdict_text(rng: random.Random) -> str:
    """Soup, or lines shaped like a verifier's, with random blanks and stars around."""
    if rng.random() < 0.4:
        return _soup(rng, VERDICT_TOKENS, 16)

    def pad() -> str:
        return _soup(rng, [*BLANKS, "*", "**", ""], 2)

    lines = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.5:
            word = rng.choice(["APPROVED", "APPROVED", "REJECTED", "APPROVE"])
            lines.append(pad() + "Decision:" + pad() + word + pad())
        elif kind < 0.8:
            said = rng.choice(["", "x", "a b", " \t"])
            lines.append(pad() + rng.choice("-*") + pad() + "ISSUE:" + pad() + said + pad())
        else:
            lines.append(_soup(rng, VERDICT_TOKENS, 4))
    return rng.choice(["\n", "\n\n", "\r\n", " \n"]).join(lines) + rng.choice(["", "\n", " "])


def test_parse_verdict_reads_as_before() -> None:
    rng = random.Random(51)
    seen: Counter[str] = Counter()
    for _ in range(N):
        text = _verdict_text(rng)
        was = _old_parse_verdict(text)
        assert parse_verdict(text) == was, repr(text)
        seen[f"approved {was[0]}"] += 1
        found = [m.group(1) for m in _OLD_ISSUE.finditer(text)]
        seen["issues"] += bool(found)
        seen["blank issue"] += any(not i.strip() for i in found)
    assert min(seen.values()) >= 50, seen
    assert parse_verdict(None) == _old_parse_verdict(None)
    # only blanks after the last `ISSUE:`: the old form's one-character issue, still a rejection
    assert parse_verdict("Decision: APPROVED\n- ISSUE: \n") == (False, [" "])


# ---- long crafted inputs: each runs in a subprocess, a hang check ----------------------------

LONG = [
    (
        "text_calls-fences",
        "from vtcode.loop.text_calls import scan_text_calls as f\n"
        "r = f('{\\n' + '```\\n' * 40000, {'read_file'}); print(r.shaped, len(r.calls))",
        "False 0",
    ),
    (
        "text_calls-braces",
        "from vtcode.loop.text_calls import scan_text_calls as f\n"
        "r = f('a' + '{' * 200000, {'read_file'}); print(r.shaped, len(r.calls))",
        "False 0",
    ),
    (
        "text_calls-blanks-bracket",
        "from vtcode.loop.text_calls import scan_text_calls as f\n"
        "t = ('a{ ' * 50000) + '\\n' + ' ' * 100000 + '[' + ' ' * 3000 + "
        '\'{"name": "read_file", "arguments": {}}]\'\n'
        "r = f(t, {'read_file'}); print(r.shaped, [c.name for c in r.calls])",
        "True ['read_file']",
    ),
    (
        "structured-open-fence",
        "from vtcode.loop.structured import answer_json as f\n"
        "print(f('```' + '\\n' * 200000 + 'x'))",
        "None",
    ),
    (
        "structured-blank-lines",
        "from vtcode.loop.structured import answer_json as f\n"
        "print(f('```json' + ' \\n' * 100000 + '{\"a\": 1}\\n```'))",
        "('{\"a\": 1}', {'a': 1})",
    ),
    (
        "classify-tagged",
        "from vtcode.eval.classify import looks_like_tool_call as f\n"
        "print(f('<tool_call>a' + ' ' * 200000 + 'b'))",
        "True",
    ),
    (
        "classify-fenced",
        "from vtcode.eval.classify import looks_like_tool_call as f\n"
        "print(f('```json' + ' \\n' * 100000 + '{\"name\": \"f\", \"arguments\": {}}\\n```'),"
        " f('```' + 'a' * 200000), f('```' + ' ' * 200000 + 'x```'))",
        "True False False",
    ),
    (
        "subagents-newlines",
        "from vtcode.runtime.subagents import parse_verdict as f\nprint(f('\\n' * 200000))",
        "(False, ['the verifier gave no `Decision:` line'])",
    ),
    (
        "subagents-stars",
        "from vtcode.runtime.subagents import parse_verdict as f\n"
        "print(f('Decision:' + '*' * 100000), f('- ISSUE:' + '\\t' * 100000))",
        "(False, ['the verifier gave no `Decision:` line']) "
        "(False, ['\\t', 'the verifier gave no `Decision:` line'])",
    ),
    (
        "subagents-issue-blanks",
        "from vtcode.runtime.subagents import parse_verdict as f\n"
        "ok, issues = f('- ISSUE: a' + ' ' * 100000 + 'b \\nDecision: APPROVED' + ' \\n' * 50000)\n"
        "print(ok, [(len(i), i[0], i[-1]) for i in issues])",
        "False [(100002, 'a', 'b')]",
    ),
]


@pytest.mark.parametrize(("code", "expected"), [c[1:] for c in LONG], ids=[c[0] for c in LONG])
def test_long_untrusted_text_is_read_in_linear_time(code: str, expected: str) -> None:
    assert run_python(code).stdout.strip() == expected
