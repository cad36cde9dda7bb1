"""`config set` / `get` / `init` at the library level: comments kept, edits validated, locked."""

from __future__ import annotations

import fcntl
import os
import re
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from vtcode.config.edit import get_value, init, set_value, starter_toml
from vtcode.config.load import ConfigInvalid, Layer, Source, load_config, parse_layer, resolve
from vtcode.config.model import VtcodeConfig
from vtcode.errors import ConfigError, ExitCode, LockBusyError
from vtcode.jsontypes import encode

REPO = Path(__file__).resolve().parents[2]


class TomlSnapshot(SingleFileSnapshotExtension):
    """One readable `.toml` file per snapshot."""

    _write_mode = WriteMode.TEXT
    file_extension = "toml"


@pytest.fixture
def snapshot_toml(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(TomlSnapshot)


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user-home"
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


COMMENTED = """\
# Project settings for vtcode.
#   (this header must survive every edit, byte for byte)

[agent]   # which model
provider = "openai"    # keep this comment
# model = "gpt-4o"     <- a commented-out line

[agent.harness]
max_tool_retries = 3   # retries

    # an indented comment between keys
max_tool_calls_per_turn = 120

[store]
durability = "os"  # fsync never

# trailing comment at the end
"""


def test_set_keeps_comments_and_layout(ws: Path, snapshot_toml: SnapshotAssertion) -> None:
    path = ws / "vtcode.toml"
    path.write_text(COMMENTED)
    set_value(path, "agent.harness.max_tool_retries", "5")  # an existing leaf
    set_value(path, "agent.harness.max_budget_usd", "5")  # a new leaf in a table
    set_value(path, "agent.harness.tool_result_clearing.enabled", "false")  # a new sub-table
    set_value(path, "telemetry.otel.endpoint", "http://127.0.0.1:4318")  # new tables
    set_value(path, "agent.model", "gpt-4o")
    text = path.read_text()
    assert text == snapshot_toml
    for line in COMMENTED.splitlines():
        if "max_tool_retries" not in line:
            assert line in text.splitlines()  # every other line is still there, unchanged
    c = load_config(workspace=ws).config
    assert c.agent.harness.max_tool_retries == 5
    assert c.agent.harness.max_budget_usd == 5.0
    assert c.agent.harness.tool_result_clearing.enabled is False
    assert c.telemetry.otel.endpoint == "http://127.0.0.1:4318"


def test_set_keeps_dotted_and_inline_styles(ws: Path, snapshot_toml: SnapshotAssertion) -> None:
    path = ws / "vtcode.toml"
    path.write_text(
        "# dotted style\n"
        "agent.harness.max_budget_usd = 1.0 # budget\n"
        "agent.provider = 'openai'\n"
        "store.retention = { max_sessions = 3 }  # inline\n"
    )
    set_value(path, "agent.harness.max_budget_usd", "2.5")
    set_value(path, "store.retention.max_age_days", "9")
    set_value(path, "agent.provider", "anthropic")
    assert path.read_text() == snapshot_toml
    c = load_config(workspace=ws).config
    assert (c.agent.harness.max_budget_usd, c.agent.provider) == (2.5, "anthropic")
    assert (c.store.retention.max_sessions, c.store.retention.max_age_days) == (3, 9)


def test_set_a_table_value_sets_its_leaves(ws: Path) -> None:
    path = ws / "vtcode.toml"
    path.write_text("[agent.harness.tool_result_clearing]\n# keep\nenabled = true\n")
    set_value(path, "agent.harness.tool_result_clearing", "{enabled = false, keep_tool_uses = 9}")
    text = path.read_text()
    assert "# keep\n" in text
    assert tomllib.loads(text)["agent"]["harness"]["tool_result_clearing"] == {
        "enabled": False,
        "keep_tool_uses": 9,
    }


def test_set_creates_the_file(ws: Path) -> None:
    path = ws / "vtcode.toml"
    result = set_value(path, "agent.harness.max_budget_usd", "3")
    assert result.created and result.value == 3.0 and result.key == "agent.harness.max_budget_usd"
    assert path.read_text() == "[agent.harness]\nmax_budget_usd = 3.0\n"


def test_set_user_config_creates_a_private_folder(user_home: Path) -> None:
    path = user_home / "config.toml"
    set_value(path, "agent.provider", "openai", layer=Layer.USER, make_parents=True)
    assert stat.S_IMODE(user_home.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert tomllib.loads(path.read_text()) == {"agent": {"provider": "openai"}}


def test_set_keeps_the_file_mode_and_symlinks(ws: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "vtcode.toml"
    real.parent.mkdir()
    real.write_text("[agent]\n")
    real.chmod(0o644)
    link = ws / "vtcode.toml"
    link.symlink_to(real)
    set_value(link, "agent.model", "m")
    assert link.is_symlink()
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    assert tomllib.loads(real.read_text()) == {"agent": {"model": "m"}}


@pytest.mark.parametrize(
    ("key", "value", "message", "hint"),
    [
        (
            "agent.harness.max_budget_usd",
            "lots",
            'agent.harness.max_budget_usd: expected a float, got string "lots"',
            "the file was not changed",
        ),
        (
            "store.durability",
            "sometimes",
            'store.durability: unknown value "sometimes" (expected one of: event, turn, os)',
            "the file was not changed",
        ),
        (
            "automation.full_auto.max_turns",
            "0",
            "automation.full_auto.max_turns: 0 is below the minimum 1",
            "the file was not changed",
        ),
        (
            "agent.harness.max_budgt_usd",
            "1",
            "agent.harness.max_budgt_usd: unknown key",
            "did you mean agent.harness.max_budget_usd?",
        ),
        (
            "agent.harnes.max_budget_usd",
            "1",
            "agent.harnes.max_budget_usd: unknown key",
            "did you mean agent.harness?",
        ),
    ],
)
def test_set_refuses_invalid_edits_and_changes_nothing(
    ws: Path, key: str, value: str, message: str, hint: str
) -> None:
    path = ws / "vtcode.toml"
    path.write_text(COMMENTED)
    before = path.read_bytes()
    with pytest.raises(ConfigInvalid) as exc:
        set_value(path, key, value)
    assert exc.value.exit_code == ExitCode.USAGE
    problem = exc.value.problems[0]
    assert f"{problem.key}: {problem.message}" == message
    assert problem.hint == hint
    assert path.read_bytes() == before


def test_set_locates_other_problems_in_the_original_file(ws: Path) -> None:
    path = ws / "vtcode.toml"
    path.write_text("[store]\n\nmax_events = 0\n")
    with pytest.raises(ConfigInvalid) as exc:
        set_value(path, "agent.model", "x")  # valid itself, but the file is not
    assert str(exc.value.problems[0]) == (
        f"{path}:3:1: store.max_events: 0 is below the minimum 1\n  hint: the file was not changed"
    )
    set_value(path, "store.max_events", "10")  # ...and `set` can fix it
    assert load_config(workspace=ws).config.store.max_events == 10


def test_set_refuses_a_file_that_is_not_valid_toml(ws: Path) -> None:
    path = ws / "vtcode.toml"
    path.write_text("[store]\n[agent]\n[store]\n")  # tomlkit would accept this; tomllib does not
    before = path.read_bytes()
    with pytest.raises(ConfigInvalid) as exc:
        set_value(path, "agent.model", "x")
    assert str(exc.value) == (
        f"{path}:3:1: TOML syntax error: store is declared twice (duplicate table or key)"
    )
    assert path.read_bytes() == before


def test_set_inside_a_non_table_is_refused(ws: Path) -> None:
    path = ws / "vtcode.toml"
    path.write_text("agent = 5\n")
    with pytest.raises(ConfigError) as exc:
        set_value(path, "agent.model", "x")
    assert str(exc.value) == (
        f"{path}: cannot set a key inside agent: it is not a table here\n"
        "  hint: edit agent in the file"
    )
    assert path.read_text() == "agent = 5\n"


def test_set_waits_for_the_lock_and_reports_busy(ws: Path) -> None:
    path = ws / "vtcode.toml"
    path.write_text("[agent]\n")
    fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)  # the edit lock is a flock on the folder
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(LockBusyError) as exc:
            set_value(path, "agent.model", "x", lock_timeout=0.05)
    finally:
        os.close(fd)
    assert exc.value.exit_code == ExitCode.LOCK_BUSY
    assert path.read_text() == "[agent]\n"
    set_value(path, "agent.model", "x", lock_timeout=0.05)  # free again once the holder closes
    assert sorted(p.name for p in ws.iterdir()) == ["vtcode.toml"]


def test_concurrent_set_from_several_processes_loses_nothing(ws: Path, user_home: Path) -> None:
    path = ws / "vtcode.toml"
    path.write_text("# shared file\n[agent]\nprovider = 'openai'\n")
    edits = {
        "agent.model": "m1",
        "agent.harness.max_budget_usd": "1.5",
        "agent.harness.max_tool_retries": "4",
        "store.durability": "event",
        "tools.max_tool_loops": "11",
        "context.ledger.max_entries": "30",
    }
    env = {**os.environ, "VTCODE_HOME": str(user_home), "NO_COLOR": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "vtcode", "-C", str(ws), "config", "set", key, value],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for key, value in edits.items()
    ]
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err.decode()
    text = path.read_text()
    assert text.startswith("# shared file\n")
    c = load_config(workspace=ws).config
    assert c.agent.provider == "openai"
    assert c.agent.model == "m1"
    assert c.agent.harness.max_budget_usd == 1.5
    assert c.agent.harness.max_tool_retries == 4
    assert c.store.durability == "event"
    assert c.tools.max_tool_loops == 11
    assert c.context.ledger.max_entries == 30
    assert not list(ws.glob(".vtcode.toml.*.tmp"))  # no temp files left behind


# --------------------------------------------------------------------------------------------
# get


def test_get_value(ws: Path) -> None:
    (ws / "vtcode.toml").write_text("[agent.harness]\nmax_budget_usd = 4\n")
    loaded = load_config(workspace=ws)
    assert get_value(loaded, "agent.harness.max_budget_usd") == 4.0
    assert get_value(loaded, "agent.model") is None  # known, unset
    assert get_value(loaded, "store.retention") == {
        "max_sessions": 50,
        "max_age_days": 30,
        "keep_loop_steps": 20,
    }
    assert get_value(loaded, "mcp.servers") == {}
    with pytest.raises(ConfigInvalid) as exc:
        get_value(loaded, "store.retention.max_sesions")
    assert exc.value.problems[0].hint == "did you mean store.retention.max_sessions?"


# --------------------------------------------------------------------------------------------
# init


def test_init_writes_a_valid_starter_and_refuses_to_overwrite(ws: Path) -> None:
    path = init(ws)
    assert path == ws / "vtcode.toml"
    assert path.read_text() == starter_toml()
    assert load_config(workspace=ws).config == VtcodeConfig()  # everything is commented out
    path.write_text("[agent]\nmodel = 'mine'\n")
    with pytest.raises(ConfigError) as exc:
        init(ws)
    assert str(exc.value) == f"{path}: already exists\n  hint: use --force to overwrite it"
    assert path.read_text() == "[agent]\nmodel = 'mine'\n"
    init(ws, force=True)
    assert path.read_text() == starter_toml()


def test_starter_lines_uncommented_are_exactly_the_defaults() -> None:
    """Uncommenting every `# [table]` and `# key = value` line gives back the defaults."""
    keys_part = starter_toml().split("\n# Examples")[0]
    lines = [
        line[2:]
        for line in keys_part.splitlines()
        if re.match(r"# (\[[a-z_.]+\]$|[a-z_]+ = )", line) and "# unset by default" not in line
    ]
    text = "\n".join(lines)
    data = tomllib.loads(text)
    loaded = resolve([parse_layer(text, Source(Layer.FILE), "starter")])
    assert loaded.config == VtcodeConfig()
    assert data == _without_none(encode(VtcodeConfig()))  # every key with a default is there


def _without_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: _without_none(v) if isinstance(v, dict) else v for k, v in d.items()}


