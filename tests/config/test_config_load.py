"""vtcode.toml loading: layer precedence, -c typing, located errors, did-you-mean, origins."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from vtcode import schemas
from vtcode.config.load import (
    MAX_CONFIG_BYTES,
    ConfigInvalid,
    Layer,
    Source,
    check_text,
    load_config,
    user_config_path,
)
from vtcode.config.model import Durability, VtcodeConfig
from vtcode.errors import ConfigError, ExitCode
from vtcode.jsontypes import decode

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "config"


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own (empty) user config folder, never the developer's."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("VTCODE_HOME", str(home))
    # these tests are about layering and editing; what an untrusted workspace may set is
    # tests/test_config_trust.py's subject
    monkeypatch.setenv("VTCODE_TRUST_WORKSPACE", "1")
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


def problems_of(exc: pytest.ExceptionInfo[ConfigInvalid]) -> list[str]:
    return [str(p) for p in exc.value.problems]


# --------------------------------------------------------------------------------------------
# Layers


def test_no_files_gives_the_defaults(ws: Path) -> None:
    loaded = load_config(workspace=ws)
    assert loaded.config == VtcodeConfig()
    assert loaded.sources == []
    assert loaded.origin("agent.harness.max_tool_calls_per_turn") == Source(Layer.DEFAULTS)
    assert loaded.origin("agent.model") == Source(Layer.DEFAULTS)  # known, unset


def test_layer_precedence_lowest_first(ws: Path, user_home: Path, tmp_path: Path) -> None:
    user = user_home / "config.toml"
    user.write_text(
        '[agent]\nprovider = "anthropic"\nmodel = "user-model"\n'
        "[agent.harness]\nmax_tool_retries = 7\n"
        '[permissions]\nallow = ["a", "b"]\n'
    )
    workspace = ws / "vtcode.toml"
    workspace.write_text(
        '[agent]\nprovider = "openai"\n[agent.harness]\nmax_budget_usd = 1\n'
        '[permissions]\nallow = ["c"]\n'
    )
    extra = tmp_path / "extra.toml"
    extra.write_text('[agent.harness]\nmax_budget_usd = 2\n[store]\ndurability = "event"\n')
    loaded = load_config(
        workspace=ws,
        config_file=extra,
        overrides=["store.durability=os", "agent.model=cli-1", "agent.model=cli-2"],
    )
    c = loaded.config
    assert c.agent.provider == "openai"  # workspace over user
    assert c.agent.model == "cli-2"  # the last -c wins
    assert c.agent.harness.max_tool_retries == 7  # tables merge key by key
    assert c.permissions.allow == ["c"]  # arrays replace whole
    assert c.agent.harness.max_budget_usd == 2.0  # --config over workspace
    assert c.store.durability is Durability.OS  # -c over --config
    assert loaded.sources == [user, workspace, extra]

    assert loaded.origin("agent.provider") == Source(Layer.WORKSPACE, path=workspace)
    assert loaded.origin("agent.model") == Source(Layer.OVERRIDE, override="agent.model=cli-2")
    assert loaded.origin("agent.harness.max_tool_retries") == Source(Layer.USER, path=user)
    assert loaded.origin("agent.harness.max_budget_usd") == Source(Layer.FILE, path=extra)
    assert loaded.origin("permissions.allow[0]") == Source(Layer.WORKSPACE, path=workspace)
    assert loaded.origin("permissions.allow[1]") is None  # the user's array was replaced
    assert loaded.origin("store.retention.max_sessions") == Source(Layer.DEFAULTS)
    assert loaded.origin("agent.harness.nope") is None
    assert loaded.origin("not a key") is None


def test_origin_tells_workspace_hooks_from_user_hooks(ws: Path, user_home: Path) -> None:
    (user_home / "config.toml").write_text(
        '[[hooks.lifecycle.pre_compact]]\nhooks = [{ command = "user-hook" }]\n'
        '[[hooks.lifecycle.session_start]]\nhooks = [{ command = "user-start" }]\n'
    )
    (ws / "vtcode.toml").write_text(
        '[[hooks.lifecycle.session_start]]\nhooks = [{ command = "repo-start" }]\n'
    )
    loaded = load_config(workspace=ws)
    assert loaded.origin("hooks.lifecycle.pre_compact").layer is Layer.USER  # type: ignore[union-attr]
    assert loaded.origin("hooks.lifecycle.session_start").layer is Layer.WORKSPACE  # type: ignore[union-attr]
    start = loaded.config.hooks.lifecycle.session_start
    assert [h.command for m in start for h in m.hooks] == ["repo-start"]  # arrays replace
    assert loaded.origin("hooks.lifecycle.stop") == Source(Layer.DEFAULTS)
    origins = loaded.origins()
    assert origins["hooks.lifecycle.pre_compact"].layer is Layer.USER
    assert origins["agent.max_conversation_turns"].layer is Layer.DEFAULTS
    assert "agent.provider" not in origins  # no default provider: unset until chosen


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"VTCODE_HOME": "/v", "XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/v/config.toml"),
        ({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/vtcode/config.toml"),
        ({"XDG_CONFIG_HOME": "relative", "HOME": "/h"}, "/h/.config/vtcode/config.toml"),
        ({"HOME": "/h"}, "/h/.config/vtcode/config.toml"),
    ],
)
def test_user_config_location(
    env: dict[str, str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", env["HOME"])  # Path.home() reads HOME
    assert user_config_path(env) == Path(expected)


def test_xdg_user_config_is_read(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VTCODE_HOME")
    xdg = tmp_path / "xdg"
    (xdg / "vtcode").mkdir(parents=True)
    (xdg / "vtcode" / "config.toml").write_text('[agent]\nmodel = "from-xdg"\n')
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert load_config(workspace=ws).config.agent.model == "from-xdg"


# --------------------------------------------------------------------------------------------
# -c KEY=VALUE


@pytest.mark.parametrize(
    ("override", "pick", "expected"),
    [
        ("agent.harness.max_budget_usd=5", lambda c: c.agent.harness.max_budget_usd, 5.0),
        ("agent.harness.max_budget_usd=2.5", lambda c: c.agent.harness.max_budget_usd, 2.5),
        ("agent.model=gpt-4o", lambda c: c.agent.model, "gpt-4o"),  # not TOML: a string
        ("agent.model=1.5", lambda c: c.agent.model, "1.5"),  # string key keeps the text
        ("agent.model=true", lambda c: c.agent.model, "true"),
        ('agent.model="quoted value"', lambda c: c.agent.model, "quoted value"),
        ("agent.model=", lambda c: c.agent.model, ""),
        ("agent.model = spaced ", lambda c: c.agent.model, "spaced"),
        ("automation.full_auto.max_turns=7", lambda c: c.automation.full_auto.max_turns, 7),
        ("store.durability=event", lambda c: c.store.durability, Durability.EVENT),
        ("context.ledger.enabled=false", lambda c: c.context.ledger.enabled, False),
        (
            'permissions.allow=["read_file", "grep"]',
            lambda c: c.permissions.allow,
            ["read_file", "grep"],
        ),
        ("store.lock_timeout_secs=3", lambda c: c.store.lock_timeout_secs, 3.0),
        (
            "agent.model=a\n[agent]\nprovider='x'",
            lambda c: c.agent.model,
            "a\n[agent]\nprovider='x'",
        ),
        ('mcp.servers."my.srv".command=srv', lambda c: c.mcp.servers["my.srv"].command, "srv"),
    ],
)
def test_override_values_are_typed_by_their_key(
    ws: Path, override: str, pick: object, expected: object
) -> None:
    config = load_config(workspace=ws, overrides=[override]).config
    value = pick(config)  # type: ignore[operator]
    assert value == expected
    assert type(value) is type(expected)


def test_override_table_merges_into_defaults(ws: Path) -> None:
    c = load_config(
        workspace=ws, overrides=["agent.harness.tool_result_clearing={enabled = false}"]
    ).config
    assert c.agent.harness.tool_result_clearing.enabled is False
    assert c.agent.harness.tool_result_clearing.keep_tool_uses == 3  # default kept


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "agent.harness.max_budget_usd=abc",
            "-c agent.harness.max_budget_usd=abc: agent.harness.max_budget_usd: "
            'expected a float, got string "abc"',
        ),
        (
            "agent.harnes.max_budget_usd=1",
            "-c agent.harnes.max_budget_usd=1: agent.harnes: unknown key\n"
            "  hint: did you mean agent.harness?",
        ),
        (
            "store.durability=fast",
            '-c store.durability=fast: store.durability: unknown value "fast" '
            "(expected one of: event, turn, os)",
        ),
        ("=1", "-c =1: '' is not a valid key (expected dotted TOML keys like a.b.c)"),
        (
            "agent..model=x",
            "-c agent..model=x: 'agent..model' is not a valid key "
            "(expected dotted TOML keys like a.b.c)",
        ),
    ],
)
def test_override_errors_name_the_override(ws: Path, override: str, expected: str) -> None:
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws, overrides=[override])
    assert problems_of(exc) == [expected]
    assert exc.value.exit_code == ExitCode.USAGE


# --------------------------------------------------------------------------------------------
# Fixtures: every invalid file says what it expects in its header


def _expectations(path: Path) -> tuple[list[str], list[str]]:
    text = path.read_text()
    expects = re.findall(r"^# expect: (.*)$", text, flags=re.M)
    hints = re.findall(r"^# hint: (.*)$", text, flags=re.M)
    return expects, hints


INVALID = sorted((FIXTURES / "invalid").glob("*.toml"))
VALID = sorted((FIXTURES / "valid").glob("*.toml"))


def test_fixture_sets_cover_the_required_cases() -> None:
    names = {p.stem for p in INVALID}
    assert {
        "syntax_error",
        "unknown_key_typo",
        "wrong_type",
        "out_of_range",
        "bad_enum",
        "duplicate_table",
    } <= names
    assert all(_expectations(p)[0] for p in INVALID)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_fixture_errors_are_located(path: Path, ws: Path) -> None:
    expects, hints = _expectations(path)
    target = ws / "vtcode.toml"
    target.write_bytes(path.read_bytes())
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    got = exc.value.problems
    assert [
        f"{p.location}: {p.key}: {p.message}" if p.key else f"{p.location}: {p.message}"
        for p in got
    ] == [f"{target}:{e}" for e in expects]
    assert [p.hint for p in got if p.hint] == hints
    # `config check FILE` reports the same problems with the file's own name
    again = check_text(path.read_text(), str(path)).problems
    assert [p.message for p in again] == [p.message for p in got]
    assert all(str(p.location).startswith(f"{path}:") for p in again)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_fixtures_load(path: Path, ws: Path) -> None:
    (ws / "vtcode.toml").write_bytes(path.read_bytes())
    loaded = load_config(workspace=ws)
    schemas.reference_validator("vtcode-toml").validate(loaded.effective())
    assert decode(VtcodeConfig, loaded.effective()) == loaded.config


def test_full_fixture_values(ws: Path) -> None:
    (ws / "vtcode.toml").write_bytes((FIXTURES / "valid" / "full.toml").read_bytes())
    c = load_config(workspace=ws).config
    assert c.agent.harness.max_budget_usd == 12.5
    assert c.store.lock_timeout_secs == 5.0 and isinstance(c.store.lock_timeout_secs, float)
    assert c.mcp.servers["local.search"].timeout_seconds == 10.0
    assert c.mcp.servers["docs"].env == {"DOCS_ROOT": "./docs"}
    starts = c.hooks.lifecycle.session_start
    assert [m.matcher for m in starts] == [None, "^resume$"]
    assert starts[1].hooks[0].timeout_seconds == 5


def test_deprecated_hook_alias_is_read_as_stop_with_a_warning(ws: Path) -> None:
    target = ws / "vtcode.toml"
    target.write_bytes((FIXTURES / "valid" / "deprecated_alias.toml").read_bytes())
    loaded = load_config(workspace=ws)
    assert [h.command for m in loaded.config.hooks.lifecycle.stop for h in m.hooks] == [
        "notify-send done"
    ]
    assert loaded.warnings == (
        f"{target}:2:19: hooks.lifecycle.task_completed is a deprecated alias of "
        "hooks.lifecycle.stop",
    )
    assert loaded.origin("hooks.lifecycle.stop") == Source(Layer.WORKSPACE, path=target)


def test_alias_and_new_name_together_is_an_error(ws: Path) -> None:
    target = ws / "vtcode.toml"
    target.write_text("[hooks.lifecycle]\nstop = []\ntask_completion = []\n")
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    assert problems_of(exc) == [
        f"{target}:3:1: hooks.lifecycle.task_completion: both hooks.lifecycle.task_completion "
        "(deprecated alias) and hooks.lifecycle.stop are set\n"
        "  hint: move these hooks into hooks.lifecycle.stop"
    ]


# --------------------------------------------------------------------------------------------
# Errors from several layers, and file-level problems


def test_each_problem_names_the_layer_that_set_it(
    ws: Path, user_home: Path, tmp_path: Path
) -> None:
    user = user_home / "config.toml"
    user.write_text("[store]\nmax_events = 0\n")
    workspace = ws / "vtcode.toml"
    workspace.write_text("\n[agent]\nprovider = 1\n")
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws, overrides=["tools.max_tool_loops=-3"])
    assert problems_of(exc) == [
        f"{user}:2:1: store.max_events: 0 is below the minimum 1",
        f"{workspace}:3:1: agent.provider: expected a string, got integer 1",
        "-c tools.max_tool_loops=-3: tools.max_tool_loops: -3 is below the minimum 0",
    ]
    # the exception's own message is the first problem, and says how many more there are
    assert str(exc.value) == (
        f"{user}:2:1: store.max_events: 0 is below the minimum 1\n"
        "  hint: 2 more problem(s): run `vtcode config check` to list"
    )


def test_a_later_layer_that_fixes_a_value_hides_the_bad_one(ws: Path, user_home: Path) -> None:
    (user_home / "config.toml").write_text("[store]\nmax_events = 0\n")
    (ws / "vtcode.toml").write_text("[store]\nmax_events = 5\n")
    assert load_config(workspace=ws).config.store.max_events == 5


def test_syntax_errors_in_several_files_are_all_reported(ws: Path, user_home: Path) -> None:
    user = user_home / "config.toml"
    user.write_text("[agent\n")
    workspace = ws / "vtcode.toml"
    workspace.write_text("a = 1\na = 2\n")
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    assert [p.location for p in exc.value.problems] == [f"{user}:1:7", f"{workspace}:2:1"]


def test_missing_config_file_is_an_error(ws: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws, config_file=missing)
    assert problems_of(exc) == [f"{missing}: no such config file"]


def test_a_directory_is_not_a_config_file(ws: Path) -> None:
    (ws / "vtcode.toml").mkdir()
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    assert problems_of(exc) == [f"{ws / 'vtcode.toml'}: not a regular file"]


def test_size_cap(ws: Path) -> None:
    target = ws / "vtcode.toml"
    body = b'[agent]\nmodel = "x"\n'
    target.write_bytes(body + b"#" * (MAX_CONFIG_BYTES - len(body) - 1) + b"\n")
    assert load_config(workspace=ws).config.agent.model == "x"  # exactly 1 MiB is fine
    target.write_bytes(body + b"#" * (MAX_CONFIG_BYTES - len(body)) + b"\n")
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    assert problems_of(exc) == [f"{target}: config file is larger than 1048576 bytes"]


def test_invalid_utf8_is_located(ws: Path) -> None:
    target = ws / "vtcode.toml"
    target.write_bytes(b'[agent]\nmodel = "caf\xe9"\n')
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    assert problems_of(exc) == [f"{target}:2:13: not valid UTF-8"]


def test_byte_order_mark_and_crlf_are_accepted(ws: Path) -> None:
    (ws / "vtcode.toml").write_bytes(b'\xef\xbb\xbf[agent]\r\nmodel = "x"\r\nprovidr = 1\r\n')
    with pytest.raises(ConfigInvalid) as exc:
        load_config(workspace=ws)
    assert [p.location for p in exc.value.problems] == [f"{ws / 'vtcode.toml'}:3:1"]


def test_config_error_is_exit_2(ws: Path) -> None:
    (ws / "vtcode.toml").write_text("x = \n")
    with pytest.raises(ConfigError) as exc:
        load_config(workspace=ws)
    assert exc.value.exit_code == 2


def test_effective_is_plain_data_that_round_trips(ws: Path) -> None:
    (ws / "vtcode.toml").write_bytes((FIXTURES / "valid" / "full.toml").read_bytes())
    loaded = load_config(workspace=ws)
    data = loaded.effective()
    data["agent"]["provider"] = "changed"  # a fresh copy: the loaded config is untouched
    assert loaded.effective()["agent"]["provider"] == "anthropic"
    assert dataclasses.replace(loaded.config) == decode(VtcodeConfig, loaded.effective())
