"""The replay provider and its script format: what scripted runs rely on.

Scripts must stream exactly what they say (chunked deltas, tool calls with stable ids, usage),
fail exactly where they say, and every mistake in a script must be reported with its location.
"""

from __future__ import annotations

import json
import threading
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from tests.exec_support import vtcode
from vtcode import schemas
from vtcode.config.model import VtcodeConfig
from vtcode.errors import ExitCode, UsageError
from vtcode.events.types import Usage
from vtcode.jsontypes import encode
from vtcode.messages import (
    Message,
    ModelRequest,
    ReasoningDelta,
    ResponseCompleted,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
)
from vtcode.providers.base import FailureKind, Provider, ProviderError, ProviderInterrupted
from vtcode.providers.registry import make_provider
from vtcode.providers.replay import ReplayProvider, estimate_tokens
from vtcode.providers.script import (
    ReplayScript,
    ReplayScriptError,
    ScriptToolCall,
    ScriptTurn,
    ScriptUsage,
    load_script,
    parse_script,
    resolve_script,
    scripts_dir,
    shipped_scripts,
)
from vtcode.providers.script_write import dump_script, write_script

USER = Message(role="user", content="list the files please")


def request(*messages: Message, purpose: str = "turn") -> ModelRequest:
    return ModelRequest(
        model="replay-1",
        messages=messages or (USER,),
        purpose=purpose,  # type: ignore[arg-type]
    )


def provider(text: str) -> ReplayProvider:
    return ReplayProvider(parse_script(text, source="t.toml"), source="t.toml")


def events_json(events: list[StreamEvent]) -> list[dict[str, Any]]:
    return [{"kind": type(e).__name__, **encode(e)} for e in events]