def test_repo_fixture_files_are_valid_toml_for_set() -> None:
    for path in sorted((REPO / "fixtures" / "config" / "valid").glob("*.toml")):
        tomllib.loads(path.read_text())


def test_rendered_effective_config_reads_back(ws: Path) -> None:
    """`config show` prints TOML that is itself a valid config with the same values."""
    from vtcode.config.render import document, inline

    (ws / "vtcode.toml").write_bytes((REPO / "fixtures/config/valid/full.toml").read_bytes())
    loaded = load_config(workspace=ws)
    text = document(loaded.effective())
    assert tomllib.loads(text) == loaded.effective()
    again = resolve([parse_layer(text, Source(Layer.FILE), "shown")])
    assert again.config == loaded.config
    hooks = loaded.effective()["hooks"]["lifecycle"]["session_start"]
    assert tomllib.loads(f"v = {inline(hooks)}")["v"] == hooks


@pytest.mark.parametrize(
    ("before", "value", "after"),
    [
        ("agent.model = 'a'\n", "b-1", "agent.model = 'b-1'\n"),  # literal stays literal
        ('agent.model = "a"\n', "b-1", 'agent.model = "b-1"\n'),  # basic stays basic
        ("agent.model = 'a'\n", "it's", 'agent.model = "it\'s"\n'),  # a quote cannot be literal
        ("agent.model = 'a'\n", "a\\tb\\u0007", 'agent.model = "a\\tb\\u0007"\n'),
        ("", "m", '[agent]\nmodel = "m"\n'),  # a new key is a basic string
    ],
)
def test_set_string_quoting_is_the_same_on_every_tomlkit(
    ws: Path, before: str, value: str, after: str
) -> None:
    """The written file must not depend on the tomlkit version pip picked (0.13 and 0.15 differ)."""
    path = ws / "vtcode.toml"
    path.write_text(before)
    set_value(path, "agent.model", f'"{value}"' if "\\" in value else value)
    assert path.read_text() == after
    assert load_config(workspace=ws).config.agent.model == tomllib.loads(after)["agent"]["model"]
