"""The context part inside the real Runner (in process): the paths a subprocess cannot steer
deterministically — a follow-up arriving exactly at an outer boundary, a model switch on
resume, hook warnings mid tool round, a failing summary request — plus the plan->build handoff."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vtcode.config.model import (
    AgentConfig,
    HarnessConfig,
    HookCommand,
    HookMatcher,
    HooksConfig,
    LifecycleHooks,
    ToolsConfig,
    VtcodeConfig,
)
from vtcode.context.state import ContextState, save_state
from vtcode.events.codec import encode_event
from vtcode.events.types import ThreadEvent
from vtcode.loop.limits import Limits
from vtcode.loop.runner import Runner
from vtcode.loop.tool_exec import RegistryToolExecutor
from vtcode.messages import Message, ModelRequest, StreamEvent, ToolCall
from vtcode.providers.replay import ReplayProvider
from vtcode.providers.script import parse_script
from vtcode.runtime.hooks import CompositeHooks, context_parts
from vtcode.schemas import fast_validator
from vtcode.steering.queue import SteeringQueue
from vtcode.tools.base import ToolContext
from vtcode.tools.registry import default_registry

SID = "part-session"
VALID = fast_validator("thread-event")


@pytest.fixture(autouse=True)
def _bytes_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VTCODE_TOKENIZER", "bytes")


class Harness:
    """A Runner with the real registry, the real context part and a list as the gate."""

    def __init__(self, ws: Path, script: str, cfg: VtcodeConfig, **part_kw: Any) -> None:
        (ws / ".vtcode" / "sessions" / SID).mkdir(parents=True, exist_ok=True)
        self.ws = ws
        self.provider = self.make_provider(parse_script(script))
        self.registry = default_registry(cfg)
        ctx = ToolContext(workspace=ws, session_id=SID, spool_dir=ws / ".vtcode/context/t")
        self.parts = context_parts(
            workspace=ws,
            session_id=SID,
            config=cfg,
            provider=self.provider,
            env={"VTCODE_HOME": str(ws / ".home"), "PATH": "/usr/bin:/bin"},
            **part_kw,
        )
        self.part = self.parts.context
        self.executor = RegistryToolExecutor(
            self.registry, ctx, tool_hooks=self.parts.lifecycle.tool_hooks()
        )
        self.events: list[ThreadEvent] = []
        self.cfg = cfg

    def make_provider(self, script: Any) -> ReplayProvider:
        return ReplayProvider(script)

    def run(self, prompt: str | None, history: list[Message] | None = None) -> list[dict[str, Any]]:
        runner = Runner(
            session_id=SID,
            provider=self.provider,
            tools=self.executor,
            limits=Limits.from_config(self.cfg),
            emit=self.events.append,
            system_prompt=lambda o: "SYSTEM" + (o or ""),
            history=history,
            prompt=prompt,
            hooks=CompositeHooks(self.parts.all()),
            workspace=self.ws,
        )
        try:
            runner.run()
        finally:
            self.registry.close()
        raw = [encode_event(e) for e in self.events]
        assert all(VALID.is_valid(e) for e in raw)
        return raw


def _cfg(**harness: Any) -> VtcodeConfig:
    return VtcodeConfig(agent=AgentConfig(harness=HarnessConfig(**harness)))


SOFT_THEN_FOLLOW_UP = """
[provider]
context_window = 20000
[[turn]]
text = "looking"
usage = { input_tokens = 17000, output_tokens = 5 }
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo hi" }
[[turn]]
text = "first part done"
usage = { input_tokens = 17100, output_tokens = 5 }
[[turn]]
expect_user_contains = "second part"
text = "second part done"
usage = { input_tokens = 3000, output_tokens = 5 }
[[summary]]
text = "## Goal\\n- provider-written summary"
"""


class SteeredProvider(ReplayProvider):
    """Enqueues a follow-up while the second model request is in flight (an outer boundary)."""

    queue: SteeringQueue | None = None

    def stream(self, request: ModelRequest) -> Iterator[StreamEvent]:
        if request.purpose == "turn" and self.turns_consumed == 1 and self.queue is not None:
            self.queue.enqueue("now the second part")
        return super().stream(request)


def test_soft_pending_compacts_at_the_follow_up_boundary_with_the_provider_summary(
    tmp_path: Path,
) -> None:
    class H(Harness):
        def make_provider(self, script: Any) -> ReplayProvider:
            p = SteeredProvider(script)
            p.queue = SteeringQueue(tmp_path, SID)
            return p

    h = H(tmp_path, SOFT_THEN_FOLLOW_UP, _cfg())
    events = h.run("do it")
    kinds = [e["type"] for e in events]
    b = next(e for e in events if e["type"] == "thread.compact_boundary")
    assert b["trigger"] == "auto"
    # after the final answer, its turn.completed and the follow-up's delivery (interjected),
    # before the follow-up's request
    i = kinds.index("thread.compact_boundary")
    assert kinds[i - 2 : i] == ["turn.completed", "interjected"] and kinds[i + 1] == "turn.started"
    meta = json.loads((tmp_path / b["history_artifact_path"]).read_text().splitlines()[0])
    assert meta["summary_source"] == "provider"
    assert events[-1]["subtype"] == "success" and events[-1]["result"] == "second part done"


HARD_IN_LOOP = """
[provider]
context_window = 20000
[[turn]]
text = "looking"
usage = { input_tokens = 19000, output_tokens = 5 }
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo hi" }
[[turn]]
text = "done"
[[summary]]
text = "must never be requested inside a tool loop"
"""


def test_hard_inside_a_tool_loop_never_asks_the_provider_for_a_summary(tmp_path: Path) -> None:
    h = Harness(tmp_path, HARD_IN_LOOP, _cfg())
    events = h.run("go")
    b = next(e for e in events if e["type"] == "thread.compact_boundary")
    meta = json.loads((tmp_path / b["history_artifact_path"]).read_text().splitlines()[0])
    assert meta["summary_source"] == "local"
    assert h.provider._next_summary == 0  # the [[summary]] entry was never consumed


def test_auto_compaction_disabled_never_compacts(tmp_path: Path) -> None:
    h = Harness(tmp_path, HARD_IN_LOOP, _cfg(auto_compaction_enabled=False))
    events = h.run("go")
    assert not [e for e in events if e["type"] == "thread.compact_boundary"]


NO_SUMMARY_LEFT = """
[provider]
context_window = 20000
[[turn]]
text = "resumed and done"
"""


def test_model_switch_on_resume_compacts_first_and_a_failed_summary_falls_back(
    tmp_path: Path,
) -> None:
    (tmp_path / ".vtcode/sessions" / SID).mkdir(parents=True)
    save_state(tmp_path, ContextState(session_id=SID, model="older-model", turns=3))
    history = [
        Message(role="user", content="the task"),
        Message(role="assistant", content="half done"),
    ]
    transcript = tmp_path / ".vtcode/sessions" / SID / "transcript.jsonl"
    transcript.write_text(
        "".join(json.dumps({"role": m.role, "content": m.content}) + "\n" for m in history)
    )
    h = Harness(tmp_path, NO_SUMMARY_LEFT, _cfg(), resumed=True)
    events = h.run("continue", history=list(history))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["thread.started", "item.completed"]  # the summary-failure warning
    warning = events[1]["item"]
    assert warning["type"] == "error" and "used the local summary" in warning["message"]
    b = events[2]
    assert b["type"] == "thread.compact_boundary" and b["trigger"] == "model_switch"
    assert events[-1]["subtype"] == "success"
    assert "_0003_" in b["history_artifact_path"]  # the turn counter survived the resume


def _hook(event: str, code: str, matcher: str | None = None) -> list[HookMatcher]:
    return [HookMatcher(matcher=matcher, hooks=[HookCommand(argv=[sys.executable, "-c", code])])]


LIST = """
[[turn]]
text = "listing"
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo hi" }
[[turn]]
text = "done"
"""


def test_tool_hook_failures_are_warnings_and_lifecycle_payloads(tmp_path: Path) -> None:
    dump = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read() + '\\n')"
    log = str(tmp_path / "hooks.jsonl")
    lc = LifecycleHooks(
        post_tool_use=_hook("post_tool_use", "import sys; sys.stderr.write('bad'); sys.exit(3)"),
        session_start=[HookMatcher(hooks=[HookCommand(argv=[sys.executable, "-c", dump, log])])],
        stop=[HookMatcher(hooks=[HookCommand(argv=[sys.executable, "-c", dump, log])])],
        session_end=[HookMatcher(hooks=[HookCommand(argv=[sys.executable, "-c", dump, log])])],
    )
    cfg = VtcodeConfig(hooks=HooksConfig(lifecycle=lc))
    h = Harness(tmp_path, LIST, cfg)
    events = h.run("list")
    errors = [
        e["item"]["message"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "error"
    ]
    assert len(errors) == 1 and errors[0].startswith("post_tool_use hook `")
    assert errors[0].endswith("exited with 3: bad")
    # the warning lands inside the tool round, before the tool's own completion
    idx = next(i for i, e in enumerate(events) if e.get("item", {}).get("type") == "error")
    assert events[idx + 1]["item"]["type"] == "tool_invocation"
    payloads = [json.loads(x) for x in Path(log).read_text().splitlines()]
    assert [p["hook_event_name"] for p in payloads] == ["SessionStart", "Stop", "SessionEnd"]
    assert payloads[0]["source"] == "startup"
    assert payloads[2]["reason"] == "success" and payloads[2]["subtype"] == "success"
    assert all(p["session_id"] == SID and p["cwd"] == str(tmp_path) for p in payloads)


def test_fresh_plan_execution_context_emits_context_reset_and_is_forwarded(
    tmp_path: Path,
) -> None:
    from vtcode.context.fresh import fresh_plan_execution_context
    from vtcode.store.exports.open_responses import OpenResponsesBuilder

    (tmp_path / ".vtcode/sessions" / SID).mkdir(parents=True)
    part = context_parts(
        workspace=tmp_path, session_id=SID, config=_cfg(), provider=ReplayProvider(parse_script(""))
    ).context
    part.policy.pending = True
    emitted: list[ThreadEvent] = []
    handoff = fresh_plan_execution_context(
        thread_id=SID,
        turn_id="turn-3",
        plan="1. do A\n2. do B",
        context_usage_percent=71.6,
        plan_path=".vtcode/plans/p.md",
        tracker_path=".vtcode/tasks/current_task.md",
        emit=emitted.append,
        reset=[part.fresh_context],
    )
    assert not part.policy.pending and part.segments.current is None
    [event] = emitted
    raw = encode_event(event)
    assert raw == {
        "type": "context.reset",
        "thread_id": SID,
        "turn_id": "turn-3",
        "trigger": "plan_approval",
        "plan_preserved": True,
        "previous_context_usage_percent": 72,
        "tool_budget_reset": True,
    }
    assert VALID.is_valid(raw)
    assert [m.role for m in handoff.history] == ["user"]
    assert "1. do A" in handoff.history[0].content and ".vtcode/plans/p.md" in (
        handoff.history[0].content
    )
    out = OpenResponsesBuilder(SID).process(event)
    custom = [o for o in out if o.get("type") == "response.custom_event"]
    assert custom and custom[0]["event_type"] == "vtcode.context_reset"
    assert custom[0]["data"]["trigger"] == "plan_approval"


def test_follow_ups_are_delivered_once_and_committed_on_the_next_request(tmp_path: Path) -> None:
    (tmp_path / ".vtcode/sessions" / SID).mkdir(parents=True)
    part = context_parts(
        workspace=tmp_path, session_id=SID, config=_cfg(), provider=ReplayProvider(parse_script(""))
    ).steering
    q = SteeringQueue(tmp_path, SID)
    intent = q.enqueue("please also test")
    [m] = part.follow_ups()
    assert (m.role, m.content, m.intent_id) == ("user", "please also test", intent.id)
    assert part.follow_ups() == []  # delivered: never twice in one run
    assert [i.id for i in q.pending()] == [intent.id]  # not yet applied (two-phase)
    part.before_request(ModelRequest(model="m", messages=(Message(role="system", content="S"), m)))
    assert q.pending() == [] and q.state().applied_intent_ids == [intent.id]


def test_resume_never_replays_an_intent_already_in_the_transcript(tmp_path: Path) -> None:
    sdir = tmp_path / ".vtcode/sessions" / SID
    sdir.mkdir(parents=True)
    q = SteeringQueue(tmp_path, SID)
    delivered = q.enqueue("delivered before the crash")
    waiting = q.enqueue("still waiting")
    (sdir / "transcript.jsonl").write_text(
        json.dumps({"role": "user", "content": delivered.text, "intent_id": delivered.id}) + "\n"
    )
    part = context_parts(
        workspace=tmp_path,
        session_id=SID,
        config=_cfg(),
        provider=ReplayProvider(parse_script("")),
        resumed=True,
    ).steering
    assert [m.intent_id for m in part.follow_ups()] == [waiting.id]
    assert delivered.id in q.state().applied_intent_ids


def test_executor_pre_tool_hooks_chain_with_an_existing_callable(tmp_path: Path) -> None:
    deny_all = "import sys; sys.stderr.write('hook says no'); sys.exit(2)"
    cfg = VtcodeConfig(
        hooks=HooksConfig(
            lifecycle=LifecycleHooks(
                pre_tool_use=_hook("pre_tool_use", deny_all, matcher="exec_command")
            )
        )
    )
    (tmp_path / ".vtcode/sessions" / SID).mkdir(parents=True)
    registry = default_registry(cfg)
    try:
        ctx = ToolContext(workspace=tmp_path, session_id=SID, spool_dir=tmp_path / "spool")
        seen: list[str] = []

        class Watch:
            """Another part's tool hook, given to the executor before the context part's."""

            def pre_tool(self, name: str, arguments: Any) -> str | None:
                seen.append(name)
                return None

            def post_tool(self, name: str, arguments: Any, response: dict[str, Any]) -> None:
                pass

        part = context_parts(
            workspace=tmp_path,
            session_id=SID,
            config=cfg,
            provider=ReplayProvider(parse_script("")),
            env={"VTCODE_HOME": str(tmp_path / ".home")},
        ).lifecycle
        ex = RegistryToolExecutor(registry, ctx, tool_hooks=[Watch(), *part.tool_hooks()])
        from vtcode.loop.cancel import CancelToken

        call = ToolCall(id="c", name="exec_command", arguments='{"command":"echo x"}')
        out = ex.execute(call, {"command": "echo x"}, CancelToken())
        assert out.outcome.value == "hook_denied" and "hook says no" in out.output
        assert seen == ["exec_command"]
        ok = ex.execute(ToolCall(id="d", name="list_files", arguments="{}"), {}, CancelToken())
        assert ok.outcome.value == "success"
    finally:
        registry.close()


def test_hard_blocks_write_the_blocked_handoff(tmp_path: Path) -> None:
    cfg = VtcodeConfig(tools=ToolsConfig(max_tool_loops=1))
    h = Harness(tmp_path, LIST, cfg)
    events = h.run("list")
    done = events[-1]
    assert done["outcome_code"] == "tool_loop_limit_reached"
    paths = [e["item"]["path"] for e in events if e.get("item", {}).get("type") == "harness"]
    assert paths[0] == ".vtcode/tasks/current_blocked.md"
    text = (tmp_path / paths[0]).read_text()
    assert "outcome: tool_loop_limit_reached" in text
    assert "Stopped after reaching tool loop limit (max: 1, reached: 1)" in text
    assert (tmp_path / paths[1]).read_text() == text
    # the artifacts come before the terminal turn event, as upstream orders them
    kinds = [e["type"] for e in events]
    assert kinds[-2] == "turn.failed"


RECOVERY_THEN_AUTO = """
[provider]
context_window = 20000
[[turn]]
text = "one"
usage = { input_tokens = 1000, output_tokens = 5 }
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo a" }
[[turn]]
fail = "transient"
[[turn]]
text = "two"
usage = { input_tokens = 19000, output_tokens = 5 }
[[turn.tool_calls]]
name = "exec_command"
arguments = { command = "echo b" }
[[turn]]
text = "done"
usage = { input_tokens = 2000, output_tokens = 5 }
"""


def test_a_later_threshold_compaction_is_auto_not_recovery(tmp_path: Path) -> None:
    h = Harness(tmp_path, RECOVERY_THEN_AUTO, _cfg())
    events = h.run("go")
    triggers = [e["trigger"] for e in events if e["type"] == "thread.compact_boundary"]
    assert triggers == ["recovery", "auto"]
    assert events[-1]["subtype"] == "success"


def test_resume_after_manual_compaction_keeps_the_summary(tmp_path: Path) -> None:
    from vtcode.context.compaction import SUMMARY_NAME
    from vtcode.context.manual import compact_session
    from vtcode.loop.parts import LoopHooks
    from vtcode.runtime.exec_run import ExecRequest, run_exec

    cfg = VtcodeConfig()
    first = tmp_path / "one.toml"
    # long enough that compacting it makes it smaller (a short history is left alone)
    first.write_text('[[turn]]\ntext = "' + "first answer " * 3000 + '"\n')
    r = run_exec(
        ExecRequest(
            workspace=tmp_path,
            config=cfg,
            prompt="task",
            script=str(first),
            session_id=SID,
            install_signals=False,
        )
    )
    assert r.run is not None and r.run.outcome.kind.is_success
    done = compact_session(tmp_path, SID, cfg, env={"VTCODE_HOME": str(tmp_path / ".home")})
    assert done.compacted, done.reason
    seen: list[ModelRequest] = []

    class Spy(LoopHooks):
        def before_request(self, request: ModelRequest) -> None:
            seen.append(request)

    second = tmp_path / "two.toml"
    second.write_text('[[turn]]\ntext = "second answer"\n')
    r = run_exec(
        ExecRequest(
            workspace=tmp_path,
            config=cfg,
            prompt="more",
            script=str(second),
            resume=SID,
            install_signals=False,
            hooks_factory=lambda ctx: Spy(),
        )
    )
    assert r.run is not None and r.run.outcome.kind.is_success
    assert any(m.name == SUMMARY_NAME for m in seen[0].messages)