def joined_text(events: Iterable[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def script_error(text: str) -> ReplayScriptError:
    with pytest.raises(ReplayScriptError) as info:
        parse_script(text, source="s.toml")
    assert info.value.exit_code is ExitCode.USAGE
    return info.value


# ---- shipped scripts ----------------------------------------------------------------------


def test_at_least_six_shipped_scripts_besides_scenarios() -> None:
    mine = [n for n in shipped_scripts() if not n.startswith("scenario-")]
    assert len(mine) >= 6
    assert "default" in mine


@pytest.mark.parametrize("name", shipped_scripts())
def test_shipped_script_is_valid_and_round_trips(name: str) -> None:
    path = resolve_script(name)
    script = load_script(path)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    errors = list(schemas.reference_validator("replay-script").iter_errors(data))
    assert errors == []
    assert parse_script(dump_script(script)) == script


# ---- streaming ----------------------------------------------------------------------------


def test_streams_chunked_reasoning_text_and_tool_calls(snapshot_json: SnapshotAssertion) -> None:
    p = ReplayProvider.from_file(scripts_dir() / "streaming-chunks.toml")
    first = list(p.stream(request()))
    assert first[0] == ReasoningDelta("Two i")
    texts = [e.text for e in first if isinstance(e, TextDelta)]
    assert texts == ["Readi", "ng bo", "th fi", "les a", "t onc", "e."]
    heads = [e for e in first if isinstance(e, ToolCallDelta) and e.id is not None]
    assert [(h.index, h.id, h.name) for h in heads] == [
        (0, "call_1", "read_file"),
        (1, "call_b", "read_file"),
    ]
    args0 = "".join(e.arguments for e in first if isinstance(e, ToolCallDelta) and e.index == 0)
    assert args0 == '{"path":"a.txt"}'
    assert isinstance(first[-1], ResponseCompleted)
    assert first[-1].stop_reason == "tool_calls"
    second = list(p.stream(request()))
    assert events_json(first) == snapshot_json(name="first")
    assert events_json(second) == snapshot_json(name="second")


def test_default_chunk_size_is_24_characters() -> None:
    text = "x" * 50
    events = list(provider(f'[[turn]]\ntext = "{text}"\n').stream(request()))
    assert [len(e.text) for e in events if isinstance(e, TextDelta)] == [24, 24, 2]
    assert events[-1] == ResponseCompleted(
        "end_turn",
        events[-1].usage,  # type: ignore[union-attr]
    )


def test_tool_call_ids_default_to_a_script_wide_counter() -> None:
    p = provider(
        '[[turn]]\n[[turn.tool_calls]]\nname = "a"\n[[turn.tool_calls]]\nname = "b"\n'
        '[[turn]]\n[[turn.tool_calls]]\nname = "c"\narguments = { k = [1, 2.5, true] }\n'
    )
    ids = [[e.id for e in p.stream(request()) if isinstance(e, ToolCallDelta) and e.id]]
    last = list(p.stream(request()))
    ids.append([e.id for e in last if isinstance(e, ToolCallDelta) and e.id])
    assert ids == [["call_1", "call_2"], ["call_3"]]
    assert last[0] == ToolCallDelta(0, id="call_3", name="c", arguments='{"k":[1,2.5,true]}')


def test_arguments_json_is_sent_verbatim_even_when_invalid() -> None:
    p = ReplayProvider.from_file(scripts_dir() / "invalid-tool-args.toml")
    events = list(p.stream(request()))
    raw = "".join(e.arguments for e in events if isinstance(e, ToolCallDelta))
    assert raw == '{"path": "README.md"'
    with pytest.raises(ValueError):
        ToolCall(id="x", name="read_file", arguments=raw).parsed_arguments()


def test_usage_given_or_estimated_deterministically() -> None:
    p = provider(
        '[[turn]]\ntext = "abcdefgh"\nusage = { input_tokens = 7, cached_input_tokens = 3 }\n'
        '[[turn]]\ntext = "abcdefghi"\n'
    )
    req = request(Message(role="user", content="y" * 40))
    first = list(p.stream(req))[-1]
    assert isinstance(first, ResponseCompleted)
    assert (first.usage.input_tokens, first.usage.cached_input_tokens) == (7, 3)
    assert first.usage.output_tokens == 2  # estimated: ceil(8 bytes / 4)
    second = list(p.stream(req))[-1]
    assert isinstance(second, ResponseCompleted)
    assert second.usage.output_tokens == 3
    assert second.usage.input_tokens == estimate_tokens(40 + len("user"))
    assert list(provider('[[turn]]\ntext = "abcdefghi"\n').stream(req))[-1] == second


def test_stop_reason_defaults_and_explicit() -> None:
    p = provider(
        '[[turn]]\ntext = "a"\n'
        '[[turn]]\n[[turn.tool_calls]]\nname = "t"\n'
        '[[turn]]\ntext = "b"\nstop_reason = "max_tokens"\n'
    )
    stops = []
    for _ in range(3):
        last = list(p.stream(request()))[-1]
        assert isinstance(last, ResponseCompleted)
        stops.append(last.stop_reason)
    assert stops == ["end_turn", "tool_calls", "max_tokens"]


def test_provider_facts_from_the_script() -> None:
    p = ReplayProvider.from_file(scripts_dir() / "context-overflow.toml")
    assert isinstance(p, Provider)
    assert (p.name, p.model, p.context_window) == ("replay", "replay-small", 4000)
    assert p.pricing is not None
    assert p.pricing.cached_input_per_mtok == 0.1
    assert provider('[[turn]]\ntext = "a"\n').pricing is None
    assert provider('[[turn]]\ntext = "a"\n').model == "replay-1"
    assert ReplayProvider(ReplayScript(), model="m").model == "m"


# ---- failures -----------------------------------------------------------------------------


def test_exhaustion_is_a_fatal_error_naming_the_turn_count() -> None:
    p = provider('[[turn]]\ntext = "only"\n')
    list(p.stream(request()))
    with pytest.raises(ProviderError) as info:
        list(p.stream(request()))
    assert info.value.kind is FailureKind.FATAL
    assert info.value.message.startswith("replay script exhausted after 1 turns")
    empty = ReplayProvider(ReplayScript())
    with pytest.raises(ProviderError, match="exhausted after 0 turns"):
        list(empty.stream(request()))


@pytest.mark.parametrize("kind", ["transient", "fatal", "context_length"])
def test_injected_failures_have_their_kind_and_message(kind: str) -> None:
    p = provider(f'[[turn]]\nfail = "{kind}"\nmessage = "boom"\n[[turn]]\ntext = "after"\n')
    with pytest.raises(ProviderError) as info:
        list(p.stream(request()))
    assert info.value.kind is FailureKind(kind)
    assert info.value.message == "replay turn 1 (t.toml): boom"
    assert [e.text for e in p.stream(request()) if isinstance(e, TextDelta)] == ["after"]


def test_injected_failure_without_message_says_it_was_injected() -> None:
    with pytest.raises(ProviderError, match="injected transient provider failure"):
        list(provider('[[turn]]\nfail = "transient"\n').stream(request()))


def test_mid_stream_failure_yields_deltas_first() -> None:
    p = ReplayProvider.from_file(scripts_dir() / "mid-stream-failure.toml")
    got: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        got.extend(p.stream(request()))
    assert info.value.kind is FailureKind.TRANSIENT
    assert "".join(e.text for e in got if isinstance(e, TextDelta)).endswith("half way thro")
    assert not any(isinstance(e, ResponseCompleted) for e in got)


def test_enforced_context_window_rejects_without_consuming_the_turn() -> None:
    p = provider(
        '[provider]\ncontext_window = 10\nenforce_context_window = true\n[[turn]]\ntext = "fits"\n'
    )
    with pytest.raises(ProviderError) as info:
        list(p.stream(request(Message(role="user", content="z" * 100))))
    assert info.value.kind is FailureKind.CONTEXT_LENGTH
    assert p.turns_consumed == 0
    assert joined_text(p.stream(request(Message(role="user", content="z")))) == "fits"


def test_delay_is_interruptible_and_syncs_on_a_signal_not_a_sleep() -> None:
    p = ReplayProvider.from_file(scripts_dir() / "slow-turn.toml")
    started = threading.Event()
    outcome: list[BaseException] = []

    def consume() -> None:
        stream = p.stream(request())
        started.set()
        try:
            list(stream)
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=consume)
    t.start()
    assert started.wait(5)
    p.interrupt()
    t.join(5)
    assert not t.is_alive()
    assert len(outcome) == 1
    assert isinstance(outcome[0], ProviderInterrupted)


# ---- summaries and expectations -----------------------------------------------------------


def test_summaries_are_consumed_by_summary_requests_only() -> None:
    p = ReplayProvider.from_file(scripts_dir() / "context-overflow.toml")
    summary = list(p.stream(request(purpose="summary")))
    assert "".join(e.text for e in summary if isinstance(e, TextDelta)).startswith("Goal:")
    assert p.turns_consumed == 0
    with pytest.raises(ProviderError) as info:
        list(p.stream(request(purpose="summary")))
    assert info.value.kind is FailureKind.FATAL
    assert info.value.message == "replay script has no [[summary]] left"
    assert joined_text(p.stream(request())) == "Reading a lot of context."


def test_expectations_pass_when_the_real_tool_output_matches() -> None:
    p = ReplayProvider.from_file(scripts_dir() / "list-files.toml")
    list(p.stream(request()))
    history = (
        USER,
        Message(role="assistant", tool_calls=(ToolCall(id="call_1", name="x", arguments="{}"),)),
        Message(role="tool", tool_call_id="call_1", content="total 8\ndrwx------ ."),
    )
    assert joined_text(p.stream(request(*history))) == "Done: the listing is above."


def test_expectations_fail_fatally_naming_the_expectation() -> None:
    p = provider(
        '[[turn]]\nexpect_last_tool_output_contains = "total"\ntext = "a"\n'
        '[[turn]]\nexpect_user_contains = "steer"\ntext = "b"\n'
    )
    tool = Message(role="tool", tool_call_id="c", content="ls: cannot access: No such file")
    with pytest.raises(ProviderError) as info:
        list(p.stream(request(USER, tool)))
    assert info.value.kind is FailureKind.FATAL
    assert info.value.message == (
        "replay turn 1 (t.toml): expect_last_tool_output_contains 'total' not found in "
        "the last tool output: 'ls: cannot access: No such file'"
    )
    with pytest.raises(ProviderError, match="expect_user_contains 'steer' not found"):
        list(p.stream(request()))


def test_expectation_without_any_tool_output_says_so() -> None:
    p = provider('[[turn]]\nexpect_last_tool_output_contains = "x"\n')
    with pytest.raises(ProviderError, match="no tool output yet"):
        list(p.stream(request()))


# ---- located script errors ----------------------------------------------------------------


def test_toml_syntax_error_is_located() -> None:
    err = script_error('[[turn]]\ntext = "unterminated\n')
    assert err.location == "s.toml:2:21"
    assert err.message.startswith("invalid TOML:")


def test_unknown_key_is_located_with_did_you_mean() -> None:
    err = script_error('[[turn]]\ntext = "a"\n\n[[turn]]\n  stop_reasn = "end_turn"\n')
    assert err.location == "s.toml:5:3"
    assert err.message == "turn[1].stop_reasn: unknown key"
    assert err.hint == "did you mean 'stop_reason'?"
    assert "hint: did you mean" in str(err)


def test_wrong_type_inside_an_inline_table_is_located() -> None:
    err = script_error('[[turn]]\ntext = "a"\nusage = { input_tokens = 1, output_tokens = "x" }\n')
    assert err.location == "s.toml:3:29"
    assert err.message == "turn[0].usage.output_tokens: expected an integer, got string"


def test_nested_tool_call_errors_are_located() -> None:
    text = (
        '[[turn]]\ntext = "a"\n'
        '[[turn.tool_calls]]\nname = "ok"\n'
        '[[turn.tool_calls]]\nname = "t"\narguments = { a = 1 }\narguments_json = "{}"\n'
    )
    err = script_error(text)
    assert err.location == "s.toml:8:1"
    assert err.message == (
        "turn[0].tool_calls[1].arguments_json: give either `arguments` or `arguments_json`"
    )


@pytest.mark.parametrize(
    ("text", "location", "message"),
    [
        ('[[turn]]\nfail = "sometimes"\n', "s.toml:2:1", "turn[0].fail: expected one of"),
        ("[[turn]]\nchunk_size = 0\n", "s.toml:2:1", "turn[0].chunk_size: 0 is below"),
        ("[provider]\ncontext_window = 1.5\n", "s.toml:2:1", "provider.context_window: expected"),
        (
            "[provider]\npricing = { input_per_mtok = 1 }\n",
            "s.toml:2:1",
            "provider.pricing: missing required field 'output_per_mtok'",
        ),
        (
            '[[turn]]\nfail = "fatal"\ntext = "never streamed"\n',
            "s.toml:2:1",
            "turn[0].fail: a failing turn with text",
        ),
        ('[[turn]]\nmessage = "x"\n', "s.toml:2:1", "turn[0].message: only meaningful"),
        (
            '[[turn]]\n[[turn.tool_calls]]\nname = "t"\narguments = { when = 1979-05-27 }\n',
            "s.toml:4:15",
            "turn[0].tool_calls[0].arguments.when: a TOML date is not a JSON value",
        ),
        (
            '[[turn]]\n[[turn.tool_calls]]\nname = "t"\nid = "a"\n'
            '[[turn.tool_calls]]\nname = "u"\nid = "a"\n',
            "s.toml:7:1",
            "turn[0].tool_calls[1].id: duplicate tool call id 'a'",
        ),
        ("turn = 3\n", "s.toml:1:1", "turn: expected an array"),
        ('[[summary]]\ntext = """\nmulti\n"""\nbogus = 1\n', "s.toml:5:1", "summary[0].bogus"),
    ],
)
def test_semantic_errors_are_located(text: str, location: str, message: str) -> None:
    err = script_error(text)
    assert err.location == location
    assert err.message.startswith(message)


def test_unreadable_scripts_are_usage_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'[[turn]]\ntext = "\xff"\n')
    with pytest.raises(ReplayScriptError, match="not UTF-8"):
        load_script(bad)
    with pytest.raises(ReplayScriptError, match="cannot read replay script"):
        load_script(tmp_path / "missing.toml")
    with pytest.raises(ReplayScriptError) as info:
        resolve_script("no-such-script", workspace=tmp_path)
    assert "shipped scripts:" in (info.value.hint or "")
    assert "default" in (info.value.hint or "")


