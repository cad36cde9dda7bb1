"""`vtcode config ...` as users run it: real processes, exit codes, stdout vs stderr."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.conftest import RunVtcode
from vtcode import schemas
from vtcode.config.key_status import NO_EFFECT_WARNING

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "config"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "user-home"
    h.mkdir()
    return h


@pytest.fixture
def run(run_vtcode: RunVtcode, home: Path, tmp_path: Path) -> RunVtcode:
    """`vtcode -C WS ...` with an isolated user config."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)

    def go(args: list[str], **kw: object) -> tuple[int, str, str]:
        env = {"VTCODE_HOME": str(home), **kw.pop("env", {})}  # type: ignore[dict-item]
        return run_vtcode(["-C", str(ws), *args], env=env, **kw)  # type: ignore[arg-type]

    return go


def test_check_stdin_reports_located_problems(run: RunVtcode) -> None:
    text = (FIXTURES / "invalid" / "unknown_key_typo.toml").read_text()
    rc, out, err = run(["config", "check", "-"], input=text)
    assert rc == 2
    assert out == ""
    assert err == (
        "error: <stdin>:4:1: agent.harness.max_budget_usdd: unknown key\n"
        "  hint: did you mean agent.harness.max_budget_usd?\n"
    )
    rc, out, err = run(["config", "check", "-"], input='[agent]\nprovider = "openai"\n')
    assert (rc, out, err) == (0, "<stdin>: valid\n", "")


def test_check_file_json(run: RunVtcode) -> None:
    bad = FIXTURES / "invalid" / "several.toml"
    rc, out, _ = run(["config", "check", "--json", str(bad)])
    assert rc == 2
    report = json.loads(out)
    assert report["valid"] is False
    assert [p["location"] for p in report["problems"]] == [
        f"{bad}:5:1",
        f"{bad}:6:1",
        f"{bad}:9:1",
    ]
    assert report["problems"][0] == {
        "location": f"{bad}:5:1",
        "key": "agent.provider",
        "message": "expected a string, got integer 7",
    }


def test_check_without_file_checks_every_layer(run: RunVtcode, tmp_path: Path, home: Path) -> None:
    (home / "config.toml").write_text("[agent]\nmodel = 'x'\n")
    (tmp_path / "ws" / "vtcode.toml").write_text("[store]\ndurability = 'event'\n")
    rc, out, _ = run(["config", "check"])
    assert rc == 0
    assert out == f"{home / 'config.toml'}: valid\n{tmp_path / 'ws' / 'vtcode.toml'}: valid\n"
    rc, out, err = run(["-c", "store.durability=never", "config", "check"])
    assert rc == 2 and out == ""
    assert err == (
        'error: -c store.durability=never: store.durability: unknown value "never" '
        "(expected one of: event, turn, os)\n"
    )


def test_an_invalid_config_stops_any_command_with_exit_2(run: RunVtcode, tmp_path: Path) -> None:
    target = tmp_path / "ws" / "vtcode.toml"
    target.write_text("[agent]\nprovider = 7\n")
    rc, out, err = run(["config", "show"])
    assert (rc, out) == (2, "")
    assert err == f"error: {target}:2:1: agent.provider: expected a string, got integer 7\n"
    assert "Traceback" not in err


def test_set_then_get_then_show(run: RunVtcode, tmp_path: Path) -> None:
    target = tmp_path / "ws" / "vtcode.toml"
    target.write_text("# mine\n[agent]\nprovider = 'openai'  # keep\n")
    rc, out, err = run(["config", "set", "agent.harness.max_budget_usd", "5"])
    assert (rc, out) == (0, "")
    assert err == f"{target}: set agent.harness.max_budget_usd = 5.0\n"
    assert target.read_text().startswith("# mine\n[agent]\nprovider = 'openai'  # keep\n")

    assert run(["config", "get", "agent.harness.max_budget_usd"])[:2] == (0, "5.0\n")
    assert run(["config", "get", "agent.provider"])[:2] == (0, "openai\n")
    assert run(["config", "get", "--json", "agent.model"])[:2] == (0, "null\n")
    rc, out, err = run(["config", "get", "agent.model"])
    assert (rc, out, err) == (0, "", "agent.model is not set\n")
    rc, out, _ = run(["config", "get", "store.retention"])
    assert (rc, out) == (0, "max_sessions = 50\nmax_age_days = 30\nkeep_loop_steps = 20\n")

    rc, out, _ = run(["config", "show"])
    assert rc == 0
    assert tomllib.loads(out)["agent"]["harness"]["max_budget_usd"] == 5.0
    rc, out, _ = run(["config", "show", "--json"])
    schemas.reference_validator("vtcode-toml").validate(json.loads(out))


