"""Text a model or a repository controls reaches the terminal inert (issue 17, deliverable 6).

One function (`vtcode.termtext.inert`) removes escape sequences and controls; these tests feed
hostile text through every human renderer of the real CLI and check that no control byte but
newline and tab reaches stdout or stderr (NO_COLOR is set, so vtcode adds no escapes of its own).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.exec_support import vtcode
from vtcode.termtext import inert, inert_line

ESC = "\x1b"
# Everything a terminal could act on: C0 but tab/newline, DEL, C1, bidi embeddings/overrides.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

HOSTILE = [
    ("csi clear screen", f"a{ESC}[2Jb", "ab"),
    ("csi colour", f"{ESC}[31mred{ESC}[0m", "red"),
    ("csi private mode", f"x{ESC}[?1049hy", "xy"),
    ("osc 52 clipboard, BEL", f"p{ESC}]52;c;ZWNobyBwd25lZA=={chr(7)}q", "pq"),
    ("osc title, ST", f"p{ESC}]0;owned{ESC}\\q", "pq"),
    ("osc 8 hyperlink", f"{ESC}]8;;http://evil/{ESC}\\click{ESC}]8;;{ESC}\\", "click"),
    ("osc unterminated eats the rest", f"ok{ESC}]52;c;AAAA", "ok"),
    ("dcs", f"a{ESC}Pq#0;2;0;0;0{ESC}\\b", "ab"),
    ("apc", f"a{ESC}_hidden{ESC}\\b", "ab"),
    ("8-bit csi", "a\x9b2Jb", "ab"),
    ("8-bit osc", "a\x9d52;c;AAAA\x07b", "ab"),
    ("reset RIS", f"a{ESC}cb", "ab"),
    ("charset select", f"a{ESC}(0b", "ab"),
    ("lone escape at the end", f"ab{ESC}", "ab"),
    ("carriage return overwrite", "safe\rEVIL", "safeEVIL"),
    ("backspace", "rm\b\bls", "rmls"),
    ("bell and nul", "a\x07\x00b", "ab"),
    ("del", "a\x7fb", "ab"),
    ("bidi override", "a\u202eevil\u202cb", "aevilb"),
    ("bidi isolate", "a\u2066x\u2069b", "axb"),
    ("newline and tab kept", "a\n\tb", "a\n\tb"),
    ("unicode kept", "héllo → ✓ 日本", "héllo → ✓ 日本"),
]


@pytest.mark.parametrize(("name", "text", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_inert_removes_sequences_whole(name: str, text: str, expected: str) -> None:
    assert inert(text) == expected
    assert CONTROL.search(inert(text)) is None


def test_inert_line_folds_newlines() -> None:
    assert inert_line(f"a\n{ESC}[2Jb\tc") == "a b c"
    assert inert_line(42) == "42"


def test_split_sequence_across_deltas_is_removed_whole() -> None:
    """A streamed renderer makes the whole text inert, then prints what is new: no halves."""
    whole = f"hi {ESC}]52;c;AAAA{chr(7)} there"
    shown = ""
    for cut in range(1, len(whole) + 1):
        clean = inert(whole[:cut])
        assert clean.startswith(shown[: len(clean)])
        shown = clean if len(clean) > len(shown) else shown
    assert inert(whole) == "hi  there"


def _toml_str(s: str) -> str:
    return json.dumps(s)  # JSON string escapes (\u001b …) are valid TOML basic strings


def _hostile_script(tmp: Path) -> Path:
    bad = f"{ESC}[2J{ESC}]52;c;QUFBQQ=={chr(7)}\x9b31m\u202e"
    script = tmp / "hostile.toml"
    script.write_text(
        '[provider]\nmodel = "replay-1"\n\n'
        "[[turn]]\n"
        f"reasoning = {_toml_str('thinking' + bad)}\n"
        f"text = {_toml_str('I will look' + bad)}\n"
        "usage = { input_tokens = 100, output_tokens = 10 }\n"
        "[[turn.tool_calls]]\n"
        'name = "exec_command"\n'
        f"arguments = {{ command = {_toml_str('printf ' + repr(bad) + '; echo done')} }}\n"
        "[[turn.tool_calls]]\n"
        'name = "write_file"\n'
        f'arguments = {{ path = {_toml_str("f" + bad + ".txt")}, content = "x" }}\n'
        "[[turn.tool_calls]]\n"
        f"name = {_toml_str('no_such_tool' + bad)}\n"
        "arguments = {}\n\n"
        "[[turn]]\n"
        f"text = {_toml_str('Done' + bad + ' really')}\n"
        'stop_reason = "end_turn"\n'
        "usage = { input_tokens = 120, output_tokens = 5 }\n",
        encoding="utf-8",
    )
    return script


def _assert_inert(stream: str, where: str) -> None:
    m = CONTROL.search(stream)
    if m is not None:
        around = stream[max(0, m.start() - 40) : m.start() + 40]
        pytest.fail(f"{where} carries {m.group()!r} at {m.start()}: {around!r}")


def test_exec_progress_and_session_views_are_inert(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = _hostile_script(tmp_path)
    run = vtcode(
        ["-C", str(ws), "exec", "--script", str(script), "--session-id", "hostile", "go"], tmp_path
    )
    assert run.returncode in (0, 1), run.stderr
    assert "[TOOL" in run.stderr  # the progress renderer ran
    _assert_inert(run.stderr, "exec progress (stderr)")
    _assert_inert(run.stdout, "exec stdout")
    # The raw events still carry exactly what the model sent: inertness is a rendering rule.
    events = (ws / ".vtcode" / "sessions" / "hostile" / "events.jsonl").read_text()
    assert "\\u001b[2J" in events

    for args in (["sessions", "show", "hostile"], ["sessions", "list"], ["orient"]):
        out = vtcode(["-C", str(ws), *args], tmp_path)
        assert out.returncode == 0, out.stderr
        _assert_inert(out.stdout, " ".join(args) + " stdout")
        _assert_inert(out.stderr, " ".join(args) + " stderr")


@pytest.mark.parametrize("kind", ["notes", "decisions"])
def test_notes_and_orient_are_inert(tmp_path: Path, kind: str) -> None:
    text = f"remember {ESC}]52;c;QUFBQQ=={chr(7)}this{ESC}[2J and {ESC}]0;title{ESC}\\that\u202e"
    add = vtcode(["-C", str(tmp_path), kind, "add", text], tmp_path)
    assert add.returncode == 0, add.stderr
    for args in ([kind, "list"], ["orient"]):
        out = vtcode(["-C", str(tmp_path), *args], tmp_path)
        assert out.returncode == 0, out.stderr
        assert "remember this and that" in out.stdout
        _assert_inert(out.stdout + out.stderr, " ".join(args))


def test_error_messages_are_inert(tmp_path: Path) -> None:
    """A path or value quoted in an error message cannot carry escapes to the terminal."""
    name = f"missing{ESC}]52;c;QUFBQQ=={chr(7)}{ESC}[2J.jsonl"
    out = vtcode(["-C", str(tmp_path), "validate", name], tmp_path)
    assert out.returncode == 2
    assert "missing" in out.stderr
    _assert_inert(out.stderr + out.stdout, "validate error")


def test_validate_report_quotes_hostile_log_lines_inertly(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text(
        json.dumps({"type": f"thread.{ESC}[2Jstarted", "thread_id": f"t{ESC}]0;x{chr(7)}"})
        + "\n"
        + f"not json {ESC}[2J\x9b1m\n",
        encoding="utf-8",
    )
    out = vtcode(["-C", str(tmp_path), "validate", str(log)], tmp_path)
    assert out.returncode == 1
    _assert_inert(out.stdout + out.stderr, "validate report")


def test_command_output_for_the_model_keeps_carriage_returns() -> None:
    """exec_command's preview strips sequences with the same pattern but keeps CR/backspace."""
    from vtcode.tools.exec_output import strip_ansi

    assert strip_ansi(f"10%\r{ESC}[32m50%{ESC}[0m\r100%\n") == "10%\r50%\r100%\n"
    assert strip_ansi(f"a{ESC}]0;title{chr(7)}b\x9b1mc") == "abc"
    assert strip_ansi("plain\ttext") == "plain\ttext"