def test_script_lookup_path_workspace_and_bare_name(tmp_path: Path) -> None:
    (tmp_path / "mine.toml").write_text('[[turn]]\ntext = "mine"\n', encoding="utf-8")
    assert resolve_script("mine.toml", workspace=tmp_path) == tmp_path / "mine.toml"
    assert resolve_script(str(tmp_path / "mine.toml")) == tmp_path / "mine.toml"
    assert resolve_script("list-files") == scripts_dir() / "list-files.toml"
    assert (
        resolve_script("list-files.toml", workspace=tmp_path) == scripts_dir() / "list-files.toml"
    )
    assert resolve_script(None) == scripts_dir() / "default.toml"


# ---- registry -----------------------------------------------------------------------------


def test_make_provider_replay_with_script_and_model(tmp_path: Path) -> None:
    p = make_provider(
        "replay", config=VtcodeConfig(), model="m-9", script="list-files", workspace=tmp_path
    )
    assert (p.name, p.model) == ("replay", "m-9")
    default = make_provider(
        "replay", config=VtcodeConfig(), model=None, script=None, workspace=tmp_path
    )
    assert joined_text(default.stream(request())).startswith("This is the replay provider")


def test_make_provider_unknown_name_lists_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as info:
        make_provider("gemini", config=VtcodeConfig(), model=None, script=None, workspace=tmp_path)
    assert info.value.exit_code is ExitCode.USAGE
    assert info.value.message == "unknown provider 'gemini'"
    assert "replay" in (info.value.hint or "")


