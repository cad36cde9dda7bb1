"""Files and commands a small model writes as fenced blocks (loop/file_blocks.py, issue 28).

What a user relies on: in a compact run (a small model), `path` then a fenced block writes that
file whole and a ```sh block runs its command, through the same tools, permissions and sandbox
as any call; a block cut off by the output cap never writes (it would truncate the file); a
full-profile run never takes fenced code for a write; a reply that only claims the work is done
("Done.") before anything changed is nudged, and never a success; a write of a file's own content
says it changed nothing. Event sequences are snapshots and validate against schemas/.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.conftest import ScriptedReply, SSEServer
from tests.exec_support import SESSION, canonical_snapshot, raw_events, vtcode
from tests.loop.test_compact_harness import _run
from tests.loop.test_text_tool_calls_cli import _config, chat_sse
from vtcode.loop.file_blocks import escaped_breaks_added, scan_file_blocks
from vtcode.loop.text_calls import MAX_CALLS, MAX_SCAN_CHARS

CATALOG = {"write_file", "exec_command", "read_file", "list_files"}
F = "```"


def _calls(text: str, *, ended: bool = False, catalog: set[str] = CATALOG) -> list[Any]:
    return [(c.name, json.loads(c.arguments)) for c in scan_file_blocks(text, catalog, ended=ended)]


def _exec(tmp_path: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    """`vtcode exec --json` with `prompt`, on the config `_config` wrote (the task's words
    matter: `_run`'s fixed "Fix it" names no file)."""
    return vtcode(
        ["exec", "--json", "--session-id", SESSION, "--provider", "local", prompt],
        tmp_path,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            f"hello.txt\n{F}\nHello\n{F}",
            [("write_file", {"path": "hello.txt", "content": "Hello\n"})],
        ),
        (
            f"**src/app.py**\n{F}python\nx = 1\n{F}\n",
            [("write_file", {"path": "src/app.py", "content": "x = 1\n"})],
        ),
        (f"### `a.txt`\n{F}\n1\n{F}", [("write_file", {"path": "a.txt", "content": "1\n"})]),
        (
            f"Here is the fixed sum_to.py:\n{F}py\ndef f(): ...\n{F}",
            [("write_file", {"path": "sum_to.py", "content": "def f(): ...\n"})],
        ),
        (
            f"./notes/b.md\n{F}\n# b\n{F}",
            [("write_file", {"path": "notes/b.md", "content": "# b\n"})],
        ),
        (
            f"{F}config.json\n{{}}\n{F}",
            [("write_file", {"path": "config.json", "content": "{}\n"})],
        ),
        (
            f"{F}sh\n$ python3 -m unittest\n{F}",
            [("exec_command", {"command": "python3 -m unittest"})],
        ),
        (f"{F}bash\nls\nwc -l a.txt\n{F}", [("exec_command", {"command": "ls\nwc -l a.txt"})]),
        (
            f"count.sh\n{F}sh\necho 1\n{F}",
            [("write_file", {"path": "count.sh", "content": "echo 1\n"})],
        ),
        # a file holding a fence: the model writes it in a longer fence
        (
            f"README.md\n````\nsee\n{F}\ncode\n{F}\n````",
            [("write_file", {"path": "README.md", "content": f"see\n{F}\ncode\n{F}\n"})],
        ),
        (
            f"a.txt\n{F}\n1\n{F}\n\nb.txt\n{F}\n2\n{F}",
            [
                ("write_file", {"path": "a.txt", "content": "1\n"}),
                ("write_file", {"path": "b.txt", "content": "2\n"}),
            ],
        ),
        # no path before it: code shown, not written
        (f"{F}python\nprint(1)\n{F}", []),
        (f"Here is the code:\n{F}\nx\n{F}", []),
        (f"Run this to see it work\n{F}\npython3 app.py\n{F}", []),
        (f"python\n{F}\nprint(1)\n{F}", []),  # a language name, not a file
        (f"https://example.com/x.py\n{F}\nx\n{F}", []),
        (f"-rf.txt\n{F}\nx\n{F}", []),
        (f"folder/\n{F}\nx\n{F}", []),
        # a sentence naming a file before a shell block: the command, not a write over the file
        (
            f"Run `python main.py`:\n{F}sh\npython main.py\n{F}",
            [("exec_command", {"command": "python main.py"})],
        ),
        (
            f"To check it, run main.py:\n{F}bash\npython3 main.py\n{F}",
            [("exec_command", {"command": "python3 main.py"})],
        ),
        (
            f"Here is build.sh:\n{F}sh\necho 1\n{F}",
            [("write_file", {"path": "build.sh", "content": "echo 1\n"})],
        ),
        # CRLF line ends: the block closes, the content is kept as written
        (
            f"a.txt\r\n{F}\r\n1\r\n{F}\r\n",
            [("write_file", {"path": "a.txt", "content": "1\r\n"})],
        ),
        # the opening fence written twice (qwen0.5b, 14 of 888 eval replies): one opening, and
        # the blocks after it pair up as written
        (
            f"README.md\n{F}\n{F}\n# inbox\n\nA tiny service.\n{F}",
            [("write_file", {"path": "README.md", "content": "# inbox\n\nA tiny service.\n"})],
        ),
        (
            f"a.txt\n{F}\n{F}\n1\n{F}\n\nb.txt\n{F}\n2\n{F}",
            [
                ("write_file", {"path": "a.txt", "content": "1\n"}),
                ("write_file", {"path": "b.txt", "content": "2\n"}),
            ],
        ),
        (f"{F}sh\n{F}\nls\n{F}", [("exec_command", {"command": "ls"})]),
        # ... but an empty file stays empty: nothing after it, a blank line, or a fence between
        (f"__init__.py\n{F}\n{F}\n", [("write_file", {"path": "__init__.py", "content": ""})]),
        (
            f"a.txt\n{F}\n{F}\n\nb.txt\n{F}\n2\n{F}",
            [
                ("write_file", {"path": "a.txt", "content": ""}),
                ("write_file", {"path": "b.txt", "content": "2\n"}),
            ],
        ),
        (
            f"e.txt\n{F}\n{F}\nNow run it:\n{F}sh\npython3 x.py\n{F}",
            [
                ("write_file", {"path": "e.txt", "content": ""}),
                ("exec_command", {"command": "python3 x.py"}),
            ],
        ),
        # ... or the next block's path, or a line introducing it, right after the empty block
        (
            f"a.txt\n{F}\n{F}\nb.txt\n{F}\n2\n{F}\n",
            [
                ("write_file", {"path": "a.txt", "content": ""}),
                ("write_file", {"path": "b.txt", "content": "2\n"}),
            ],
        ),
        (
            f"__init__.py\n{F}\n{F}\nAnd the main module:\nmain.py\n{F}\nprint(1)\n{F}\n",
            [
                ("write_file", {"path": "__init__.py", "content": ""}),
                ("write_file", {"path": "main.py", "content": "print(1)\n"}),
            ],
        ),
        # a doubled fence of four backticks around a file holding a fence of three
        (
            f"README.md\n````\n````\n# inbox\nRun:\n{F}sh\nmake\n{F}\n````",
            [
                (
                    "write_file",
                    {"path": "README.md", "content": f"# inbox\nRun:\n{F}sh\nmake\n{F}\n"},
                )
            ],
        ),
        # doubled, and the reply cut off before the closing fence: no block (it may be partial)
        (f"README.md\n{F}\n{F}\n# inbox\n\nYou rec", []),
        (f"{F}sh\n\n{F}", []),  # an empty command
        (f"a.txt\n{F}\nnever closed", []),  # open, and the reply may have been cut off
        ("No blocks at all.", []),
    ],
)
def test_what_a_block_is_read_as(text: str, expected: list[Any]) -> None:
    assert _calls(text) == expected


