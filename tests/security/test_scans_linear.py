"""Scans of workspace files, config, server errors and small events, in linear time.

A red-team scan timed each of these quadratic on one crafted line (a task file's checkbox with
trailing blanks, a TOML line of blanks inside an array, a TOML error echoing a long key, an
event of colons after `://`, a server error type repeating "input length"). Where the fix
changed a pattern, the old one is kept here as the reference and compared on random lines;
every shape then runs in a subprocess that a hang would time out.
"""

from __future__ import annotations

import random
import re

import pytest

from tests.hang_check import run_python
from vtcode.orient.progress import parse_task_milestones
from vtcode.tomlcheck import _HEADER

OLD_CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[(.)\]\s+(.+?)\s*$")
OLD_URL_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*:([^\s/?#@]+)@")
OLD_MASK_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*):[^\s/?#]*@")
OLD_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*(\]\]?)\s*(?:#.*)?$")


def _lines(seed: int, pieces: list[str], count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(count)]


def test_milestones_are_what_the_old_pattern_read() -> None:
    pieces = ["- ", "* ", "1. ", "[x]", "[ ]", "[~]", "[!]", " ", "\t", "a", "b c", "]", "\u2003"]
    lines = _lines(7, pieces, 6000)
    for line in lines:
        old = OLD_CHECKBOX.match(line)
        got = parse_task_milestones(line)
        status_known = old is not None and old.group(1) in "xX ~-!"
        if not status_known:
            continue
        assert [m.description for m in got] == [old.group(2)], repr(line)
    read = sum(bool(parse_task_milestones(line)) for line in lines)
    assert read > 100  # the comparison ran on real checkboxes


def test_toml_headers_are_what_the_old_pattern_read() -> None:
    pieces = ["[", "[[", "]", "]]", " ", "\t", "a", "b.c", '"q"', "# note", "=", "x y"]
    lines = _lines(11, pieces, 6000)
    differ = []
    for line in lines:
        old, new = OLD_HEADER.match(line), _HEADER.match(line)
        if old is not None and not old.group(2).strip():
            continue  # a table named by blanks (`[[ ]]`): invalid TOML, never located
        if (old.groups() if old else None) != (new.groups() if new else None):
            differ.append(line)
    assert differ == []
    assert sum(bool(_HEADER.match(line)) for line in lines) > 80


def test_url_passwords_are_found_and_masked_as_the_old_patterns_did() -> None:
    from vtcode.config.mask import _USERINFO
    from vtcode.redact import _URL_PASSWORD

    rng = random.Random(5)
    lines = []
    for _ in range(6000):
        scheme = "".join(rng.choice(["h", "1", "+", "-", ".", "t", "p"]) for _ in range(4))
        auth = "".join(rng.choice(["u", ":", "pw", "@", " ", "/", "x", "?"]) for _ in range(6))
        lines.append(f"{rng.choice(['', 'a', '1', ' ', '@'])}{scheme}://{auth}")
    for line in lines:
        assert _URL_PASSWORD.findall(line) == OLD_URL_PASSWORD.findall(line), repr(line)
        new, old = _USERINFO.sub(r"\1:***@", line), OLD_MASK_USERINFO.sub(r"\1:***@", line)
        assert new == old, repr(line)
    assert sum(bool(OLD_URL_PASSWORD.findall(line)) for line in lines) > 80


SHAPES = {
    "env url": (
        "from vtcode.redact import collect_secrets as f\nf({'X_URL': 'x://u:p@ ' + 'a' * 200_000})"
    ),
    "config url": (
        "from vtcode.config.mask import mask_url as f\n"
        "f('x://u:p@ ' + 'a' * 200_000)\nf('=&' + '?' * 200_000)"
    ),
    "task checkbox": (
        "from vtcode.orient.progress import parse_task_milestones as f\n"
        "r = f('- [x] a' + ' ' * 200_000 + 'b')\nassert r[0].description.endswith('b')"
    ),
    "toml array line": (
        "from vtcode.tomlcheck import _locate_keys as f\n"
        "f('a = [\\n[\"b' + ' ' * 200_000 + 'c\"],\\n]')"
    ),
    "toml error": (
        "from vtcode.tomlcheck import decode_toml\nfrom vtcode.config.model import VtcodeConfig\n"
        "text = '[\"a' + ' ' * 100_000 + 'b\"]\\n[\"a' + ' ' * 100_000 + 'b\"]\\n'\n"
        "try:\n    decode_toml(VtcodeConfig, text, source='x', make_error=ValueError)\n"
        "except ValueError as e:\n    assert 'invalid TOML' in str(e)"
    ),
    "event colons": (
        "from vtcode.redact import Redactor\nr = Redactor(['a-long-secret-value'])\n"
        "for _ in range(200):\n    r.text('://' + ':' * 4000 + ' x')"
    ),
    "server error": (
        "from vtcode.providers.http import classify_error as f\n"
        "f(provider='p', key_env='K', model='m', status=None, "
        "err_type='input length ' * 5000, message='m')"
    ),
    "model name": (
        "from vtcode.runtime.harness_profile import model_params_from_name as f\nf('1' * 200_000)"
    ),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_a_crafted_line_is_read_in_one_pass(name: str) -> None:
    run_python(SHAPES[name])
