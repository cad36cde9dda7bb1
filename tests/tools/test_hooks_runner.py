"""Lifecycle hooks as real processes: argv, stdin payload, minimal env, timeouts, caps, trust."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vtcode.config.load import load_config
from vtcode.config.model import HookCommand, HookMatcher, HooksConfig, LifecycleHooks, VtcodeConfig
from vtcode.config.trust_store import revoke_workspace, trust_workspace
from vtcode.hooks.config import HookSpec, plan_hooks, workspace_fingerprint
from vtcode.hooks.models import PreCompactPayload
from vtcode.hooks.runner import HookRunner, hook_env, run_one

PY = sys.executable


def spec(argv: list[str], *, event: str = "pre_tool_use", timeout: float = 10) -> HookSpec:
    return HookSpec(event, None, tuple(argv), timeout, False, " ".join(argv))


def env_for(ws: Path) -> dict[str, str]:
    return hook_env(workspace=ws, session_id="s1", event_name="PreToolUse", transcript_path=None)


def test_payload_on_stdin_and_minimal_environment(tmp_path: Path) -> None:
    out = tmp_path / "seen.json"
    code = (
        "import json,os,sys; json.dump({'stdin': sys.stdin.read(), 'env': dict(os.environ),"
        f" 'cwd': os.getcwd()}}, open({str(out)!r}, 'w'))"
    )
    parent = {**os.environ, "OPENAI_API_KEY": "sk-canary", "LC_ALL": "C.UTF-8", "HOME": "/h"}
    env = hook_env(
        workspace=tmp_path,
        session_id="s1",
        event_name="PreCompact",
        transcript_path="/t.jsonl",
        parent=parent,
    )
    r = run_one(spec([PY, "-c", code]), b'{"hello":1}', cwd=tmp_path, env=env)
    assert r.ok, r
    seen = json.loads(out.read_text())
    assert seen["stdin"] == '{"hello":1}'
    assert seen["cwd"] == str(tmp_path)
    e = seen["env"]
    assert "OPENAI_API_KEY" not in e  # nothing outside the allow-list leaks
    assert e["LC_ALL"] == "C.UTF-8" and e["HOME"] == "/h"
    assert e["VT_PROJECT_DIR"] == e["CLAUDE_PROJECT_DIR"] == str(tmp_path)
    assert e["VT_SESSION_ID"] == e["CLAUDE_SESSION_ID"] == "s1"
    assert e["VT_HOOK_EVENT"] == "PreCompact"
    assert e["VT_TRANSCRIPT_PATH"] == e["CLAUDE_TRANSCRIPT_PATH"] == "/t.jsonl"
    allowed = {"PATH", "HOME", "LANG", "TERM", "TMPDIR"}
    assert all(k in allowed or k.startswith(("LC_", "VT_", "CLAUDE_")) for k in e)


def test_exit_2_denies_with_stderr_and_json_decision_denies(tmp_path: Path) -> None:
    r = run_one(
        spec([PY, "-c", "import sys; sys.stderr.write('no rm'); sys.exit(2)"]),
        b"{}",
        cwd=tmp_path,
        env=env_for(tmp_path),
    )
    assert r.denied and r.reason == "no rm" and r.failure() is None
    j = run_one(
        spec([PY, "-c", 'print(\'{"decision":"deny","reason":"policy"}\')']),
        b"{}",
        cwd=tmp_path,
        env=env_for(tmp_path),
    )
    assert j.ok and j.denied and j.reason == "policy"
    ok = run_one(spec([PY, "-c", "pass"]), b"{}", cwd=tmp_path, env=env_for(tmp_path))
    assert ok.ok and not ok.denied


def test_failures_are_reported_not_denials(tmp_path: Path) -> None:
    r = run_one(
        spec([PY, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"]),
        b"{}",
        cwd=tmp_path,
        env=env_for(tmp_path),
    )
    assert not r.denied and r.failure() is not None and "exited with 3: boom" in r.failure()
    missing = run_one(spec(["/no/such/hook"]), b"{}", cwd=tmp_path, env=env_for(tmp_path))
    assert missing.error and not missing.denied and "could not start" in (missing.failure() or "")
    # exit 2 only denies for pre_tool_use; elsewhere it is a failure
    other = run_one(
        spec([PY, "-c", "raise SystemExit(2)"], event="pre_compact"),
        b"{}",
        cwd=tmp_path,
        env=env_for(tmp_path),
    )
    assert other.failure() is not None


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    code = textwrap.dedent(
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """
    )
    start = time.monotonic()
    r = run_one(spec([PY, "-c", code], timeout=1.5), b"{}", cwd=tmp_path, env=env_for(tmp_path))
    assert r.timed_out and "timed out" in (r.failure() or "")
    assert time.monotonic() - start < 15
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)  # bounded poll for the kernel to reap: the signal was already sent
    else:
        pytest.fail("the hook's child survived the timeout")


