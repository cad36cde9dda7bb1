"""Config input is bounded before parsing (issue 23 item 6), through the real CLI.

Every layer (user config, workspace vtcode.toml, `--config`, `-c`, `config check`) goes through
`parse_layer`, which walks the text once (`vtcode.tomlbounds`) before tomllib sees it: a
hostile file is exit 2 located at file:line:col, in constant memory and time. And `config check`
runs the permission-rule grammar `exec` runs (`vtcode.config.rule_syntax`), so the two agree.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import RunVtcode
from vtcode.tomlbounds import MAX_DEPTH, MAX_ENTRIES

DEEP = MAX_DEPTH + 1
HOSTILE = {
    # (text, line:col of the reported place)
    "header-100k-parts": ("[" + ".".join(["a"] * 100_000) + "]\nx = 1\n", f"1:{2 + 2 * MAX_DEPTH}"),
    "aot-header": ("[[" + ".".join(["a"] * DEEP) + "]]\n", f"1:{3 + 2 * MAX_DEPTH}"),
    "quoted-parts": ("[" + ".".join(['"a.b"'] * DEEP) + "]\n", f"1:{2 + 6 * MAX_DEPTH}"),
    "dotted-key": ("x = 1\n" + ".".join(["k"] * 50_000) + " = 1\n", f"2:{1 + 2 * MAX_DEPTH}"),
    "header-plus-key": (
        "[" + ".".join(["a"] * 20) + "]\n" + ".".join(["b"] * 13) + " = 1\n",
        "2:25",
    ),
    "arrays": ("x = " + "[" * 200_000 + "]" * 200_000 + "\n", f"1:{4 + MAX_DEPTH}"),
    "inline-tables": ("x = " + "{a = " * 60_000 + "1" + "}" * 60_000 + "\n", "1:81"),
    "unclosed-arrays": ("x = " + "[" * 500_000 + "\n", f"1:{4 + MAX_DEPTH}"),
    "many-keys": ("".join(f"k{i} = {i}\n" for i in range(MAX_ENTRIES + 5)), f"{MAX_ENTRIES + 1}:1"),
    "many-items": ("x = [" + "1," * (MAX_ENTRIES + 5) + "]\n", f"1:{4 + 2 * MAX_ENTRIES}"),
    "many-tables": ("".join(f"[t{i}]\n" for i in range(MAX_ENTRIES + 5)), f"{MAX_ENTRIES + 1}:1"),
}


def _message(name: str) -> str:
    if name.startswith("many"):
        return f"too many keys and values (more than {MAX_ENTRIES})"
    return f"nested too deeply (more than {MAX_DEPTH} levels of keys/tables)"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    return w


@pytest.mark.parametrize("name", sorted(HOSTILE))
@pytest.mark.parametrize("layer", ["check", "workspace", "user", "--config"])
def test_hostile_config_is_exit_2_located(
    run_vtcode: RunVtcode, ws: Path, tmp_path: Path, name: str, layer: str
) -> None:
    text, where = HOSTILE[name]
    home = tmp_path / "home"
    home.mkdir()
    target = {
        "check": tmp_path / "hostile.toml",
        "workspace": ws / "vtcode.toml",
        "user": home / "config.toml",
        "--config": tmp_path / "hostile.toml",
    }[layer]
    target.write_text(text)
    args = {
        "check": ["config", "check", str(target)],
        "workspace": ["config", "show"],
        "user": ["exec", "--provider", "replay", "hi"],
        "--config": ["--config", str(target), "exec", "--provider", "replay", "hi"],
    }[layer]
    rc, _out, err = run_vtcode(["-C", str(ws), *args], env={"VTCODE_HOME": str(home)})
    assert rc == 2, err
    assert "Traceback" not in err and "internal error" not in err
    assert err.startswith(f"error: {target}:{where}: {_message(name)}\n"), err[:300]
    assert not (ws / ".vtcode" / "sessions").exists()  # refused before any session starts


@pytest.mark.parametrize(
    "override",
    ["x." * 40 + "y=1", "agent.model=" + "[" * 100_000, "agent.model={a={a={a=" * 5_000],
)
def test_hostile_override_is_exit_2(run_vtcode: RunVtcode, ws: Path, override: str) -> None:
    rc, _out, err = run_vtcode(["-C", str(ws), "-c", override, "config", "show"])
    assert rc == 2, err
    assert "nested too deeply" in err and "Traceback" not in err
    assert len(err) < 400  # the location quotes the -c text shortened


def test_hostile_header_in_constant_memory_and_time(tmp_path: Path) -> None:
    """Peak RSS and wall time of `vtcode config check` on the 100k-part header (was 21 GB) and
    on a 1 MiB file of it, against a one-line valid file: the bound costs nothing measurable."""
    hostile = tmp_path / "hostile.toml"
    hostile.write_text(HOSTILE["header-100k-parts"][0])
    big = tmp_path / "big.toml"
    big.write_text("[" + ".".join(["a"] * 524_000) + "]\n")  # just under 1 MiB
    plain = tmp_path / "plain.toml"
    plain.write_text('[agent]\nmodel = "m"\n')
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "p = subprocess.run([sys.executable, '-m', 'vtcode', 'config', 'check', sys.argv[1]],"
        " capture_output=True)\n"
        "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
        " time.monotonic() - t)\n"
    )
    figures = {}
    for f in (plain, hostile, big):
        out = subprocess.run(
            [sys.executable, "-c", probe, str(f)], capture_output=True, text=True, check=True
        ).stdout.split()
        figures[f.name] = (int(out[0]), int(out[1]) // 1024, float(out[2]))
    print(figures)  # (exit code, peak RSS MiB, seconds)
    assert figures["plain.toml"][0] == 0
    for name in ("hostile.toml", "big.toml"):
        rc, rss_mib, secs = figures[name]
        assert rc == 2
        assert rss_mib < 100 and rss_mib < figures["plain.toml"][1] + 10, figures
        assert secs < 2 + figures["plain.toml"][2], figures


def test_real_configs_stay_within_the_bounds(run_vtcode: RunVtcode, ws: Path) -> None:
    (ws / "vtcode.toml").write_text(
        '[mcp.servers."a.b"]\ncommand = "x"\nenv = { "K.1" = "v" }\n'
        "[permissions]\nallow = [\n  # comment [ { \n  'read_file',\n"
        '  """exec_command(git [ {)""",\n]\n'
        '[agent]\nmodel = "m\\"[{"\n'
    )
    rc, _out, err = run_vtcode(["-C", str(ws), "config", "check"])
    assert rc == 0, err


# ------------------------------------------------------ one rule grammar for check and exec

BAD_RULES = [
    "exec_command(",
    "exec_command()",
    "exec_command(  )",
    "mcp__x__(",
    "read_file)",
    "(git *)",
    "exec_command(git *) extra",
    "",
    "two words",
]
GOOD_RULES = ["exec_command(git *)", "mcp__*", "*", "write_file(src/**)", "read_file"]


def _rule_file(tmp_path: Path, key: str, rule: str) -> Path:
    f = tmp_path / "rules.toml"
    f.write_text(f'[permissions]\n{key} = ["read_file", {json.dumps(rule)}]\n')
    return f


@pytest.mark.parametrize("key", ["allow", "ask", "deny"])
@pytest.mark.parametrize("rule", BAD_RULES + GOOD_RULES)
def test_config_check_and_exec_agree_on_every_rule(
    run_vtcode: RunVtcode, ws: Path, tmp_path: Path, key: str, rule: str
) -> None:
    f = _rule_file(tmp_path, key, rule)
    check = run_vtcode(["-C", str(ws), "config", "check", str(f)])
    run = run_vtcode(["-C", str(ws), "--config", str(f), "exec", "--provider", "replay", "hi"])
    if rule in GOOD_RULES:
        assert (check[0], run[0]) == (0, 0), (check, run)
        return
    expected = f"error: {f}:2:{len(key) + 18}: permissions.{key}[1]: invalid permission rule"
    for rc, _, err in (check, run):
        assert rc == 2, err
        assert err.startswith(expected), err
    assert check[2] == run[2]  # the very same message, from the one grammar


def test_a_bad_rule_from_a_workspace_file_or_override_is_located(
    run_vtcode: RunVtcode, ws: Path
) -> None:
    (ws / "vtcode.toml").write_text('[permissions]\ndeny = ["exec_command("]\n')
    rc, _, err = run_vtcode(["-C", str(ws), "config", "check"])
    assert rc == 2 and f"{ws / 'vtcode.toml'}:2:9: permissions.deny[0]" in err, err
    (ws / "vtcode.toml").unlink()
    rc, _, err = run_vtcode(
        ["-C", str(ws), "-c", 'permissions.ask=["mcp__x__("]', "exec", "--provider", "replay", "hi"]
    )
    assert rc == 2 and "permissions.ask[0]: invalid permission rule 'mcp__x__('" in err, err


def test_bounds_walk_is_linear(tmp_path: Path) -> None:
    """The walk itself: 1 MiB of the worst shapes that stay within the bounds, well under a
    second each (a quadratic walk would take minutes)."""
    from vtcode.tomlbounds import check_bounds

    shapes = [
        '"' * 3 + "\\" * 1_000_000 + '"' * 3,
        "x = " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n" * 1_000_000,
        "#" * 1_000_000,
        '"\\' * 500_000,
        "a" * 1_000_000,
    ]
    for text in shapes:
        t = time.monotonic()
        check_bounds(text)
        assert time.monotonic() - t < 1.0


@pytest.mark.parametrize(
    "body",
    ["x = " + "[" * 100_000 + "]" * 100_000, "x = " + "{a = " * 50_000 + "1" + "}" * 50_000],
)
def test_a_hostile_replay_script_is_exit_2_located(
    run_vtcode: RunVtcode, tmp_path: Path, body: str
) -> None:
    """Replay scripts (and eval tasks) read TOML through `vtcode.tomlcheck`, bounded the same
    way with their own limits (200 levels): was an internal RecursionError, exit 1."""
    script = tmp_path / "deep.toml"
    script.write_text('[provider]\nmodel = "r"\n' + body + "\n")
    rc, _out, err = run_vtcode(["exec", "--script", str(script), "go"])
    assert rc == 2, err
    assert err.startswith(f"error: {script}:3:") and "nested too deeply" in err, err


@pytest.mark.parametrize(
    ("matcher", "valid"),
    [
        ("(", False),
        ("exec_command(", False),
        ("[a-", False),
        ("*+", False),
        ("exec_command|write_file", True),
        ("*", True),
        ("", True),
        ("mcp__.*", True),
    ],
)
def test_config_check_and_exec_agree_on_hook_matchers(
    run_vtcode: RunVtcode, ws: Path, tmp_path: Path, matcher: str, valid: bool
) -> None:
    """A matcher the hooks planner cannot compile was a warning at run time (the hook silently
    never ran) and `valid` for config check; now both refuse it, located."""
    f = tmp_path / "hooks.toml"
    f.write_text(
        "[[hooks.lifecycle.pre_tool_use]]\n"
        f"matcher = {json.dumps(matcher)}\n"
        'hooks = [{ type = "command", command = "true" }]\n'
    )
    check = run_vtcode(["-C", str(ws), "config", "check", str(f)])
    run = run_vtcode(["-C", str(ws), "--config", str(f), "exec", "--provider", "replay", "hi"])
    if valid:
        assert (check[0], run[0]) == (0, 0), (check, run)
        return
    for rc, _, err in (check, run):
        assert rc == 2, err
        assert err.startswith(
            f"error: {f}:2:1: hooks.lifecycle.pre_tool_use[0].matcher: invalid"
        ), err
    assert check[2] == run[2]
