"""A file too big to show whole: the lines the task names are shown, and a block written back
over them changes only them (loop/excerpts.py; docs/harness.md "Small models").

What a user relies on: the rest of the file is never lost (a 2,000-line file stays 2,000
lines, byte for byte outside the edit, its last newline and CRLF lines included), a block that
fits no excerpt is refused as before, and a file that changed since it was shown is not
overwritten with the old text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ScriptedReply, SSEServer
from tests.loop.test_text_tool_calls_cli import _config, chat_sse
from tests.loop.test_text_tool_calls_cli import _exec as exec_local
from vtcode.loop.excerpts import MAX_LINES_PER_FILE, Excerpt, find_excerpts, render, splice

F = "```"
TASK = "Change the value of REQUEST_TIMEOUT from 30 to 45 (the line `REQUEST_TIMEOUT = 30`)."


def _settings(n: int = 2000, at: int = 1374, decoy: int = 409) -> str:
    lines = [f"SVC_{i:04d}_TTL = {i % 97}" for i in range(n)]
    lines[at] = "REQUEST_TIMEOUT = 30"
    lines[decoy] = "UPSTREAM_REQUEST_TIMEOUT = 30"
    return "\n".join(lines) + "\n"


def _read(files: dict[str, str]) -> Any:
    return files.get


def test_the_lines_a_task_names_are_found_with_their_neighbours() -> None:
    text = _settings()
    (decoy, target) = find_excerpts(TASK, ["settings.py"], _read({"settings.py": text}))
    assert (target.start, target.total, len(target.lines)) == (1371, 2000, 7)
    assert target.lines[3] == "REQUEST_TIMEOUT = 30"
    assert decoy.lines[3] == "UPSTREAM_REQUEST_TIMEOUT = 30"  # a near namesake is shown too
    shown = render([target])
    assert shown.startswith("Lines of the big files that the task is about")
    assert shown.endswith("\n\nsettings.py\n```\n" + "\n".join(target.lines) + "\n```")
    assert "SVC_1371_TTL" in shown and "SVC_1378_TTL" not in shown
    assert render([]) == ""


def test_a_task_with_no_names_or_files_without_them_show_nothing() -> None:
    files = {"settings.py": _settings()}
    assert find_excerpts("Make the settings nicer.", ["settings.py"], _read(files)) == []
    assert find_excerpts("Change MAX_POOL to 3.", ["settings.py"], _read(files)) == []
    assert find_excerpts(TASK, ["gone.py"], _read(files)) == []


def test_an_excerpt_is_bounded_however_many_lines_match() -> None:
    text = "\n".join(["REQUEST_TIMEOUT = 1"] * 500) + "\n"
    found = find_excerpts(TASK, ["a.py"], _read({"a.py": text}))
    assert sum(len(e.lines) for e in found) == MAX_LINES_PER_FILE


def test_one_line_that_sets_the_name_replaces_only_that_line() -> None:
    text = _settings()
    found = find_excerpts(TASK, ["settings.py"], _read({"settings.py": text}))
    new = splice(found, "settings.py", text, "REQUEST_TIMEOUT = 45\n")
    assert new is not None
    before, after = text.split("\n"), new.split("\n")
    assert len(before) == len(after) and new.endswith("\n")
    assert [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b] == [1374]
    assert after[1374] == "REQUEST_TIMEOUT = 45" and after[409] == "UPSTREAM_REQUEST_TIMEOUT = 30"


def test_the_excerpt_written_back_changed_replaces_that_excerpt() -> None:
    text = _settings()
    found = find_excerpts(TASK, ["settings.py"], _read({"settings.py": text}))
    target = found[1]
    block = "\n".join(target.lines).replace("REQUEST_TIMEOUT = 30", "REQUEST_TIMEOUT = 45")
    new = splice(found, "settings.py", text, block + "\n")
    assert new == text.replace("\nREQUEST_TIMEOUT = 30\n", "\nREQUEST_TIMEOUT = 45\n")


@pytest.mark.parametrize(
    "block",
    [
        "REQUEST_TIMEOUT = 45\nNEW_KEY = 1\n",  # a name no excerpt line sets
        "x = 1\n" * 7,  # the excerpt's size, but none of its lines
        "print('hello')\n",  # sets nothing
        "\n".join(f"L{i} = 1" for i in range(30)) + "\n",  # a whole new file
        "TIMEOUT = 45\n",  # no line sets exactly this name
    ],
)
def test_a_block_that_fits_no_excerpt_is_not_spliced(block: str) -> None:
    text = _settings()
    found = find_excerpts(TASK, ["settings.py"], _read({"settings.py": text}))
    assert splice(found, "settings.py", text, block) is None


def test_a_file_changed_since_it_was_shown_is_not_spliced() -> None:
    text = _settings()
    found = find_excerpts(TASK, ["settings.py"], _read({"settings.py": text}))
    changed = text.replace("SVC_1373_TTL", "SVC_CHANGED")
    assert splice(found, "settings.py", changed, "REQUEST_TIMEOUT = 45\n") is None
    assert splice(found, "other.py", text, "REQUEST_TIMEOUT = 45\n") is None


def test_indentation_and_crlf_and_a_missing_last_newline_are_kept() -> None:
    text = "class C:\r\n    retries = 3\r\n    timeout_s = 30\r\n    name = 'x'"
    found = [Excerpt("c.py", 0, tuple(text.split("\n")), 4)]
    want = "class C:\r\n    retries = 3\r\n    timeout_s = 45\r\n    name = 'x'"
    assert splice(found, "c.py", text, "timeout_s = 45\r\n") == want
    assert splice(found, "c.py", text, "timeout_s = 45\n") == want  # a model writes "\n"
    block = "class C:\n    retries = 3\n    timeout_s = 45\n    name = 'x'\n"
    assert splice(found, "c.py", text, block) == want


# -- through the CLI, against a llama.cpp-shaped server -------------------------------------


def _exec(tmp_path: Path, task: str = TASK) -> tuple[int, list[dict[str, Any]], str]:
    return exec_local(tmp_path, task)


def _outputs(events: list[dict[str, Any]]) -> list[str]:
    return [e["item"]["output"] for e in events
            if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"]  # fmt: skip


def test_a_small_model_edits_one_line_of_a_big_file_and_the_rest_is_kept(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b and 1.5b answered "Done." on edit-big-file: the file was shown only by name."""
    _config(tmp_path, sse_server, "qwen0.5b")
    text = _settings()
    (tmp_path / "settings.py").write_text(text)
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(f"settings.py\n{F}\nREQUEST_TIMEOUT = 45\n{F}"))
    )
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, err = _exec(tmp_path)
    assert code == 0 and events[-1]["outcome_code"] == "success", err
    told = sse_server.requests[0].json()["messages"][-1]["content"]
    assert "settings.py\n```\nSVC_1371_TTL = 13\nSVC_1372_TTL = 14\nSVC_1373_TTL" in told
    assert (tmp_path / "settings.py").read_text() == text.replace(
        "\nREQUEST_TIMEOUT = 30\n", "\nREQUEST_TIMEOUT = 45\n"
    )
    (recovered,) = [
        e["item"] for e in events if e["type"] == "item.completed"
        and e["item"]["type"] == "harness" and e["item"]["event"] == "error_recovered"
    ]  # fmt: skip
    assert "block written over the lines of the file it was shown" in recovered["message"]
    (changes,) = [e["item"]["changes"] for e in events if e["type"] == "item.completed"
                  and e["item"]["type"] == "file_change"]  # fmt: skip
    assert changes == [{"path": "settings.py", "kind": "update"}]
    # The history sends the block back, not the 2,000-line file the write was spliced into
    # (qwen0.5b's next request was 13,500 tokens, past the task's time, 2026-12-07).
    second = json.dumps(sse_server.requests[1].json()["messages"])
    assert "REQUEST_TIMEOUT = 45" in second and "SVC_0000_TTL" not in second
    assert len(second) < 20_000


