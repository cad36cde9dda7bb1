"""Permission rules: matching table, precedence, the full-auto gate, headless ask handling."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from vtcode.config.model import AutomationConfig, FullAutoConfig, PermissionsConfig, VtcodeConfig
from vtcode.errors import ConfigError
from vtcode.tools.permissions import (
    FULL_AUTO_RULE,
    PERMISSION_REJECTED,
    Decision,
    PermissionPolicy,
    PermissionRule,
    headless,
    path_glob_match,
    split_command,
)

PATCH = "*** Begin Patch\n*** Add File: {a}\n+x\n*** Update File: {b}\n-x\n+y\n*** End Patch"


@pytest.mark.parametrize(
    ("rule", "tool", "args", "every", "expected"),
    [
        # bare names and name globs
        ("read_file", "read_file", {"path": "x"}, True, True),
        ("read_file", "write_file", {"path": "x"}, True, False),
        ("*", "anything", {}, True, True),
        ("mcp__*", "mcp__github__search", {}, True, True),
        # command globs
        ("exec_command(git *)", "exec_command", {"command": "git status"}, True, True),
        ("exec_command(git *)", "exec_command", {"command": "git"}, True, True),
        ("exec_command(git *)", "exec_command", {"command": "gitk"}, True, False),
        ("exec_command(git *)", "exec_command", {"command": ["git", "log", "-1"]}, True, True),
        ("exec_command(git *)", "exec_command", {"command": "git add src/a b"}, True, True),
        # compound commands: allow needs every part, deny/ask any part
        ("exec_command(git *)", "exec_command", {"command": "git status && rm -rf /"}, True, False),
        ("exec_command(rm *)", "exec_command", {"command": "git status && rm -rf /"}, False, True),
        ("exec_command(rm *)", "exec_command", {"command": "ls; rm x"}, False, True),
        ("exec_command(rm *)", "exec_command", {"command": "ls\nrm x"}, False, True),
        ("exec_command(rm *)", "exec_command", {"command": "ls | rm x"}, False, True),
        ("exec_command(git *)", "exec_command", {"command": "git log | head"}, True, False),
        ("exec_command(git *)", "exec_command", {"command": "git log $(rm x)"}, True, False),
        ("exec_command(git *)", "exec_command", {"command": "git log `rm x`"}, True, False),
        ("exec_command(git *)", "exec_command", {"command": "git 'unbalanced"}, True, False),
        ("exec_command(*rm -rf*)", "exec_command", {"command": "echo; sudo rm -rf /"}, False, True),
        (
            "write_stdin(rm *)",
            "write_stdin",
            {"session_id": "run-1", "chars": "rm x\n"},
            False,
            True,
        ),
        # path globs
        ("write_file(src/**)", "write_file", {"path": "src/a/b.py"}, True, True),
        ("write_file(src/**)", "write_file", {"path": "src"}, True, True),
        ("write_file(src/**)", "write_file", {"path": "./src/x"}, True, True),
        ("write_file(src/**)", "write_file", {"path": "srcx/a.py"}, True, False),
        ("write_file(src/**)", "write_file", {"path": "lib/src/a.py"}, True, False),
        ("write_file(src/*)", "write_file", {"path": "src/a/b.py"}, True, False),
        ("write_file(src/*)", "write_file", {"path": "src/a.py"}, True, True),
        ("write_file(*.lock)", "write_file", {"path": "deep/dir/Cargo.lock"}, True, True),
        ("write_file(**/*.py)", "write_file", {"path": "a.py"}, True, True),
        ("write_file(src/**)", "write_file", {"path": "src/../etc/x"}, True, False),
        ("list_files(.)", "list_files", {}, True, True),  # the default path
        ("grep(docs/**)", "grep", {"pattern": "x", "path": "docs/a"}, True, True),
        # apply_patch: every path the patch names
        (
            "apply_patch(src/**)",
            "apply_patch",
            {"input": PATCH.format(a="src/a", b="src/b")},
            True,
            True,
        ),
        (
            "apply_patch(src/**)",
            "apply_patch",
            {"input": PATCH.format(a="src/a", b="etc/b")},
            True,
            False,
        ),
        (
            "apply_patch(etc/**)",
            "apply_patch",
            {"input": PATCH.format(a="src/a", b="etc/b")},
            False,
            True,
        ),
        ("apply_patch(src/**)", "apply_patch", {"input": "not a patch"}, True, False),
        # a pattern never matches a call without the primary argument
        ("exec_command(git *)", "exec_command", {}, False, False),
    ],
)
def test_rule_matching_table(
    rule: str, tool: str, args: dict[str, Any], every: bool, expected: bool
) -> None:
    from vtcode.tools.permissions import primary_values

    kind, values = primary_values(tool, args)
    assert PermissionRule.parse(rule).matches(tool, values, kind, every=every) is expected


def test_paths_are_normalised_against_the_workspace(tmp_path: Path) -> None:
    policy = PermissionPolicy(deny=["write_file(secrets/**)"], workspace=tmp_path)
    absolute = str(tmp_path / "secrets" / "k.pem")
    assert policy.check("write_file", {"path": absolute}).decision is Decision.DENY
    assert policy.check("write_file", {"path": "a/../secrets/k"}).decision is Decision.DENY
    assert policy.check("write_file", {"path": "public/k"}).decision is Decision.ALLOW


@pytest.mark.parametrize(
    ("allow", "ask", "deny", "call", "decision", "rule"),
    [
        ([], [], [], ("exec_command", {"command": "ls"}), Decision.ALLOW, None),
        (
            ["*"],
            [],
            ["exec_command(rm *)"],
            ("exec_command", {"command": "rm x"}),
            Decision.DENY,
            "exec_command(rm *)",
        ),
        (
            ["exec_command(rm *)"],
            ["exec_command(rm *)"],
            [],
            ("exec_command", {"command": "rm x"}),
            Decision.ASK,
            "exec_command(rm *)",
        ),
        (
            [],
            ["exec_command"],
            ["exec_command(rm *)"],
            ("exec_command", {"command": "ls"}),
            Decision.ASK,
            "exec_command",
        ),
        (
            ["exec_command(git *)"],
            [],
            [],
            ("exec_command", {"command": "git status"}),
            Decision.ALLOW,
            "exec_command(git *)",
        ),
        # an allow rule with a pattern narrows its tool: other calls of that tool are asked
        (
            ["exec_command(git *)"],
            [],
            [],
            ("exec_command", {"command": "make"}),
            Decision.ASK,
            None,
        ),
        (["exec_command(git *)"], [], [], ("read_file", {"path": "a"}), Decision.ALLOW, None),
    ],
)
def test_precedence_deny_over_ask_over_allow(
    allow: list[str],
    ask: list[str],
    deny: list[str],
    call: tuple[str, dict[str, Any]],
    decision: Decision,
    rule: str | None,
) -> None:
    verdict = PermissionPolicy(allow=allow, ask=ask, deny=deny).check(*call)
    assert (verdict.decision, verdict.rule) == (decision, rule)
    assert verdict.reason


def _config(**perms: Any) -> VtcodeConfig:
    allowed = perms.pop("allowed_tools", None)
    full_auto = FullAutoConfig() if allowed is None else FullAutoConfig(allowed_tools=allowed)
    return dataclasses.replace(
        VtcodeConfig(),
        permissions=PermissionsConfig(**perms),
        automation=AutomationConfig(full_auto=full_auto),
    )


def test_full_auto_allow_list_is_a_hard_gate() -> None:
    policy = PermissionPolicy.from_config(_config(allow=["*"], allowed_tools=["read_file"]))
    verdict = policy.check("exec_command", {"command": "ls"})
    assert verdict.decision is Decision.DENY and verdict.rule == FULL_AUTO_RULE
    assert policy.check("read_file", {"path": "a"}).decision is Decision.ALLOW
    # outside full auto (interactive) the list does not apply
    free = PermissionPolicy.from_config(_config(allowed_tools=["read_file"]), full_auto=False)
    assert free.check("exec_command", {"command": "ls"}).decision is Decision.ALLOW


def test_disabled_permissions_allow_what_the_allow_list_allows() -> None:
    cfg = _config(enabled=False, deny=["*"], allowed_tools=["exec_command"])
    policy = PermissionPolicy.from_config(cfg)
    assert policy.check("exec_command", {"command": "rm -rf x"}).decision is Decision.ALLOW
    assert policy.check("write_file", {"path": "x"}).decision is Decision.DENY


def test_default_allow_list_includes_the_builtin_tools() -> None:
    policy = PermissionPolicy.from_config(VtcodeConfig())
    for tool in ("exec_command", "write_stdin", "apply_patch", "read_file", "write_file", "grep"):
        assert policy.check(tool, {}).decision is Decision.ALLOW, tool
    assert policy.check("web_fetch", {}).decision is Decision.DENY


def test_headless_turns_ask_into_permission_rejected() -> None:
    policy = PermissionPolicy(ask=["exec_command"])
    asked = policy.check("exec_command", {"command": "ls"})
    denied = headless(asked)
    assert denied.decision is Decision.DENY and denied.outcome == PERMISSION_REJECTED
    assert denied.rule == "exec_command"
    assert headless(asked, allow_ask=True).decision is Decision.ALLOW
    allowed = policy.check("read_file", {"path": "x"})
    assert headless(allowed) is allowed
    strict = PermissionPolicy.from_config(_config(ask=["exec_command"]), headless=True)
    decision, reason = strict.check("exec_command", '{"command": "ls"}')  # raw JSON accepted
    assert decision == "deny" and "headless" in reason


@pytest.mark.parametrize("bad", ["", "exec_command(", "exec_command()", "a b", "(x)"])
def test_invalid_rules_are_config_errors_with_location(bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        PermissionPolicy(allow=["read_file", bad])
    assert info.value.location == "permissions.allow[1]"
    assert info.value.exit_code == 2


def test_split_command() -> None:
    assert split_command("a && b || c; d | e & f") == ["a", "b", "c", "d", "e", "f"]
    assert split_command("echo 'a;b' \"c && d\"") == ["echo a;b c && d"]
    assert split_command("x $(y)") is None


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**", "src", True),
        ("src/**", "src/a/b", True),
        ("src/", "src/a", True),
        ("/src/*.py", "src/a.py", True),
        ("*.py", "a/b/c.py", True),
        ("a?c", "abc", True),
        ("a?c", "a/c", False),
        ("docs/**/index.md", "docs/index.md", True),
        ("docs/**/index.md", "docs/x/y/index.md", True),
        ("*", "anything/at/all", True),
    ],
)
def test_path_glob(pattern: str, path: str, expected: bool) -> None:
    assert path_glob_match(pattern, path) is expected