def test_show_origin(run: RunVtcode, tmp_path: Path, home: Path) -> None:
    (home / "config.toml").write_text("[agent]\nprovider = 'anthropic'\n")
    ws_file = tmp_path / "ws" / "vtcode.toml"
    ws_file.write_text("[[hooks.lifecycle.pre_compact]]\nhooks = [{ command = 'x' }]\n")
    rc, out, _ = run(["-c", "agent.model=m", "config", "show", "--origin", "--json"])
    assert rc == 0
    origins = json.loads(out)["origins"]
    assert origins["agent.provider"] == {"layer": "user", "path": str(home / "config.toml")}
    # an untrusted workspace's own hook: set by the workspace, left to the hooks trust gate
    assert origins["hooks.lifecycle.pre_compact"] == {
        "layer": "workspace",
        "path": str(ws_file),
        "workspace": "gated",
    }
    assert origins["agent.model"] == {"layer": "override", "override": "agent.model=m"}
    assert origins["store.durability"] == {"layer": "defaults"}
    rc, out, _ = run(["config", "show", "--origin"])
    line = next(x for x in out.splitlines() if x.startswith("agent.provider = "))
    assert line.endswith(f"# user ({home / 'config.toml'})")


def test_set_errors_exit_2_and_leave_the_file(run: RunVtcode, tmp_path: Path) -> None:
    target = tmp_path / "ws" / "vtcode.toml"
    target.write_text("[agent]\n")
    rc, out, err = run(["config", "set", "agent.harness.max_budgt_usd", "5"])
    assert (rc, out) == (2, "")
    assert err == (
        "error: agent.harness.max_budgt_usd: unknown key\n"
        "  hint: did you mean agent.harness.max_budget_usd?\n"
    )
    rc, _, err = run(["config", "set", "automation.full_auto.max_turns", "many"])
    assert rc == 2
    assert err == (
        f"error: {target}: automation.full_auto.max_turns: expected an integer, got string "
        '"many"\n  hint: the file was not changed\n'
    )
    assert target.read_text() == "[agent]\n"
    rc, _, err = run(["config", "set", "--user", "--file", "x.toml", "agent.model", "m"])
    assert rc == 2 and "cannot be used together" in err


def test_set_user_and_file(run: RunVtcode, home: Path, tmp_path: Path) -> None:
    assert run(["config", "set", "--user", "agent.provider", "openai"])[0] == 0
    assert tomllib.loads((home / "config.toml").read_text()) == {"agent": {"provider": "openai"}}
    other = tmp_path / "other.toml"
    assert run(["config", "set", "--file", str(other), "store.durability", "event"])[0] == 0
    assert tomllib.loads(other.read_text()) == {"store": {"durability": "event"}}
    rc, out, _ = run(["--config", str(other), "config", "get", "store.durability"])
    assert (rc, out) == (0, "event\n")


def test_init(run: RunVtcode, tmp_path: Path) -> None:
    target = tmp_path / "ws" / "vtcode.toml"
    rc, _, err = run(["config", "init"])
    assert (rc, err) == (0, f"wrote {target}\n")
    assert target.read_text().startswith("# vtcode.toml: workspace configuration")
    assert run(["config", "check", str(target)])[0] == 0
    rc, _, err = run(["config", "init"])
    assert rc == 2
    assert err == f"error: {target}: already exists\n  hint: use --force to overwrite it\n"
    assert run(["config", "init", "--force"])[0] == 0


def test_set_and_init_leave_no_lock_file_behind(run: RunVtcode, home: Path, tmp_path: Path) -> None:
    """A `vtcode.toml.lock` in the workspace root showed in `git status` and got committed."""
    ws = tmp_path / "ws"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert run(["config", "init"])[0] == 0
    assert run(["config", "set", "agent.model", "m"])[0] == 0
    status = subprocess.run(
        ["git", "-C", str(ws), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert status == "?? vtcode.toml\n"
    assert sorted(p.name for p in ws.iterdir()) == [".git", "vtcode.toml"]
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert run(["config", "set", "--file", str(other / "x.toml"), "agent.model", "m"])[0] == 0
    assert run(["config", "set", "--user", "agent.model", "m"])[0] == 0
    assert [p.name for p in other.iterdir()] == ["x.toml"]
    assert [p.name for p in home.iterdir()] == ["config.toml"]


def test_init_template_is_valid_commented_and_uncommented(run: RunVtcode, tmp_path: Path) -> None:
    """The template passes `config check` as written and with every key line uncommented."""
    assert run(["config", "init"])[0] == 0
    text = (tmp_path / "ws" / "vtcode.toml").read_text()
    assert "# []" not in text
    assert all(line == "" or line.startswith("#") for line in text.splitlines())
    keys_part = text.split("\n# Examples")[0]
    uncommented = "\n".join(
        line[2:]
        for line in keys_part.splitlines()
        if re.match(r"# (\[[a-z_.]+\]$|[a-z_]+ = )", line) and "# unset by default" not in line
    )
    opened = tmp_path / "uncommented.toml"
    opened.write_text(uncommented + "\n")
    rc, out, err = run(["config", "check", str(tmp_path / "ws" / "vtcode.toml"), str(opened)])
    assert (rc, out) == (0, f"{tmp_path / 'ws' / 'vtcode.toml'}: valid\n{opened}: valid\n")
    # the only warnings: the no-effect keys the uncommented template sets (issue 25.1)
    assert all(NO_EFFECT_WARNING in line for line in err.splitlines()), err