def test_a_block_over_a_big_file_that_fits_no_excerpt_is_still_refused(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    text = _settings()
    (tmp_path / "settings.py").write_text(text)
    whole = "REQUEST_TIMEOUT = 45\nDEBUG = True\nNAME = 'x'\nPORT = 1\nHOST = 'h'\n"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"settings.py\n{F}\n{whole}{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, _err = _exec(tmp_path)
    (out,) = _outputs(events)
    assert out.startswith("not written: settings.py exists")
    assert "write back the lines of it you were shown" in out
    assert (tmp_path / "settings.py").read_text() == text
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"


def test_a_file_a_rule_keeps_from_read_file_is_never_excerpted(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(
        tmp_path, sse_server, "qwen0.5b", extra='[permissions]\ndeny = ["read_file(settings.py)"]'
    )
    (tmp_path / "settings.py").write_text(_settings())
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("I cannot see it.")))
    _exec(tmp_path)
    told = sse_server.requests[0].json()["messages"][-1]["content"]
    assert "SVC_1373_TTL" not in told and "the task is about" not in told


def test_a_splice_keeps_long_lines_and_bytes_read_file_would_show_clipped(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The file is read exactly, not through read_file's view, which clips lines over 2,000
    characters: writing that view back would have cut them."""
    _config(tmp_path, sse_server, "qwen0.5b")
    long_line = "DATA = '" + "x" * 5_000 + "'"
    text = _settings().replace("SVC_0010_TTL = 10", long_line)
    (tmp_path / "settings.py").write_text(text)
    reply = f"settings.py\n{F}\nREQUEST_TIMEOUT = 45\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, _events, err = _exec(tmp_path)
    assert code == 0, err
    assert (tmp_path / "settings.py").read_text() == text.replace(
        "\nREQUEST_TIMEOUT = 30\n", "\nREQUEST_TIMEOUT = 45\n"
    )


@pytest.mark.parametrize("kind", ["symlink", "latin1", "binary"])
def test_a_link_or_a_file_that_is_not_utf8_text_is_never_excerpted(
    tmp_path: Path, sse_server: SSEServer, kind: str
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    body = _settings()
    if kind == "symlink":
        outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
        outside.write_text(body)
        (tmp_path / "settings.py").symlink_to(outside)
    elif kind == "latin1":
        (tmp_path / "settings.py").write_bytes(body.encode() + "# caf\xe9\n".encode("latin-1"))
    else:
        (tmp_path / "settings.py").write_bytes(body.encode() + b"\x00")
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("I cannot see it.")))
    _exec(tmp_path)
    told = sse_server.requests[0].json()["messages"][-1]["content"]
    assert "SVC_1373_TTL" not in told and "the task is about" not in told