def test_output_is_capped_and_a_flood_never_blocks(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 5_000_000); sys.stderr.write('y' * 5_000_000)"
    r = run_one(spec([PY, "-c", code]), b"{}", cwd=tmp_path, env=env_for(tmp_path), max_output=1000)
    assert r.ok and len(r.stdout) == 1000 and len(r.stderr) == 1000


def test_hook_ignoring_a_large_stdin_does_not_hang(tmp_path: Path) -> None:
    r = run_one(
        spec([PY, "-c", "pass"]),
        b"{" + b" " * 10_000_000 + b"}",
        cwd=tmp_path,
        env=env_for(tmp_path),
    )
    assert r.ok


def _cfg(**events: list[HookMatcher]) -> VtcodeConfig:
    return VtcodeConfig(hooks=HooksConfig(lifecycle=LifecycleHooks(**events)))


def test_plan_resolves_argv_command_and_matchers(tmp_path: Path) -> None:
    cfg = _cfg(
        pre_tool_use=[
            HookMatcher(
                matcher="exec_command|write_file",
                hooks=[HookCommand(command="python3 -c 'print(1)'")],
            ),
            HookMatcher(hooks=[HookCommand(argv=["a", "b c"])]),
            HookMatcher(matcher="(", hooks=[HookCommand(argv=["x"])]),
        ],
        stop=[HookMatcher(hooks=[HookCommand(command="echo hi", shell=True)])],
    )
    plan = plan_hooks(tmp_path, cfg, workspace_defined=set())
    pre = plan.for_event("pre_tool_use")
    assert pre[0].argv == ("python3", "-c", "print(1)")
    assert pre[0].matches("write_file") and not pre[0].matches("read_file")
    assert pre[1].argv == ("a", "b c") and pre[1].matches("anything")
    assert plan.for_event("stop")[0].argv == ("/bin/sh", "-c", "echo hi")
    assert len(plan.problems) == 1 and "invalid regex" in plan.problems[0]


def _workspace_with_hooks(tmp_path: Path, argv: str = '["python3", "hook.py"]') -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "vtcode.toml").write_text(
        f"[[hooks.lifecycle.pre_tool_use]]\nhooks = [{{ argv = {argv} }}]\n"
    )
    return ws