# ---- writing scripts ----------------------------------------------------------------------

_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_json_leaf = st.one_of(st.booleans(), st.integers(-(2**40), 2**40), _text)
_args = st.dictionaries(_text, st.one_of(_json_leaf, st.lists(_json_leaf, max_size=3)), max_size=3)
_turns = st.builds(
    ScriptTurn,
    text=st.none() | _text,
    reasoning=st.none() | _text,
    stop_reason=st.none() | st.sampled_from(["end_turn", "max_tokens", "pause_turn"]),
    usage=st.none() | st.builds(ScriptUsage, input_tokens=st.none() | st.integers(0, 10**9)),
    tool_calls=st.lists(
        st.builds(
            ScriptToolCall,
            name=st.text("abc_", min_size=1, max_size=8),
            arguments=st.none() | _args,
        ),
        max_size=2,
    ),
    chunk_size=st.none() | st.integers(1, 100),
)


@settings(max_examples=60, deadline=None)
@given(st.builds(ReplayScript, turn=st.lists(_turns, max_size=3)))
def test_dump_then_parse_is_identity(script: ReplayScript) -> None:
    assert parse_script(dump_script(script)) == script


def test_write_script_is_atomic_and_readable(tmp_path: Path) -> None:
    script = ReplayScript(turn=[ScriptTurn(text="hi\nthere", stop_reason="end_turn")])
    out = tmp_path / "rec.toml"
    write_script(out, script, header="recorded by a test")
    assert out.read_text(encoding="utf-8").startswith("# recorded by a test\n")
    assert load_script(out) == script
    assert [p.name for p in tmp_path.iterdir()] == ["rec.toml"]