@pytest.mark.parametrize(
    ("line", "fence", "path"),
    [
        ("`my notes.txt`", F, "my notes.txt"),
        ('"my notes.txt"', F, "my notes.txt"),
        ("**`docs/a b/c d.md`**", F + "md", "docs/a b/c d.md"),
        ("### `my notes.txt`:", F, "my notes.txt"),
        ("my notes.txt", F, None),  # unquoted: a sentence ending in a file name
        ("`other file.txt`", F, None),  # a spaced name it was not shown
        ("`python3 app.py`", F, None),  # a command before its output, not a file
        ("`my notes.txt`", F + "sh", None),  # before a shell block: the command
        ("`run me.sh`", F + "sh", "run me.sh"),  # ... unless it is a shell script
        ("`my  notes.txt`", F, None),  # two spaces: not the name shown
    ],
)
def test_a_quoted_name_with_spaces_is_a_path_only_when_shown(
    line: str, fence: str, path: str | None
) -> None:
    """The lead-in shows a name with spaces in backticks (`harness_profile.inlined`); a block
    under that quoted name writes that file. Any other quoted spaced line is not a path."""
    known = {"my notes.txt", "docs/a b/c d.md", "run me.sh", "python3 app.py.bak"}
    found = scan_file_blocks(f"{line}\n{fence}\nx\n{F}", CATALOG, known=known)
    writes = [json.loads(c.arguments)["path"] for c in found if c.name == "write_file"]
    assert writes == ([path] if path else [])


