"""The SSE parser: events come out the same however the bytes are split on the wire."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vtcode.providers.sse import SSEEvent, SSEParser, iter_sse

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sse"


def parse(*chunks: bytes) -> list[SSEEvent]:
    return list(iter_sse(chunks))


def test_fields_multiline_data_comments_and_names() -> None:
    p = SSEParser()
    out = p.feed(b": keep-alive\nevent: delta\ndata: one\ndata:two\nid: 7\nretry: 1500\n\n")
    assert out == [SSEEvent(data="one\ntwo", event="delta", id="7", retry=1500)]
    assert p.comments == 1
    assert p.feed(b"data: next\n\n") == [SSEEvent(data="next", id="7")]  # the id persists


def test_only_one_leading_space_is_stripped_and_bare_field_names_count() -> None:
    assert parse(b"data:  two spaces\n\n") == [SSEEvent(data=" two spaces")]
    assert parse(b"data\ndata: x\n\n") == [SSEEvent(data="\nx")]


def test_blank_events_and_unknown_fields_are_ignored() -> None:
    assert parse(b"event: ping\n\nfoo: bar\n\n: c\n\n") == []


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    raw = eol.join([b"data: a", b"", b"event: e", b"data: b", b"", b""])
    assert parse(raw) == [SSEEvent(data="a"), SSEEvent(data="b", event="e")]


def test_crlf_split_between_chunks_is_one_line_ending() -> None:
    assert parse(b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n") == [
        SSEEvent(data="a"),
        SSEEvent(data="b"),
    ]


def test_utf8_split_inside_a_character_and_bom() -> None:
    raw = "\ufeffdata: héllo ✓\n\n".encode()
    assert parse(*[raw[i : i + 1] for i in range(len(raw))]) == [SSEEvent(data="héllo ✓")]


def test_done_sentinel_is_plain_data() -> None:
    assert parse(b"data: [DONE]\n\n") == [SSEEvent(data="[DONE]")]


def test_end_of_stream_flushes_complete_lines_and_drops_a_torn_one() -> None:
    assert parse(b"data: complete\n") == [SSEEvent(data="complete")]
    assert parse(b"data: complete\n\ndata: tor") == [SSEEvent(data="complete")]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.sse")))
def test_fixture_streams_parse_to_json_events(name: str) -> None:
    events = parse((FIXTURES / name).read_bytes())
    assert events
    assert all(e.data == "[DONE]" or e.data.startswith("{") for e in events)


@settings(max_examples=80, deadline=None)
@given(
    name=st.sampled_from(sorted(p.name for p in FIXTURES.glob("*.sse"))),
    cuts=st.lists(st.integers(min_value=0, max_value=6000), max_size=40),
)
def test_any_split_of_the_bytes_gives_the_same_events(name: str, cuts: list[int]) -> None:
    raw = (FIXTURES / name).read_bytes()
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert parse(*chunks) == parse(raw)
