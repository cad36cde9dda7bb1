"""Secrets never persisted, the parts (issue 17, deliverable 4); tests/test_secrets.py drives the
CLI end to end.

- `child_environment` (vtcode.tools.child_env), `[shell_environment_policy]`: a table over a fixed
  environment, expected values written by hand from Codex's rules (and vtcode's `set`-last order);
- the redactor (vtcode.redact): what it collects from an environment, a table of texts, and how it
  treats events (untouched when clean; every string, enum types kept, nested JSON text).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from vtcode.config.model import EnvInherit, ShellEnvironmentPolicy
from vtcode.events.codec import encode_raw_line
from vtcode.events.enums import ToolCallStatus
from vtcode.events.types import (
    AgentMessageItem,
    ItemCompletedEvent,
    ItemStartedEvent,
    ThreadItem,
    ToolInvocationItem,
)
from vtcode.redact import MARKER, Redactor, collect_secrets
from vtcode.schemas import fast_validator
from vtcode.tools.child_env import child_environment

# ------------------------------------------------------------------ the child environment policy

ENVIRON = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "USER": "u",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm",
    "FOO_BAR": "plain",
    "OPENAI_BASE_URL": "https://api.example.invalid/v1",
    "OPENAI_API_KEY": "sk-1",
    "GITHUB_TOKEN": "ghp-1",
    "MY_SERVICE_PASSWORD": "pw-1",
    "aws_secret_access_key": "aws-1",  # lower case: the globs ignore case
    "GCP_CREDENTIALS_FILE": "/k.json",
}
SECRET_NAMES = {
    "OPENAI_API_KEY",
    "GITHUB_TOKEN",
    "MY_SERVICE_PASSWORD",
    "aws_secret_access_key",
    "GCP_CREDENTIALS_FILE",
}
PLAIN = {k: v for k, v in ENVIRON.items() if k not in SECRET_NAMES}
CORE = {k: ENVIRON[k] for k in ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TERM")}

POLICY_TABLE: list[tuple[str, dict[str, Any], dict[str, str]]] = [
    ("all-default-excludes", {}, PLAIN),
    ("all-no-default-excludes", {"ignore_default_excludes": True}, ENVIRON),
    ("core", {"inherit": EnvInherit.CORE}, CORE),
    ("core-keeps-no-secret", {"inherit": EnvInherit.CORE, "ignore_default_excludes": True}, CORE),
    ("none", {"inherit": EnvInherit.NONE}, {}),
    ("none-set", {"inherit": EnvInherit.NONE, "set": {"A": "1"}}, {"A": "1"}),
    (
        "exclude-case-insensitive",
        {"exclude": ["foo_*", "lc_*"]},
        {k: v for k, v in PLAIN.items() if k not in ("FOO_BAR", "LC_ALL")},
    ),
    (
        "exclude-without-defaults",
        {"ignore_default_excludes": True, "exclude": ["*token*"]},
        {k: v for k, v in ENVIRON.items() if k != "GITHUB_TOKEN"},
    ),
    (
        "include-only",
        {"include_only": ["PATH", "lc_*", "GITHUB_*"]},
        {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},  # the default excludes still apply
    ),
    (
        "include-only-without-defaults",
        {"include_only": ["GITHUB_*"], "ignore_default_excludes": True},
        {"GITHUB_TOKEN": "ghp-1"},
    ),
    (
        "set-wins-over-excludes-and-include-only",
        {"include_only": ["PATH"], "set": {"API_TOKEN": "mine", "PATH": "/opt/bin"}},
        {"PATH": "/opt/bin", "API_TOKEN": "mine"},
    ),
]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [(f, e) for _, f, e in POLICY_TABLE],
    ids=[n for n, _, _ in POLICY_TABLE],
)
def test_policy_table(fields: dict[str, Any], expected: dict[str, str]) -> None:
    policy = ShellEnvironmentPolicy(**fields)
    assert child_environment(policy, ENVIRON) == expected


def test_harness_overrides_come_after_the_filters_and_before_set() -> None:
    policy = ShellEnvironmentPolicy(include_only=["PATH"], set={"PAGER": "less"})
    got = child_environment(policy, ENVIRON, overrides={"TERM": "dumb", "PAGER": "cat"})
    assert got == {"PATH": "/usr/bin:/bin", "TERM": "dumb", "PAGER": "less"}


def test_the_function_is_pure() -> None:
    before = dict(ENVIRON)
    policy = ShellEnvironmentPolicy(set={"X": "1"})
    child_environment(policy, ENVIRON)["PATH"] = "changed"
    assert before == ENVIRON
    assert policy.set == {"X": "1"}


# ------------------------------------------------------------------ the redactor


def test_collects_provider_keys_otlp_headers_and_secret_names() -> None:
    env = {
        "OPENAI_API_KEY": "sk-openai-123456",
        "HF_TOKEN": "hf_abcdefgh",
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20tok-otlp-1234,x-team=team-secret-1",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=traces-key-5678",
        "My_Db_Password": "db-password-1",  # any case
        "SHORT_TOKEN": "1234567",  # too short to be a credential: ignored
        "VTCODE_TOKENIZER": "tiktoken",  # a setting whose name looks secret
        "PATH": "/usr/local/bin:/usr/bin",  # not a secret name
    }
    assert collect_secrets(env) == {
        "sk-openai-123456",
        "hf_abcdefgh",
        "authorization=Bearer%20tok-otlp-1234"[len("authorization=") :],  # as written
        "Bearer tok-otlp-1234",  # percent-decoded
        "tok-otlp-1234",  # the credential after the scheme
        "team-secret-1",
        "traces-key-5678",
        "db-password-1",
        # each OTLP headers variable whole, too (one without `k=v` pairs is still a secret)
        "authorization=Bearer%20tok-otlp-1234,x-team=team-secret-1",
        "api-key=traces-key-5678",
    }


REDACT_TABLE = [
    ("key sk-canary-0001 here", "key [REDACTED] here"),
    ("twice sk-canary-0001sk-canary-0001", "twice [REDACTED][REDACTED]"),
    ("ends in a cut secret sk-canar", "ends in a cut secret [REDACTED]"),
    ("a short cut sk-ca stays", "a short cut sk-ca stays"),  # < 6 characters say nothing
    ("not a prefix sk-canary-9", "not a prefix sk-canary-9"),
    ("https://bob:pw-1@host.example/x", "https://***@host.example/x"),
    ("git clone https://TOKEN123@github.com/o/r", "git clone https://***@github.com/o/r"),
    ("pass with @: https://bob:p@ss@host/x", "pass with @: https://***@host/x"),
    ("query mail https://host/x?to=a@b.c", "query mail https://host/x?to=a@b.c"),
    ("ssh git@github.com:o/r", "ssh git@github.com:o/r"),
    ("cut url https://bob:hunt", "cut url https://***"),
    ("a port at the end http://localhost:8080", "a port at the end http://localhost:8080"),
    ('quoted "pw\\"with\\"quotes1"', 'quoted "[REDACTED]"'),
]


@pytest.mark.parametrize(("text", "expected"), REDACT_TABLE)
def test_redact_text_table(text: str, expected: str) -> None:
    redactor = Redactor(["sk-canary-0001", 'pw"with"quotes1'])
    assert redactor.text(text) == expected


def test_an_event_without_secrets_is_passed_through_unchanged() -> None:
    redactor = Redactor(["sk-canary-0001"])
    event = ItemCompletedEvent(item=ThreadItem(id="item_1", details=AgentMessageItem(text="hi")))
    assert redactor.event(event) is event


def test_every_string_of_an_event_is_redacted_and_its_types_kept() -> None:
    redactor = Redactor(["sk-canary-0001"])
    args = {"command": "echo sk-canary-0001", "env": {"sk-canary-0001": ["x sk-canary-0001"]}}
    event = ItemStartedEvent(
        item=ThreadItem(
            id="item_2",
            details=ToolInvocationItem(
                tool_name="exec_command", arguments=args, status=ToolCallStatus.IN_PROGRESS
            ),
        )
    )
    out = redactor.event(event)
    details = out.item.details
    assert isinstance(details, ToolInvocationItem)
    assert details.arguments == {"command": "echo [REDACTED]", "env": {MARKER: ["x [REDACTED]"]}}
    assert details.status is ToolCallStatus.IN_PROGRESS  # an enum member, not a plain str
    assert args["command"] == "echo sk-canary-0001"  # the caller's objects are not modified
    assert fast_validator("thread-event").is_valid(json.loads(encode_raw_line(out)))


def test_a_secret_inside_encoded_json_text_is_found() -> None:
    """Tool output is JSON text inside a JSON string: a quote in a secret is escaped twice."""
    secret = 'pw"with"quotes1'
    redactor = Redactor([secret])
    inner = json.dumps({"output": f"X={secret}\n"})
    event = ItemCompletedEvent(item=ThreadItem(id="i", details=AgentMessageItem(text=inner)))
    out = redactor.event(event)
    assert isinstance(out.item.details, AgentMessageItem)
    assert json.loads(out.item.details.text) == {"output": "X=[REDACTED]\n"}