def test_a_doubled_opening_left_open_is_written_once_and_only_when_the_reply_ended() -> None:
    cut = f"README.md\n{F}\n{F}\n# inbox\n\nYou rec"
    assert _calls(cut, ended=False) == []
    assert _calls(cut, ended=True) == [
        ("write_file", {"path": "README.md", "content": "# inbox\n\nYou rec\n"})
    ]
    # the path in the first fence's info: one write, not one per fence line
    assert _calls(f"{F}hello.py\n{F}\nprint(1)", ended=True) == [
        ("write_file", {"path": "hello.py", "content": "print(1)\n"})
    ]


def test_a_last_block_left_open_counts_only_when_the_reply_ended_on_its_own() -> None:
    """qwen0.5b often stops before the closing fence; a reply cut off by the output cap may end
    in the middle of a file, and writing that would truncate it."""
    text = f"a.txt\n{F}\n1\n{F}\n\nREADME.md\n{F}\n# x\nreceive"
    assert _calls(text, ended=True)[-1] == (
        "write_file",
        {"path": "README.md", "content": "# x\nreceive\n"},
    )
    assert _calls(text, ended=False) == [("write_file", {"path": "a.txt", "content": "1\n"})]


def test_blocks_need_their_tool_and_are_bounded() -> None:
    assert _calls(f"a.txt\n{F}\n1\n{F}", catalog={"exec_command"}) == []
    assert _calls(f"{F}sh\nls\n{F}", catalog={"write_file"}) == []
    many = "".join(f"f{i}.txt\n{F}\n{i}\n{F}\n" for i in range(MAX_CALLS + 5))
    assert len(_calls(many)) == MAX_CALLS