def test_tool_spec_sizes_count_toward_the_estimate() -> None:
    spec = ToolSpec(name="read_file", description="Read a file", parameters={"type": "object"})
    bare = request()
    with_tools = ModelRequest(model="m", messages=bare.messages, tools=(spec,))
    a = list(provider('[[turn]]\ntext = "a"\n').stream(bare))[-1]
    b = list(provider('[[turn]]\ntext = "a"\n').stream(with_tools))[-1]
    assert isinstance(a, ResponseCompleted) and isinstance(b, ResponseCompleted)
    assert b.usage.input_tokens > a.usage.input_tokens


def _documented_example() -> str:
    """The replay-format block of docs/architecture.md, verbatim (the doc and the test cannot
    drift: the page says this test runs it)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text("utf-8")
    section = page.split("## The replay script format", 1)[1]
    return section.split("```toml\n", 1)[1].split("```", 1)[0]


def test_the_documented_core_format_keeps_working() -> None:
    """docs/architecture.md's example, verbatim: the core every version must accept."""
    p = provider(_documented_example())
    assert (p.model, p.context_window) == ("replay-1", 200000)
    first = list(p.stream(request()))
    assert first[-1] == ResponseCompleted("tool_calls", Usage(input_tokens=1200, output_tokens=40))
    with pytest.raises(ProviderError) as info:
        list(p.stream(request()))
    assert info.value.kind is FailureKind.TRANSIENT
    assert joined_text(p.stream(request())) == "Done."
    with pytest.raises(ProviderError, match="exhausted after 3 turns"):
        list(p.stream(request()))


