"""Shell command policy on tree-sitter-bash: rewrites of a denied command are still denied, what
cannot be resolved is never allowed, and a write redirect is judged like write_file of its target.

The tables were written from bash's own rules (each row is a line bash would really run as `rm`,
or a line an `exec_command(git *)` allow rule must not cover), not from the parser's output.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import SESSION, normalise, raw_events, vtcode
from vtcode.tools.permissions import Decision, PermissionPolicy
from vtcode.tools.shell_parse import analyse

DENY_RM = "exec_command(rm *)"

# Each line runs `rm` (or something that could be it) under bash: a deny rule on rm denies it.
REWRITES = [
    "rm -rf build",
    "/bin/rm x",
    "/usr/bin/../bin/rm x",
    "$(echo rm) x",
    "`echo rm` x",
    "bash -c 'rm x'",
    'sh -c "rm x"',
    "zsh -c 'rm x'",
    "dash -c 'rm x'",
    "bash -lc 'rm x'",
    "bash -o pipefail -ec 'rm x'",
    "env rm x",
    "env -i FOO=1 rm x",
    "env -u HOME -- rm x",
    "env -S 'rm x'",
    "command rm x",
    "builtin command -p rm x",
    "exec rm x",
    "{ rm x; }",
    "(rm x)",
    "X=rm; $X x",
    'X=rm; "$X" x',
    "${X:-rm} x",
    "find . -delete",
    "find . -name '*.o' -exec rm {} +",
    "find . -execdir echo {} ;",
    "r''m x",
    '"r"m x',
    "\\rm x",
    '"rm" x',
    "r\\m x",
    "$'\\x72m' x",
    "$'\\162m' x",
    "$'r\\u006d' x",
    "{rm,x}",
    "/???/r? x",
    "r[m] x",
    "sh <<EOF\nrm x\nEOF",
    "bash <<'EOF'\nrm x\nEOF",
    "bash <<< 'rm x'",
    "echo rm x | sh",
    "busybox rm x",
    "busybox sh -c 'rm x'",
    "bash -c \"sh -c 'rm x'\"",
    'bash -c "bash -c \\"sh -c \'rm x\'\\""',
    "ls\nrm x",
    "ls # a comment\nrm x",
    "ls; rm x",
    "true && rm x || false",
    "sleep 1 & rm x",
    "ls | rm x",
    "cat <(rm x)",
    "echo >(rm x)",
    "echo $(( $(rm x) + 1 ))",
    'echo "$(rm x)"',
    "f(){ rm x; }; f",
    "function f { rm x; }",
    "alias l='rm x'; l",
    "trap 'rm x' EXIT",
    "eval 'rm x'",
    "source ./script.sh",
    ". ./script.sh",
    "nice -n 5 rm x",
    "nohup rm x &",
    "timeout -s KILL 5 rm x",
    "timeout --kill-after=1 5 rm x",
    "echo x | xargs rm",
    "echo x | xargs -I{} rm {}",
    "echo x | xargs -I{} sh -c 'rm {}'",
    "sudo -u root rm x",
    "sudo -s",
    "time rm x",
    "stdbuf -oL rm x",
    "setsid rm x",
    "taskset -c 0 rm x",
    "taskset 1 rm x",
    "ionice -c3 rm x",
    "chroot / rm x",
    "flock /tmp/l -c 'rm x'",
    "su -c 'rm x'",
    "coproc rm x",
    "coproc N { rm x; }",
    "${PATH:0:1}bin/rm x",
    "rm${IFS}x",
    'a=(rm x); "${a[@]}"',
    '"/bin/"rm x',
    "echo > >(rm x)",
    "watch rm x",
    "if true; then rm x; fi",
    "while false; do :; done; until true; do rm x; done",
    'for f in a; do rm "$f"; done',
    "case a in a) rm x;; esac",
    "[[ -f x ]] && rm x",
    "x=1 rm x",
    "! rm x",
    "echo 'unterminated",
    'bash -c "$CMD"',
    "exec 3>&1; rm x 2>&3",
]

# Lines that do not run rm: a deny rule on rm leaves them alone.
NOT_RM = [
    "ls -la",
    "echo rm",
    "echo 'rm x'",
    "grep -rn rm .",
    "git rm --cached x",
    "printf '%s\\n' \"rm x\"",
    "cat <<'EOF'\n$(rm x)\nEOF",
    'echo "$HOME"',
    "ls > /dev/null 2>&1",
    "bash build.sh",
    "find . -name '*.py' -print",
]


@pytest.mark.parametrize("line", REWRITES)
def test_rewrites_of_a_denied_command_are_denied(tmp_path: Path, line: str) -> None:
    verdict = PermissionPolicy(deny=[DENY_RM], workspace=tmp_path).check(
        "exec_command", {"command": line}
    )
    assert verdict.decision is Decision.DENY, verdict.reason
    assert verdict.rule == DENY_RM


@pytest.mark.parametrize("line", REWRITES)
def test_rewrites_never_match_an_allow_rule_for_something_else(tmp_path: Path, line: str) -> None:
    """`exec_command(ls *)` allows ls; none of the rm rewrites is allowed by it (headless: deny)."""
    policy = PermissionPolicy(allow=["exec_command(ls *)"], workspace=tmp_path)
    assert policy.check("exec_command", {"command": line}).decision is Decision.ASK


@pytest.mark.parametrize("line", NOT_RM)
def test_other_commands_are_not_denied(tmp_path: Path, line: str) -> None:
    verdict = PermissionPolicy(deny=[DENY_RM], workspace=tmp_path).check(
        "exec_command", {"command": line}
    )
    assert verdict.decision is Decision.ALLOW, verdict.reason


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("X=rm; $X x", "command name that is not a literal"),
        ("$(echo rm) x", "command name that is not a literal"),
        ("eval 'rm x'", "`eval` runs code"),
        ("source ./s.sh", "`source` runs code"),
        ("find . -delete", "find -exec/-execdir/-ok/-delete"),
        ("echo 'unterminated", "cannot parse"),
        ("echo rm | sh", "shell reading commands from stdin"),
        ('bash -c "$C"', "shell -c string that is not a literal"),
        ('echo > "$OUT"', "redirect target that is not a literal"),
    ],
)
def test_unresolved_parts_are_denied_with_a_reason_naming_them(
    tmp_path: Path, line: str, why: str
) -> None:
    verdict = PermissionPolicy(deny=[DENY_RM], workspace=tmp_path).check(
        "exec_command", {"command": line}
    )
    assert verdict.decision is Decision.DENY
    assert why in verdict.reason
    assert f"cannot be checked against deny rule '{DENY_RM}'" in verdict.reason


def test_an_unknown_argument_is_denied_only_where_a_rule_constrains_arguments(
    tmp_path: Path,
) -> None:
    policy = PermissionPolicy(deny=["exec_command(git push *)"], workspace=tmp_path)
    assert policy.check("exec_command", {"command": "X=push; git $X"}).decision is Decision.DENY
    assert policy.check("exec_command", {"command": 'ls "$HOME"'}).decision is Decision.ALLOW
    assert policy.check("exec_command", {"command": "git log"}).decision is Decision.ALLOW


GIT_ALLOWED = [
    "git status",
    "/usr/bin/git log",
    '"git" log',
    "g''it log",
    "git status; git diff",
    "git log > out.txt",
    "git log > sub/../out.txt",
    "git log > /dev/null 2>&1",
    "git log 2> /dev/stderr >/dev/stdout",
    "git log >&2",
    "git log <<< /outside/x",
    "git log < /etc/hostname",
    "git -c color.ui=always log",
]

GIT_NOT_ALLOWED = [
    "git log > {outside}",
    "git log >> {outside}",
    "git log &> {outside}",
    "git log >| {outside}",
    "git log 1<> {outside}",
    "git log >& {outside}",
    "git log > ../outside.txt",
    "git log > sub/../../outside.txt",
    "git log > link/x",
    "git log > ~/x",
    "git -c alias.x='!rm -rf .' x",
    "git -calias.x=!sh x",
    "git config alias.x '!sh -c id'",
    "git -c core.pager='rm x' log",
    "git --config-env=core.pager=P log",
    "git status && rm x",
    "git log $(rm x)",
    "git log `rm x`",
    "git log | head",
    "git $X",
    "env git log",
    "git 'unbalanced",
]


@pytest.fixture
def git_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (ws / "link").symlink_to(tmp_path / "elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return ws


@pytest.mark.parametrize("line", GIT_ALLOWED)
def test_allow_rule_covers_plain_git(git_workspace: Path, line: str) -> None:
    policy = PermissionPolicy(allow=["exec_command(git *)"], workspace=git_workspace)
    verdict = policy.check("exec_command", {"command": line})
    assert verdict.decision is Decision.ALLOW, verdict.reason


@pytest.mark.parametrize("line", GIT_NOT_ALLOWED)
def test_allow_rule_does_not_cover_escapes(git_workspace: Path, line: str) -> None:
    outside = git_workspace.parent / "outside.txt"
    policy = PermissionPolicy(allow=["exec_command(git *)"], workspace=git_workspace)
    verdict = policy.check("exec_command", {"command": line.format(outside=outside)})
    assert verdict.decision is Decision.ASK, verdict.reason
    assert "not covered by the allow rules" in verdict.reason


def test_redirects_resolve_against_the_workdir(git_workspace: Path) -> None:
    policy = PermissionPolicy(allow=["exec_command(git *)"], workspace=git_workspace)
    inside = {"command": "git log > ../x", "workdir": "sub"}
    outside = {"command": "git log > ../../x", "workdir": "sub"}
    assert policy.check("exec_command", inside).decision is Decision.ALLOW
    verdict = policy.check("exec_command", outside)
    assert verdict.decision is Decision.ASK
    assert f"writes {git_workspace.parent / 'x'} outside the workspace" in verdict.reason


@pytest.mark.parametrize(
    ("rules", "expected", "reason"),
    [
        (
            {"allow": ["exec_command(git *)", "write_file(**/outside.txt)"]},
            Decision.ALLOW,
            "allowed by rule 'exec_command(git *)'",
        ),
        (
            {"allow": ["exec_command(git *)"], "deny": ["write_file(**/outside.txt)"]},
            Decision.DENY,
            "redirect writes {outside}: denied by rule 'write_file(**/outside.txt)'",
        ),
        (
            {"ask": ["write_file(**/outside.txt)"]},
            Decision.ASK,
            "redirect writes {outside}: rule 'write_file(**/outside.txt)' requires approval",
        ),
        (
            {"allowed_tools": ["exec_command"]},
            Decision.DENY,
            "redirect writes {outside}: write_file is not in automation.full_auto.allowed_tools",
        ),
        ({}, Decision.ALLOW, "no rule matched"),
    ],
)
def test_an_outside_redirect_gets_the_write_file_verdict(
    git_workspace: Path, rules: dict[str, Any], expected: Decision, reason: str
) -> None:
    outside = git_workspace.parent / "outside.txt"
    policy = PermissionPolicy(workspace=git_workspace, **rules)
    verdict = policy.check("exec_command", {"command": f"git log > {outside}"})
    assert verdict.decision is expected
    assert verdict.reason == reason.format(outside=outside)


def test_write_file_deny_rules_apply_to_redirects_inside_the_workspace(tmp_path: Path) -> None:
    policy = PermissionPolicy(deny=["write_file(secrets/**)"], workspace=tmp_path)
    verdict = policy.check("exec_command", {"command": "echo k > secrets/key"})
    assert verdict.decision is Decision.DENY
    assert verdict.reason.startswith(f"redirect writes {tmp_path / 'secrets/key'}: denied")
    assert policy.check("exec_command", {"command": "echo k > notes"}).allowed


def test_analysis_lists_commands_by_basename_and_as_written() -> None:
    a = analyse("sudo -u me /bin/rm -f 'a b' > out")
    assert [c.forms() for c in a.commands] == [
        ("sudo -u me /bin/rm -f a b",),
        ("rm -f a b", "/bin/rm -f a b"),
    ]
    assert a.writes == ("out",)
    assert a.unresolved == ()


def test_nesting_is_bounded() -> None:
    line = "rm x"
    for _ in range(10):
        line = "sh -c " + "'" + line.replace("'", "'\\''") + "'"
    why = {u.why for u in analyse(line).unresolved}
    assert why == {"shell code nested deeper than 6 levels"}


@pytest.mark.parametrize("opening", ["(", "$(", "{ "])
def test_absurd_nesting_is_unresolved_not_a_crash(tmp_path: Path, opening: str) -> None:
    closing = {"(": ")", "$(": ")", "{ ": "; }"}[opening]
    line = opening * 3000 + "rm x" + closing * 3000
    assert "nesting too deep to analyse" in {u.why for u in analyse(line).unresolved}
    policy = PermissionPolicy(deny=[DENY_RM], workspace=tmp_path)
    assert policy.check("exec_command", {"command": line}).decision is Decision.DENY


# --- the real CLI: a user-config deny rule against a model that rewrites the command ----------

SCRIPT = """
[[turn]]
usage = {{ input_tokens = 100, output_tokens = 10 }}
text = "Cleaning up."
[[turn.tool_calls]]
name = "exec_command"
arguments = {{ command = "bash -c 'rm -rf build'", yield_time_ms = 30000 }}