@pytest.mark.parametrize(
    "unit",
    [
        f"{F}a\n",  # openings that never close: each scanned to the end was quadratic (86 s)
        f"f.txt\r\n{F}\r\nx\r\n{F}\r\n",  # CRLF fences that never closed (40 s)
        f"{F}\n{F}`\n",  # fences of two lengths, neither closing the other
        f"{F}{' ' * MAX_SCAN_CHARS}`\n",  # one line of blanks, then a backtick (180 s)
        f"a.txt\n{F}\n{F}\nx\n",  # doubled openings, each looking ahead for its closing fence
        f"{F}a\n{F}\nx\n",
    ],
)
def test_scanning_an_adversarial_reply_is_linear(unit: str) -> None:
    """A reply of 256 KiB (the scan's cap) of fence lines takes milliseconds, never minutes: the
    scan runs in the run's own thread, before a cancel or a limit can stop it."""
    text = (unit * (MAX_SCAN_CHARS // len(unit) + 1))[:MAX_SCAN_CHARS]
    for ended in (False, True):
        start = time.perf_counter()
        scan_file_blocks(text, CATALOG, ended=ended)
        assert time.perf_counter() - start < 5.0


# ---- the real CLI against a llama.cpp-shaped server on 127.0.0.1 --------------------------


def _items(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == kind
    ]


def test_a_block_writes_the_file_and_a_shell_block_runs(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "sum_to.py").write_text("def sum_to(n):\n    return sum(range(1, n))\n")
    fixed = "def sum_to(n):\n    return sum(range(n + 1))\n"
    reply = f"sum_to.py\n{F}\n{fixed}{F}\n\n{F}sh\npython3 -c 'print(6)'\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed sum_to.py.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    assert (tmp_path / "sum_to.py").read_text() == "def sum_to(n):\n    return sum(range(n + 1))\n"
    outputs = [o["output"] for o in _items(events, "tool_output")]
    assert outputs == ["updated sum_to.py (44 bytes)", "6\n[exit code 0]"]
    (recovered,) = _items(events, "harness")
    assert "write_file, exec_command" in recovered["message"]
    assert "file block read as write_file" in recovered["message"]
    assert events[-1]["outcome_code"] == "success"
    history = sse_server.requests[1].json()["messages"]
    # the model sees its own blocks, then the two results in one user message
    assert history[-2] == {"role": "assistant", "content": reply}
    assert history[-1] == {"role": "user", "content": "\n".join(outputs)}
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_a_doubled_opening_fence_writes_the_file_and_says_so(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    # fix-typo, qwen0.5b (2026-12-07): read as an empty block, this emptied README.md
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "README.md").write_text("# inbox\n\nYou recieve mail.\n")
    reply = f"README.md\n{F}\n{F}\n# inbox\n\nYou receive mail.\n{F}\n\ncount.txt\n{F}\n1\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed the typo in README.md.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    assert (tmp_path / "README.md").read_text() == "# inbox\n\nYou receive mail.\n"
    assert (tmp_path / "count.txt").read_text() == "1\n"
    (recovered,) = _items(events, "harness")
    assert "a doubled opening fence read as one" in recovered["message"]
    assert events[-1]["outcome_code"] == "success"


def test_a_shown_file_with_spaces_in_its_name_is_written_by_its_quoted_name(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    """Through the CLI: the lead-in shows `my notes.txt` quoted, the model writes it back under
    that quoted name, and the file (not a file named after a sentence) changes."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "my notes.txt").write_text("helo\n")
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"`my notes.txt`\n{F}\nhello\n{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    assert events[-1]["outcome_code"] == "success"
    task = sse_server.requests[0].json()["messages"][-1]["content"]
    assert f"`my notes.txt`\n{F}\nhelo\n{F}" in task
    assert (tmp_path / "my notes.txt").read_text() == "hello\n"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "my notes.txt"
    ]
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_a_block_cut_off_by_the_output_cap_never_writes(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "big.py").write_text("A = 1\nB = 2\nC = 3\n")
    cut = chat_sse(f"big.py\n{F}\nA = 1\nB =", finish="length")
    sse_server.queue(ScriptedReply.sse_bytes(cut))
    code, events, err = _run(tmp_path)
    assert (tmp_path / "big.py").read_text() == "A = 1\nB = 2\nC = 3\n"
    assert _items(events, "tool_invocation") == []
    assert code != 0 and events[-1]["subtype"] != "success", err


def test_a_full_profile_run_never_takes_fenced_code_for_a_write(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b", '[agent.harness]\nprofile = "full"\n')
    sse_server.queue(
        ScriptedReply.sse_bytes(chat_sse(f"You could write:\n\nhello.txt\n{F}\nhi\n{F}"))
    )
    code, events, err = _run(tmp_path)
    assert code == 0, err
    assert not (tmp_path / "hello.txt").exists() and _items(events, "tool_invocation") == []


def test_done_with_nothing_changed_is_nudged_then_never_a_success(
    tmp_path: Path, sse_server: SSEServer, snapshot_json: SnapshotAssertion
) -> None:
    """qwen0.5b (bench, 2026-12-06): "Done." as its first reply, and the run said success; and
    a rewrite of README.md with its own content, then "Done.", on create-file."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "README.md").write_text("# scratch\n")
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"README.md\n{F}\n# scratch\n{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, err = _run(tmp_path)
    (nudge,) = [h for h in _items(events, "harness") if h["event"] == "continuation_started"]
    assert "fenced code block" in nudge["message"]
    (out,) = _items(events, "tool_output")
    assert out["output"].startswith("unchanged: README.md already holds exactly this content")
    assert _items(events, "file_change") == []
    done = events[-1]
    assert (done["subtype"], done["outcome_code"]) == (
        "error_during_execution",
        "unfinished_no_action",
    )
    assert code == 1, err
    assert canonical_snapshot(tmp_path) == snapshot_json


def test_a_block_outside_the_folder_is_refused_like_any_write(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"{outside}\n{F}\nx\n{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, _ = _run(tmp_path)
    assert not outside.exists()
    (call,) = _items(events, "tool_invocation")
    assert call["status"] == "failed"
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"


def test_a_reply_nested_past_the_json_parsers_depth_is_no_crash(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """A reply shaped as a call whose arguments nest thousands deep: Python's json raises
    RecursionError (not ValueError) past ~1,000 levels; the run must not die of it."""
    _config(tmp_path, sse_server, "qwen0.5b")
    deep = '{"name": "write_file", "arguments": ' + "[" * 5000
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(deep)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(deep)))
    code, events, err = _run(tmp_path)
    assert "RecursionError" not in err, err
    assert events[-1]["outcome_code"] == "malformed_tool_call", events[-1]  # nudged, then ended
    assert code == 1, err


def test_a_block_gets_no_more_than_write_file_would(tmp_path: Path, sse_server: SSEServer) -> None:
    """Each block is a write_file call: the policy files, `.vtcode/`, `..`, a symlink out of the
    folder and a FIFO are refused by the tool exactly as for a JSON call, and nothing changes."""
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "vtcode.toml").write_text("# workspace\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "out").symlink_to(outside)
    os.mkfifo(tmp_path / "pipe.txt")
    paths = [".git/config", "vtcode.toml", ".vtcode/state.json", "../x.txt", "out/x.txt"]
    reply = "".join(f"{p}\n{F}\n[core]\nfsmonitor = evil\n{F}\n\n" for p in [*paths, "pipe.txt"])
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, err = _run(tmp_path)
    calls = _items(events, "tool_invocation")
    assert [c["status"] for c in calls] == ["failed"] * 6, calls
    assert (tmp_path / ".git" / "config").read_text() == "[core]\n"
    assert (tmp_path / "vtcode.toml").read_text() == "# workspace\n"
    assert list(outside.iterdir()) == [] and not (tmp_path.parent / "x.txt").exists()
    assert not (tmp_path / ".vtcode" / "state.json").exists()
    assert stat.S_ISFIFO((tmp_path / "pipe.txt").lstat().st_mode)
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action", err


def test_a_call_shaped_file_in_a_block_is_written_not_run(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """The JSON inside a path's block is that file's content: a compact model rewrites the files
    it is shown, and one holding a call-shaped object (a fixture, a task list) ran as a command
    instead of being written when calls written as JSON were looked for first."""
    _config(tmp_path, sse_server, "qwen0.5b")
    content = '{"name": "lint", "arguments": {"command": "touch pwned"}}\n'
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"tasks.json\n{F}json\n{content}{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Wrote tasks.json.")))
    code, events, err = _run(tmp_path)
    assert not (tmp_path / "pwned").exists()
    assert (tmp_path / "tasks.json").read_text() == content
    assert [c["tool_name"] for c in _items(events, "tool_invocation")] == ["write_file"]
    assert code == 0, err


def test_a_block_never_overwrites_a_file_the_model_has_not_seen_whole(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, edit-big-file (eval, 2026-12-06): told only the name of a 2,000-line
    settings.py (too big to show), it wrote a 40-line settings.py over it. A block may write a
    new file, a file shown whole, or one it wrote itself; an existing file it has not seen is
    refused with how to change it instead, and a command can still change it."""
    _config(tmp_path, sse_server, "qwen0.5b")
    big = "".join(f"SETTING_{i} = {i}\n" for i in range(2000))
    (tmp_path / "settings.py").write_text(big)
    (tmp_path / "small.txt").write_text("old\n")
    first = (
        f"settings.py\n{F}\nSETTING_7 = 8\n{F}\n\nsmall.txt\n{F}\nnew\n{F}\n\nnew.txt\n{F}\na\n{F}"
    )
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(first)))
    sed = (
        f"new.txt\n{F}\nb\n{F}\n\n{F}sh\nsed -i 's/^SETTING_7 = 7$/SETTING_7 = 8/' settings.py\n{F}"
    )
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(sed)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Changed SETTING_7 to 8.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    outputs = [o["output"] for o in _items(events, "tool_output")]
    assert outputs[0].startswith("not written: settings.py exists (")
    assert "sed -i" in outputs[0] and outputs[1:3] == [
        "updated small.txt (4 bytes)",
        "created new.txt (2 bytes)",
    ]
    assert outputs[3] == "updated new.txt (2 bytes)"  # its own file: written again
    assert (tmp_path / "small.txt").read_text() == "new\n"
    assert (tmp_path / "new.txt").read_text() == "b\n"
    assert (tmp_path / "settings.py").read_text() == big.replace(
        "SETTING_7 = 7\n", "SETTING_7 = 8\n"
    )


@pytest.mark.parametrize(
    "first",
    [
        # protected-test (vtcode eval, 2026-12-06): the fix, in a block with no path before it
        f"Here's the corrected function:\n\n{F}python\ndef double(x):\n    return 2 * x\n{F}\n",
        # failing-test: the task's own words back
        "Fix it, please. The function double in calc.py is wrong; make it return twice x.",
    ],
)
def test_code_without_a_path_or_the_task_echoed_is_nudged_not_a_success(
    tmp_path: Path, sse_server: SSEServer, first: str
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    (tmp_path / "calc.py").write_text("def double(x):\n    return x\n")
    fixed = f"calc.py\n{F}\ndef double(x):\n    return 2 * x\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(first)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(fixed)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Fixed double in calc.py.")))
    proc = _exec(tmp_path, "The function double in calc.py is wrong; make it return twice x.")
    events = raw_events(proc.stdout)
    (nudge,) = [h for h in _items(events, "harness") if h["event"] == "continuation_started"]
    assert "fenced code block" in nudge["message"]
    assert (tmp_path / "calc.py").read_text() == "def double(x):\n    return 2 * x\n"
    assert proc.returncode == 0 and events[-1]["outcome_code"] == "success", proc.stderr


def test_after_the_nudge_code_without_a_path_again_is_never_a_success(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    _config(tmp_path, sse_server, "qwen0.5b")
    code_only = f"{F}python\nprint(1)\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(code_only)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(code_only)))
    code, events, err = _run(tmp_path)
    assert events[-1]["outcome_code"] == "unfinished_no_action" and code == 1, err


def test_the_examples_own_files_copied_word_for_word_are_not_written(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, fix-off-by-one (vtcode eval, 2026-12-06): it wrote the example's greeting.txt
    and count.txt into the task's folder, and the run was a success. Those writes are refused,
    and with nothing else done the run is not a success. The same names with other content,
    or files that are really there, are the task's own."""
    _config(tmp_path, sse_server, "qwen0.5b")
    # and an empty greeting.txt (qwen0.5b, edit-big-file, 2026-12-07)
    copied = f"greeting.txt\n{F}\nHelo, world\n{F}\n\ncount.txt\n{F}\n2\n{F}\n\nhello.txt\n{F}\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(copied)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Done.")))
    code, events, _err = _run(tmp_path)
    outputs = [o["output"] for o in _items(events, "tool_output")]
    assert len(outputs) == 3 and all("is the example's file" in o for o in outputs)
    assert not (tmp_path / "greeting.txt").exists() and not (tmp_path / "count.txt").exists()
    assert code == 1 and events[-1]["outcome_code"] == "unfinished_no_action"


