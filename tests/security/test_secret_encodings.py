"""Secrets by other names and in other encodings (issue 23 item 8).

- Names: the default child-environment excludes and the redactor share one judgement
  (`vtcode.redact.is_secret_name`); a table of names that are and are not secrets.
- Encodings: the redactor removes base64 (standard and URL alphabets, padded or not) and hex
  (either case) of every secret it knows, at the three byte alignments inside a longer base64
  stream, wrapped at 60 or 76 columns, raw or JSON-escaped. The check is independent of the
  implementation: `recoverable` decodes every base64/hex run of the output at every alignment and
  looks for the secret's middle.
- Through the CLI: DB_PASS, GITHUB_PAT, MY_PASSWD, ANTHROPIC_AUTH and the OTLP header variables
  never reach a real exec_command child (`env`); with the default excludes turned off, `env`
  piped through `base64`, `base64 -w0`, `basenc --base64url` and a hex dump leaves none of them
  recoverable from the log or stdout.
- `config show` masks URL passwords, secret query values and secret-named values.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.exec_support import raw_events, vtcode
from vtcode.config.mask import mask_secrets, mask_url
from vtcode.config.model import ShellEnvironmentPolicy
from vtcode.events.enums import ToolCallStatus
from vtcode.events.types import ItemCompletedEvent, ThreadItem, ToolOutputItem
from vtcode.redact import MARKER, Redactor, collect_secrets, is_secret_name
from vtcode.tools.child_env import child_environment

# ------------------------------------------------------------------------------------ names

SECRET = [
    "DB_PASS",
    "GITHUB_PAT",
    "MY_PASSWD",
    "ANTHROPIC_AUTH",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "PGPASSWORD",
    "MYSQL_PWD",
    "GPG_PASSPHRASE",
    "SESSION_COOKIE",
    "SSH_PRIVATE_KEY",
    "SENTRY_DSN",
    "PAT",
    "ci_pat_2",
    "aws_secret_access_key",
    "NPM_TOKEN",
    "GCP_CREDENTIALS",
    "SSH_AUTH_SOCK",
    "BASIC_AUTH_HEADER",
]
NOT_SECRET = [
    "PWD",
    "OLDPWD",
    "PATH",
    "PYTHONPATH",
    "HOME",
    "TERM",
    "LANG",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "VTCODE_TOKENIZER",
    "PATCH_LEVEL",
    "COMPATIBILITY",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names_are_withheld_and_collected(name: str) -> None:
    assert is_secret_name(name)
    env = {name: "value-of-the-variable-42", "PATH": "/bin"}
    assert child_environment(ShellEnvironmentPolicy(), env) == {"PATH": "/bin"}
    assert Redactor(collect_secrets(env)).text("x value-of-the-variable-42") == f"x {MARKER}"


@pytest.mark.parametrize("name", NOT_SECRET)
def test_other_names_reach_children(name: str) -> None:
    assert not is_secret_name(name)
    env = {name: "/some/value/1234"}
    assert child_environment(ShellEnvironmentPolicy(), env) == env


def test_a_url_password_in_any_variable_is_a_secret_in_every_encoding() -> None:
    env = {"DATABASE_URL": "postgres://app:s3cr%40t-db-pass@db/x"}
    r = Redactor(collect_secrets(env))
    for raw in ("s3cr@t-db-pass", "s3cr%40t-db-pass"):
        out = r.text(base64.b64encode(f"pw={raw}\n".encode()).decode())
        assert not recoverable(out, raw), out


# -------------------------------------------------------------------------------- encodings

_RUN = re.compile(r"[A-Za-z0-9+/=_\-]+")
_HEX_RUN = re.compile(r"[0-9a-fA-F]+")


def _unwrap(text: str) -> str:
    return text.replace("\\r", "").replace("\\n", "").replace("\r", "").replace("\n", "")


def recoverable(text: str, secret: str) -> bool:
    """Whether the middle of `secret` (all but two bytes each side) can be decoded from some
    base64, base64url or hex run of `text`, line breaks removed, at any alignment."""
    raw = secret.encode()
    middle = raw[2:-2] if len(raw) > 8 else raw
    flat = _unwrap(text)
    for run in _RUN.findall(flat):
        std = run.replace("-", "+").replace("_", "/").rstrip("=")
        for shift in range(4):
            chunk = std[shift:]
            chunk = chunk[: len(chunk) // 4 * 4]
            try:
                if middle in base64.b64decode(chunk, validate=True):
                    return True
            except (binascii.Error, ValueError):
                pass
    for run in _HEX_RUN.findall(flat):
        for shift in range(2):
            chunk = run[shift:]
            if middle in bytes.fromhex(chunk[: len(chunk) // 2 * 2]):
                return True
    return secret in text


def _wrap(text: str, width: int) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


SECRETS = [
    "sk-abc123",  # 9 bytes
    "ghp_0123456789abcdefABCDEF0123456789abcd",
    "p@ss/w+rd?~~~>>>",  # bytes that give + and / in base64
    "correct-horse-battery-staple-and-a-much-longer-tail-" * 2,
    "ünïcødé-sécret-välue",
]


def _encodings(secret: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pre in range(6):
        for post in ("", "\n", "xyz"):
            data = b"A" * pre * 7 + secret.encode() + post.encode()
            std = base64.b64encode(data).decode()
            url = base64.urlsafe_b64encode(data).decode()
            tag = f"pre{pre}-post{len(post)}"
            out[f"b64-{tag}"] = std
            out[f"b64-nopad-{tag}"] = std.rstrip("=")
            out[f"url-{tag}"] = url
            out[f"url-nopad-{tag}"] = url.rstrip("=")
            out[f"b64-wrap76-{tag}"] = _wrap(std, 76)
            out[f"b64-wrap60-{tag}"] = _wrap(std, 60)
            out[f"hex-{tag}"] = data.hex()
            out[f"HEX-{tag}"] = data.hex().upper()
            out[f"hex-wrap60-{tag}"] = _wrap(data.hex(), 60)
    return out


@pytest.mark.parametrize("secret", SECRETS)
def test_every_encoding_of_every_secret_is_removed(secret: str) -> None:
    r = Redactor([secret])
    failures = []
    for name, encoded in _encodings(secret).items():
        for form, text in (("raw", f"out: {encoded} end"), ("json", json.dumps({"o": encoded}))):
            assert recoverable(text, secret), (name, form)  # the checker sees it before
            if recoverable(r.text(text), secret):
                failures.append(f"{name}/{form}")
    assert failures == []


def test_encoded_secret_in_an_event_is_removed() -> None:
    secret = "ghp_canary_event_0a1b2c3d4e5f"
    stream = base64.b64encode(b"HOME=/root\nGITHUB_TOKEN=" + secret.encode() + b"\n").decode()
    output = json.dumps({"output": _wrap(stream, 76), "exit_code": 0})
    event = ItemCompletedEvent(
        item=ThreadItem(
            id="call_1:output",
            details=ToolOutputItem(
                call_id="call_1", output=output, status=ToolCallStatus.COMPLETED
            ),
        )
    )
    out = Redactor([secret]).event(event)
    assert out is not event
    assert isinstance(out.item.details, ToolOutputItem)
    assert MARKER in out.item.details.output
    assert not recoverable(out.item.details.output, secret)


def test_clean_text_is_left_alone() -> None:
    r = Redactor(["ghp_0123456789abcdefABCDEF0123456789abcd"])
    text = base64.b64encode(b"nothing to see here, just a long ordinary value 123").decode()
    assert r.text(text) is text or r.text(text) == text


# ------------------------------------------------------------------------- config show masks

MASK_TABLE = [
    ("https://bob:hunter2@host/v1", "https://bob:***@host/v1"),
    ("https://bob:p%40ss@host:8443/v1", "https://bob:***@host:8443/v1"),
    ("https://bob@host/v1", "https://bob@host/v1"),  # no password: the user name stays
    ("https://host/v1?api_key=abc&x=1", "https://host/v1?api_key=***&x=1"),
    ("https://host/v1?x=1&token=abc&Signature=zz", "https://host/v1?x=1&token=***&Signature=***"),
    ("https://host/v1?access_token=abc#frag", "https://host/v1?access_token=***#frag"),
    (
        "postgres://u:pw@db/x?password=y&sslmode=require",
        "postgres://u:***@db/x?password=***&sslmode=require",
    ),
    ("plain text a=b", "plain text a=b"),
    ("host:8080", "host:8080"),
]


@pytest.mark.parametrize(("text", "expected"), MASK_TABLE)
def test_mask_url(text: str, expected: str) -> None:
    assert mask_url(text) == expected


def test_mask_secret_named_values_but_not_names_of_variables() -> None:
    data = {
        "env": {"API_KEY": "sk-1", "PLAIN": "ok", "DB_PASS": ""},
        "providers": [{"api_key_env": "OPENAI_API_KEY", "base_url": "http://u:p@h/v1"}],
        "max_tokens": 5,
    }
    assert mask_secrets(data) == {
        "env": {"API_KEY": "***", "PLAIN": "ok", "DB_PASS": ""},
        "providers": [{"api_key_env": "OPENAI_API_KEY", "base_url": "http://u:***@h/v1"}],
        "max_tokens": 5,
    }


@pytest.mark.parametrize("flags", [[], ["--json"], ["--origin"], ["--json", "--origin"]])
def test_config_show_masks_credentials(tmp_path: Path, flags: list[str]) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(
        '[providers.mine]\nkind = "openai"\n'
        'base_url = "https://robot:url-pass-31337@llm.example/v1?api_key=qk-9911&region=eu"\n'
        '[mcp.servers.x]\ncommand = "srv"\nenv = { SERVICE_TOKEN = "tok-5566778899" }\n'
    )
    proc = vtcode(["config", "show", *flags], tmp_path, env={"VTCODE_HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stderr
    for secret in ("url-pass-31337", "qk-9911", "tok-5566778899"):
        assert secret not in proc.stdout
    assert "https://robot:***@llm.example/v1?api_key=***&region=eu" in proc.stdout
    if "--json" in flags:
        json.loads(proc.stdout)


# ------------------------------------------------------------------------- through the CLI

CANARIES = {
    "DB_PASS": "db-pass-canary-7f3a91",
    "GITHUB_PAT": "github_pat_canary_11AAZZ",
    "MY_PASSWD": "passwd-canary-55e2c1",
    "ANTHROPIC_AUTH": "anthropic-auth-canary-9b",
    "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=otlp-canary-hdr-7788",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=Bearer otlp-canary-traces-4455",
    "SESSION_COOKIE": "cookie-canary-123abc",
}
SECRET_VALUES = [
    "db-pass-canary-7f3a91",
    "github_pat_canary_11AAZZ",
    "passwd-canary-55e2c1",
    "anthropic-auth-canary-9b",
    "otlp-canary-hdr-7788",
    "otlp-canary-traces-4455",
    "cookie-canary-123abc",
]
PIPES = [
    "env",
    "env | base64",
    "env | base64 -w0",
    "env | basenc --base64url",
    "env | basenc --base64url -w0 | tr -d =",
    "env | od -An -v -tx1 | tr -d ' \\n'",
    "env | od -An -v -tx1 | tr -d ' \\n' | tr a-f A-F",
    "env | sed 1d | base64",
    "env | sed 1d | base64 -w 76",
]


def _script(commands: list[str]) -> str:
    out = '[provider]\nmodel = "replay-1"\n\n'
    for command in commands:
        out += (
            '[[turn]]\n[[turn.tool_calls]]\nname = "exec_command"\n'
            f"[turn.tool_calls.arguments]\ncommand = {json.dumps(command)}\n"
            "yield_time_ms = 30000\n\n"
        )
    return out + '[[turn]]\ntext = "done"\n'


def _outputs(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in events:
        item = e.get("item")
        completed = e["type"] == "item.completed" and isinstance(item, dict)
        if completed and item["type"] == "tool_output":
            out.append(json.loads(item["output"]).get("output", ""))
    return out


@pytest.mark.parametrize("policy", ["default", "no-default-excludes"])
def test_secrets_by_other_names_never_reach_the_log(tmp_path: Path, policy: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "env.toml"
    script.write_text(_script(PIPES))
    args = ["exec", "--json", "--script", str(script), "--session-id", "s1", "go"]
    if policy != "default":
        args = ["-c", "shell_environment_policy.ignore_default_excludes=true", *args]
    proc = vtcode(args, ws, env=CANARIES)
    assert proc.returncode == 0, proc.stderr
    events = raw_events(proc.stdout)  # schema-valid lines
    outputs = _outputs(events)
    assert len(outputs) == len(PIPES)
    if policy == "default":
        names = {ln.split("=", 1)[0] for ln in outputs[0].splitlines()}
        assert not names & set(CANARIES), names & set(CANARIES)
    else:
        # The children saw them (every pipe printed an encoding): the redactor alone removed them.
        assert [MARKER in o for o in outputs] == [True] * len(PIPES), outputs
    log = (ws / ".vtcode" / "sessions" / "s1" / "events.jsonl").read_text()
    leaks = [
        (where, value)
        for where, text in (("stdout", proc.stdout), ("stderr", proc.stderr), ("log", log))
        for value in SECRET_VALUES
        if recoverable(text, value)
    ]
    assert leaks == []