[[turn]]
usage = {{ input_tokens = 120, output_tokens = 10 }}
expect_last_tool_output_contains = "denied by rule"
text = "Trying another way."
[[turn.tool_calls]]
name = "exec_command"
arguments = {{ command = "X=rm; $X -rf build", yield_time_ms = 30000 }}

[[turn]]
usage = {{ input_tokens = 140, output_tokens = 10 }}
expect_last_tool_output_contains = "{why}"
text = "Both were refused; build is untouched."
"""


def test_exec_cli_denies_rewritten_commands_by_the_user_rule(
    tmp_path: Path, snapshot_json: Any
) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "keep").write_text("x")
    home = tmp_path / ".home"
    home.mkdir()
    (home / "config.toml").write_text(f'[permissions]\ndeny = ["{DENY_RM}"]\n')
    script = tmp_path / "bypass.toml"
    script.write_text(SCRIPT.format(why="command name that is not a literal"))
    proc = vtcode(
        ["exec", "--json", "--session-id", SESSION, "--script", str(script), "clean up"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert (tmp_path / "build" / "keep").read_text() == "x"
    events = raw_events(proc.stdout)  # each line validated against schemas/thread-event
    outputs = [
        e["item"]
        for e in events
        if e["type"] == "item.completed" and e["item"]["type"] == "tool_output"
    ]
    assert [(i["status"], i["output"]) for i in outputs] == [
        ("failed", f"permission denied for exec_command: denied by rule '{DENY_RM}'"),
        (
            "failed",
            "permission denied for exec_command: denied: a command name that is not a literal "
            "(variable, substitution, glob) in '$X -rf build' cannot be checked against deny "
            f"rule '{DENY_RM}'",
        ),
    ]
    assert [normalise(e, tmp_path) for e in events] == snapshot_json
    assert os.listdir(tmp_path / "build") == ["keep"]