def test_a_task_file_named_like_the_example_is_written(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """Other content under an example's name, or the example's content in a file the task
    names, is the task's own work."""
    _config(tmp_path, sse_server, "qwen0.5b")
    reply = f"count.txt\n{F}\n3\n{F}\n\nhello.txt\n{F}\nHello\n{F}"
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(reply)))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("Wrote both.")))
    proc = _exec(tmp_path, "Write Hello into hello.txt and 3 into count.txt")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "count.txt").read_text() == "3\n"
    assert (tmp_path / "hello.txt").read_text() == "Hello\n"


def test_a_question_answered_with_code_is_a_success_not_nudged(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """A compact run nudges a first answer with code and no path (nothing written); a task that
    only asks a question is answered exactly so, and must end a success with one request."""
    _config(tmp_path, sse_server, "qwen0.5b")
    answer = f'Use os.ReadFile:\n\n{F}go\ndata, err := os.ReadFile("a.txt")\n{F}'
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(answer)))
    proc = _exec(tmp_path, "How do I read a whole file in Go?")
    events = raw_events(proc.stdout)
    assert [h for h in _items(events, "harness") if h["event"] == "continuation_started"] == []
    assert proc.returncode == 0 and events[-1]["outcome_code"] == "success", proc.stderr
    assert len(sse_server.requests) == 1