def test_workspace_hooks_need_trust_of_the_exact_definitions(tmp_path: Path) -> None:
    ws = _workspace_with_hooks(tmp_path)
    env = {"VTCODE_HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]}
    cfg = load_config(workspace=ws, env=env).config
    plan = plan_hooks(ws, cfg, env=env)
    assert plan.empty and plan.skipped_untrusted == 1
    fp, events = workspace_fingerprint(ws, cfg, env)
    assert events == ["pre_tool_use"] and fp is not None
    trust_file = trust_workspace(ws, fp, env)
    assert trust_file == tmp_path / "home" / "trust.json" and not str(trust_file).startswith(
        str(ws)
    )
    assert plan_hooks(ws, cfg, env=env).for_event("pre_tool_use")
    # the same hooks in another workspace are not trusted (trust is per canonical path)
    (tmp_path / "b").mkdir()
    ws2 = _workspace_with_hooks(tmp_path / "b")
    assert plan_hooks(ws2, load_config(workspace=ws2, env=env).config, env=env).empty
    # a changed hook is untrusted again
    (ws / "vtcode.toml").write_text(
        '[[hooks.lifecycle.pre_tool_use]]\nhooks = [{ argv = ["python3", "evil.py"] }]\n'
    )
    assert plan_hooks(ws, load_config(workspace=ws, env=env).config, env=env).empty
    assert revoke_workspace(ws, env) is True


def test_env_override_and_user_hooks(tmp_path: Path) -> None:
    ws = _workspace_with_hooks(tmp_path)
    home = tmp_path / "home"
    base = {"VTCODE_HOME": str(home), "PATH": os.environ["PATH"]}
    cfg = load_config(workspace=ws, env=base).config
    assert plan_hooks(ws, cfg, env={**base, "VTCODE_TRUST_WORKSPACE": "1"}).for_event(
        "pre_tool_use"
    )
    fp, _ = workspace_fingerprint(ws, cfg, base)
    assert fp is not None
    trust_workspace(ws, fp, base)
    assert plan_hooks(ws, cfg, env={**base, "VTCODE_TRUST_WORKSPACE": "deny"}).empty
    # hooks in the user's own config need no trust; shell is allowed there
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        '[[hooks.lifecycle.stop]]\nhooks = [{ command = "echo bye", shell = true }]\n'
    )
    ws3 = tmp_path / "plain"
    ws3.mkdir()
    user_cfg = load_config(workspace=ws3, env=base).config
    assert plan_hooks(ws3, user_cfg, env=base).for_event("stop")[0].argv[0] == "/bin/sh"


def test_workspace_shell_hooks_are_refused_even_when_trusted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "vtcode.toml").write_text(
        '[[hooks.lifecycle.stop]]\nhooks = [{ command = "echo hi", shell = true }]\n'
    )
    env = {"VTCODE_HOME": str(tmp_path / "home"), "VTCODE_TRUST_WORKSPACE": "1"}
    plan = plan_hooks(ws, load_config(workspace=ws, env=env).config, env=env)
    assert plan.empty and "shell = true" in plan.problems[0]


def test_runner_runs_matching_hooks_with_the_encoded_payload(tmp_path: Path) -> None:
    out = tmp_path / "payload.json"
    cfg = _cfg(
        pre_compact=[
            HookMatcher(
                matcher="auto",
                hooks=[
                    HookCommand(
                        argv=[
                            PY,
                            "-c",
                            f"import sys; open({str(out)!r}, 'w').write(sys.stdin.read())",
                        ]
                    )
                ],
            ),
        ]
    )
    runner = HookRunner(
        plan_hooks(tmp_path, cfg, workspace_defined=set()),
        workspace=tmp_path,
        session_id="s1",
        transcript_path=None,
    )
    payload = PreCompactPayload(
        session_id="s1",
        cwd=str(tmp_path),
        trigger="manual",
        mode="local",
        original_message_count=3,
        compacted_message_count=2,
    )
    assert runner.run("pre_compact", payload, subject="manual") == []  # matcher says no
    [r] = runner.run("pre_compact", payload, subject="auto")
    assert r.ok
    assert json.loads(out.read_text()) == {
        "session_id": "s1",
        "cwd": str(tmp_path),
        "hook_event_name": "PreCompact",
        "transcript_path": None,
        "trigger": "manual",
        "mode": "local",
        "original_message_count": 3,
        "compacted_message_count": 2,
        "history_artifact_path": None,
    }


def test_hooks_from_a_command_line_layer_are_the_users_own(tmp_path: Path) -> None:
    ws = _workspace_with_hooks(tmp_path)
    env = {"VTCODE_HOME": str(tmp_path / "home")}
    override = 'hooks.lifecycle.pre_tool_use=[{hooks=[{argv=["python3","mine.py"]}]}]'
    cfg = load_config(workspace=ws, env=env, overrides=[override]).config
    plan = plan_hooks(ws, cfg, env=env)
    assert [s.argv for s in plan.for_event("pre_tool_use")] == [("python3", "mine.py")]
    assert plan.skipped_untrusted == 0
