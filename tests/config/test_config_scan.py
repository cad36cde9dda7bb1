"""The TOML position scanner (where errors point) and the dotted-key parser."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from vtcode.config.tomlscan import (
    KeyPath,
    format_key,
    key_positions,
    parse_key,
    parse_key_path,
)

DOC = '''\
# comment
[agent]
provider = "x"  # trailing
harness.max_budget_usd = 5
"quoted.key" = { a = 1, b = [1, 2,
  3] }

[[hooks.lifecycle.pre_compact]]
matcher = """multi
line with = and [brackets]
"""
hooks = [{ command = 'x' }]
[[hooks.lifecycle.pre_compact]]
[hooks.lifecycle.pre_compact.sub]
when = 1979-05-27 07:32:00
after = 2
'''


def test_positions_of_a_mixed_document() -> None:
    tomllib.loads(DOC)  # the scanner only ever sees valid TOML
    pos = key_positions(DOC)
    expected: dict[str, tuple[int, int]] = {
        "agent": (2, 2),
        "agent.provider": (3, 1),
        "agent.harness": (4, 1),
        "agent.harness.max_budget_usd": (4, 9),
        'agent."quoted.key"': (5, 1),
        'agent."quoted.key".a': (5, 18),
        'agent."quoted.key".b': (5, 25),
        'agent."quoted.key".b[2]': (6, 3),
        "hooks.lifecycle.pre_compact": (8, 19),
        "hooks.lifecycle.pre_compact[0]": (8, 1),
        "hooks.lifecycle.pre_compact[0].matcher": (9, 1),
        "hooks.lifecycle.pre_compact[0].hooks": (12, 1),
        "hooks.lifecycle.pre_compact[0].hooks[0].command": (12, 12),
        "hooks.lifecycle.pre_compact[1]": (13, 1),
        "hooks.lifecycle.pre_compact[1].sub": (14, 30),
        "hooks.lifecycle.pre_compact[1].sub.when": (15, 1),
        "hooks.lifecycle.pre_compact[1].sub.after": (16, 1),
    }
    assert {k: pos[parse_key_path(k)] for k in expected} == expected


def test_nested_arrays_of_tables_index_into_their_parent() -> None:
    text = "[[a]]\nx = 1\n[[a.b]]\ny = 1\n[[a]]\n[[a.b]]\n[[a.b]]\nz = 3\n"
    tomllib.loads(text)
    pos = key_positions(text)
    assert pos[("a", 0, "b", 0, "y")] == (4, 1)
    assert pos[("a", 1, "b", 1, "z")] == (8, 1)


def test_crlf_and_tabs() -> None:
    text = "[t]\r\n\tkey\t=\t1\r\nother = 'v'\r\n"
    tomllib.loads(text)
    pos = key_positions(text)
    assert pos[("t", "key")] == (2, 2)
    assert pos[("t", "other")] == (3, 1)


@pytest.mark.parametrize("text", ["[agent", "a = ", "x = 'open", "= 1", "[[a]\n", '"""'])
def test_invalid_text_never_raises(text: str) -> None:
    assert isinstance(key_positions(text), dict)


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_scanner_is_total(text: str) -> None:
    key_positions(text)


# --------------------------------------------------------------------------------------------
# Property: for documents tomlkit writes, every key path is found, at the key's spelling.

_key = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8
) | st.from_regex(r"[A-Za-z0-9_-]{1,8}", fullmatch=True)
_scalar = (
    st.integers(-(2**63), 2**63 - 1)
    | st.booleans()
    | st.text(max_size=12)
    | st.floats(allow_nan=False, allow_infinity=False)
)
_value = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_key, inner, max_size=3),
    max_leaves=8,
)
_doc = st.dictionaries(_key, _value, max_size=5)


def _paths(data: Any, prefix: KeyPath = ()) -> list[KeyPath]:
    out: list[KeyPath] = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.append((*prefix, k))
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.append((*prefix, i))
            out.extend(_paths(v, (*prefix, i)))
    return out


def _spells(rest: str, key: str) -> bool:
    """Some prefix of `rest` is a TOML spelling of `key` (checked by tomllib, not the scanner)."""
    for j in range(1, len(rest) + 1):
        try:
            parsed = tomllib.loads(rest[:j] + " = 1")
        except tomllib.TOMLDecodeError:
            continue
        if parsed == {key: 1}:
            return True
    return False


@given(_doc)
@settings(max_examples=150, deadline=None)
def test_every_written_key_is_found_at_its_spelling(data: dict[str, Any]) -> None:
    text = tomlkit.dumps(data)
    parsed = tomllib.loads(text)
    lines = text.split("\n")
    pos = key_positions(text)
    for path in _paths(parsed):
        assert path in pos, (path, text)
        line, col = pos[path]
        rest = lines[line - 1][col - 1 :]
        last = path[-1]
        if isinstance(last, str):
            assert _spells(rest, last), (path, rest, text)
        else:
            assert rest.strip(), (path, text)  # an array element starts here


@given(st.lists(_key, min_size=1, max_size=4))
def test_format_key_round_trips(parts: list[str]) -> None:
    assert parse_key(format_key(tuple(parts))) == tuple(parts)


def test_key_paths_with_indexes() -> None:
    assert parse_key_path("hooks.lifecycle.stop[0].hooks[1].command") == (
        "hooks",
        "lifecycle",
        "stop",
        0,
        "hooks",
        1,
        "command",
    )
    assert format_key(("a", 0, "b c")) == 'a[0]."b c"'
    for bad in ["", "a.", ".a", "a..b", "[0]", "a[x]", "a[0]b"]:
        with pytest.raises(ValueError):
            parse_key_path(bad)