def test_a_file_written_as_a_json_string_body_is_refused_and_kept(
    tmp_path: Path, sse_server: SSEServer
) -> None:
    """qwen0.5b, protected-test (eval, 2026-12-07): it wrote price.py with its line breaks as
    \\n escapes; the next request showed the file so, and each turn escaped it once more
    until the task's time ran out. Refused, the file stays whole, and a block written
    properly next is written."""
    _config(tmp_path, sse_server, "qwen0.5b")
    price = 'def format_price(amount):\n    """1234.5 -> "$1,234.50"."""\n    return str(amount)\n'
    (tmp_path / "price.py").write_text(price)
    escaped = (
        'def format_price(amount):\\n    \\"\\"\\"1234.5 -> \\"$1,234.50\\".\\"\\"\\"\\n'
        '    return f\\"${amount:,.2f}\\"\\n\\ndef other():\\n    pass\\n'
    )
    fixed = 'def format_price(amount):\n    """1234.5 -> "$1,234.50"."""\n'
    fixed += '    return f"${amount:,.2f}"\n'
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"price.py\n{F}\n{escaped}\n{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse(f"price.py\n{F}\n{fixed}{F}")))
    sse_server.queue(ScriptedReply.sse_bytes(chat_sse("price.py formats with commas now.")))
    code, events, err = _run(tmp_path)
    assert code == 0, err
    outputs = [o["output"] for o in _items(events, "tool_output")]
    assert outputs[0].startswith("not written: price.py has real line breaks, and this text ")
    assert outputs[1] == f"updated price.py ({len(fixed)} bytes)"
    assert (tmp_path / "price.py").read_text() == fixed
    # what the second request showed of price.py was the file, not the escaped text
    second = json.dumps(sse_server.requests[1].json()["messages"])
    assert "return str(amount)" in second