def test_schema_and_parser_agree_on_unknown_keys() -> None:
    data = tomllib.loads('[[turn]]\ntext = "a"\ncolour = "red"\n')
    assert list(schemas.reference_validator("replay-script").iter_errors(data))
    script_error('[[turn]]\ntext = "a"\ncolour = "red"\n')


def test_the_workspace_path_counts_the_same_wherever_it_lies(tmp_path: Path) -> None:
    """A prompt naming the workspace (as the exec prompt does) estimates the same in any folder,
    spelled as given or resolved through a symlink; other text still counts byte for byte."""
    script = parse_script("[[turn]]\ntext = 'ok'\n[[turn]]\ntext = 'ok'\n")
    short = tmp_path / "w"
    deep = tmp_path / ("a-much-longer-folder" * 4) / "ws"
    for ws in (short, deep):
        ws.mkdir(parents=True)
    (tmp_path / "link").symlink_to(deep)

    def input_tokens(ws: Path, spelled: Path) -> int:
        p = ReplayProvider(script, workspace=ws)
        msg = Message(role="system", content=f"in the folder {spelled} (and {spelled}/src)")
        (done,) = [e for e in p.stream(request(msg)) if isinstance(e, ResponseCompleted)]
        return done.usage.input_tokens

    expected = estimate_tokens(len("in the folder <workspace> (and <workspace>/src)system"))
    assert input_tokens(short, short) == expected
    assert input_tokens(deep, deep) == expected
    assert input_tokens(tmp_path / "link", deep) == expected  # the resolved spelling too
    assert input_tokens(short, deep) > expected  # another folder is only text


def test_an_exec_log_is_the_same_in_a_longer_checkout(tmp_path: Path) -> None:
    """The same scripted run in two folders of different path lengths writes the same usage."""
    script = tmp_path / "s.toml"
    script.write_text(
        '[[turn]]\n[[turn.tool_calls]]\nname = "exec_command"\n'
        'arguments = { command = "pwd" }\n[[turn]]\ntext = "done"\n'
    )
    usages = []
    # Both paths are 100-999 bytes long: exec_command's record counts the output's bytes
    # (`total_output_bytes`), and a count with one more digit is a byte no path rule can hide.
    for ws in (tmp_path / ("x" * 60) / "w", tmp_path / ("deeper-folder" * 6) / "w"):
        ws.mkdir(parents=True)
        proc = vtcode(["exec", "--json", "--script", str(script), "-q", "go"], ws)
        assert proc.returncode == 0, proc.stderr
        events = [json.loads(line) for line in proc.stdout.splitlines()]
        usages.append([e["usage"] for e in events if e["type"] == "turn.completed"])
    assert len(usages[0]) == 2 and len(usages[1]) == 2
    # The paths differ by ~80 bytes (~20 tokens if they leaked into the estimate). The record's
    # `wall_time` (e.g. 0.02112 or 0.021123) may differ by a byte from run to run, which can
    # cross one token boundary: each count at most 1 token apart.
    for first, second in zip(usages[0], usages[1], strict=True):
        assert first.keys() == second.keys(), usages
        assert all(abs(first[k] - second[k]) <= 1 for k in first), usages