@pytest.mark.parametrize(
    ("old", "new", "refused"),
    [
        ("a = 1\n", "a = 1\\nb = 2\\n\\ndef f():\\n    return 1\\n", True),
        ("x\ny\nz\n", "x\\ny\\nz\\n\\n\\n\\n", True),
        # strings that hold escapes, kept or added by one or two: a file's own content
        ('s = "a\\n\\nb"\nt = "c\\n\\nd"\n', 's = "a\\n\\nb"\nt = "c\\n\\nd"\nu = 3\n', False),
        ("a = 1\n", 'a = 1\nhelp = "usage:\\n    x\\n    y"\n', False),
        ("a = 1\n", "a = 2\n", False),
        # escaped strings added with the lines that hold them: code, not an escaped file
        (
            "import pathlib\n",
            'import pathlib\n\npathlib.Path("f.py").write_text(\n'
            '    "def f():\\n    return 1\\n\\nprint(f())\\n"\n)\n',
            False,
        ),
        (
            "p = argparse.ArgumentParser()\n",
            "p = argparse.ArgumentParser(\n"
            '    epilog="Examples:\\n\\n    tool a\\n    tool b\\n"\n)\n',
            False,
        ),
    ],
)
def test_which_writes_add_escaped_line_breaks(old: str, new: str, refused: bool) -> None:
    assert escaped_breaks_added(old, new) is refused


@pytest.mark.parametrize(
    ("task", "question"),
    [
        ("How do I read a file in Go?", True),
        ("sum.py has a bug. What is it?", True),
        ("Explain the code in app.py.", True),
        ("Can you explain this?", True),
        ("What would it take to fix this?", True),
        ("Fix the bug. What did you change?", False),
        ("What does main.py do? Write the answer into a.txt.", False),
        ("Explain app.py and fix its bug.", False),
        ("Describe the bug, then fix it.", False),
        ("Can you fix the bug?", False),
        ("Could you please write tests?", False),
        ("The tests fail.", False),
        ("", False),
    ],
)
def test_which_tasks_only_ask_a_question(task: str, question: bool) -> None:
    from vtcode.loop.task_text import asks_only_a_question

    assert asks_only_a_question(task) is question


@pytest.mark.parametrize(
    ("reply", "known", "path"),
    [
        # qwen0.5b echoing the missing-file nudge (create-file, 2026-12-07)
        ("the whole content in a fenced code block: hello.txt\n```\nHi\n```", {"hello.txt"},
         "hello.txt"),
        ("the whole content in a fenced code block: hello.txt\n```\nHi\n```", set(), None),
        ("Here it is: a b.txt\n```\nHi\n```", {"a b.txt"}, None),  # a spaced name: quoted only
        ("Run it: main.py\n```sh\npython3 main.py\n```", {"main.py"}, None),  # a command
    ],
)  # fmt: skip
def test_a_known_file_after_a_sentences_last_colon_is_the_blocks_path(
    reply: str, known: set[str], path: str | None
) -> None:
    from vtcode.loop.file_blocks import scan_file_blocks

    calls = scan_file_blocks(reply, {"write_file", "exec_command"}, ended=True, known=known)
    writes = [json.loads(c.arguments)["path"] for c in calls if c.name == "write_file"]
    assert writes == ([] if path is None else [path])
