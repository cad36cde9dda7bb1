"""One definition of each numeric range (issue 26.4): `config check`, the loader, and the CLI
flags that set the same value refuse the same values, and prices are bounded config.

`--max-budget-usd -1` was refused while `agent.harness.max_budget_usd = -1` passed `config check`
and the run then made a request against a cap of $-1; a negative price gave a negative bill and a
budget that never tripped. `agent.harness.require_budget` makes an unenforceable budget fatal.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import click
import pytest

from tests.exec_support import SCRIPTS, vtcode
from vtcode.cli.main import cli
from vtcode.cli.ranges import key_option_type
from vtcode.config.load import check_text
from vtcode.config.model import VtcodeConfig
from vtcode.config.ranges import key_range
from vtcode.errors import UsageError
from vtcode.jsontypes import decode
from vtcode.loop.limits import check_run_caps, require_budget_cap, require_budget_price
from vtcode.providers.base import Pricing
from vtcode.providers.script import ReplayScriptError, parse_script

# Every numeric option of the CLI: the config key whose range it takes, or None for an option
# that sets no vtcode.toml key (its range is its own). A new numeric option must be listed here.
TURNS, BUDGET = "automation.full_auto.max_turns", "agent.harness.max_budget_usd"
NUMERIC_OPTIONS: dict[str, str | None] = {
    "exec --max-turns": TURNS,
    "exec --max-budget-usd": BUDGET,
    "chat --max-turns": TURNS,
    "chat --max-budget-usd": BUDGET,
    "validate --max-problems": None,
    "validate --max-line-bytes": None,
    "validate --jobs": None,
    "sessions gc --max-sessions": "store.retention.max_sessions",
    "sessions gc --max-age-days": "store.retention.max_age_days",
    "loop run --steps": None,
    "loop run --max-steps": None,  # loop budgets are stored in the loop's state, not config
    "loop run --max-tokens": None,
    "loop run --max-cost": None,
    "loop run --max-turns": TURNS,
    "fleet add --max-steps": None,
    "fleet add --max-tokens": None,
    "fleet add --max-cost": None,
    "fleet add --max-turns": TURNS,
    "fleet worker --concurrency": None,
    "fleet worker --stall-timeout": None,
    "fleet worker --grace": None,
    "fleet worker --poll": None,
    "handoff --test-timeout": None,
    "eval -k": None,
    "eval --jobs": None,
    "eval --min-pass-rate": None,
}


def _numeric_options() -> dict[str, click.Option]:
    """Every option with an int/float (range) type, by 'command path --flag'."""
    out: dict[str, click.Option] = {}

    def walk(cmd: click.Command, path: str, ctx: click.Context) -> None:
        for p in cmd.params:
            if isinstance(p, click.Option) and isinstance(
                p.type, click.IntRange | click.FloatRange
            ):
                out[f"{path} {max(p.opts, key=len)}".strip()] = p
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    walk(sub, f"{path} {name}".strip(), ctx)

    with click.Context(cli) as ctx:
        walk(cli, "", ctx)
    return out


def test_every_option_setting_a_key_takes_the_keys_range() -> None:
    found = {
        name: (bounds.key if (bounds := getattr(o.type, "bounds", None)) else None)
        for name, o in _numeric_options().items()
    }
    assert found == NUMERIC_OPTIONS  # a new numeric option: decide whether it sets a key
    for name, key in NUMERIC_OPTIONS.items():
        if key is not None:
            assert _numeric_options()[name].type.bounds == key_range(key)  # type: ignore[attr-defined]


def _config_verdict(key: str, value: str) -> bool:
    table, leaf = key.rsplit(".", 1)
    return not check_text(f"[{table}]\n{leaf} = {value}\n", "t.toml").problems


def _flag_verdict(key: str, value: str) -> bool:
    try:
        key_option_type(key).convert(value, None, None)
    except click.BadParameter:
        return False
    return True


@pytest.mark.parametrize("key", sorted({k for k in NUMERIC_OPTIONS.values() if k}))
def test_config_check_and_the_flag_agree_at_every_edge(key: str) -> None:
    bounds = key_range(key)
    values = ["-1", "0", "1", "2.5", "1e308", "inf", "-inf", "nan"]
    for edge in (bounds.minimum, bounds.maximum):
        if edge is not None:
            step = 1 if bounds.integer else 0.5
            values += [repr(edge - step), repr(edge), repr(edge + step)]
    for value in values:
        if bounds.integer and not value.lstrip("-").isdigit():
            continue  # a float for an integer key: both refuse it, for their own type reasons
        config, flag = _config_verdict(key, value), _flag_verdict(key, value)
        assert config == flag, f"{key} = {value}: config check {config}, flag {flag}"
        number = float(value)
        assert flag == (bounds.problem(number) is None), (key, value)
        if not math.isfinite(number):
            assert not flag


def test_negative_budget_is_refused_alike_by_config_check_and_flag(tmp_path: Path) -> None:
    (tmp_path / "vtcode.toml").write_text("[agent.harness]\nmax_budget_usd = -1\n")
    checked = vtcode(["config", "check"], tmp_path)
    assert checked.returncode == 2
    assert checked.stderr == (
        f"error: {tmp_path / 'vtcode.toml'}:2:1: agent.harness.max_budget_usd: "
        "-1.0 is below the minimum 0\n"
    )
    ran = vtcode(["exec", "--script", str(SCRIPTS / "scenario-budget.toml"), "go"], tmp_path)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert "agent.harness.max_budget_usd: -1.0 is below the minimum 0" in ran.stderr
    assert not (tmp_path / ".vtcode" / "sessions").exists() or not any(
        (tmp_path / ".vtcode" / "sessions").glob("*/events.jsonl")
    )
    with pytest.raises(click.BadParameter) as exc:  # the flag, in-process: same range, same words
        key_option_type("agent.harness.max_budget_usd").convert("-1", None, None)
    assert "-1 is below the minimum 0 (the range of agent.harness.max_budget_usd" in str(exc.value)


@pytest.mark.parametrize(
    ("price", "problem"),
    [
        ("-3", "-3.0 is below the minimum 0"),
        ("nan", "expected a finite number, got inf or nan"),
        ("inf", "expected a finite number, got inf or nan"),
        ("1e309", "expected a finite number, got inf or nan"),
        ("2e6", "2000000.0 is above the maximum 1000000.0"),
    ],
)
def test_a_bad_price_is_a_config_error_naming_key_and_file(price: str, problem: str) -> None:
    pricing = f"pricing = {{ input_per_mtok = {price}, output_per_mtok = 1 }}"
    text = f'[providers.x]\nkind = "openai"\n{pricing}\n'
    found = check_text(text, "p.toml").problems
    assert [(p.location, p.key, p.message) for p in found] == [
        ("p.toml:3:13", "providers.x.pricing.input_per_mtok", problem)
    ]


def test_a_negative_script_price_is_refused() -> None:
    text = (
        '[provider]\nmodel = "m"\npricing = { input_per_mtok = -3.0, output_per_mtok = 1.0 }\n'
        '[[turn]]\ntext = "done"\n'
    )
    with pytest.raises(ReplayScriptError) as exc:
        parse_script(text, source="neg.toml")
    assert "input_per_mtok" in str(exc.value) and "below the minimum 0" in str(exc.value)


def test_require_budget_refuses_an_unpriced_model_before_any_session(tmp_path: Path) -> None:
    unpriced = ["--script", str(SCRIPTS / "scenario-unknown-pricing.toml")]
    ran = vtcode(
        [
            "-c",
            "agent.harness.require_budget=true",
            "exec",
            "--max-budget-usd",
            "1",
            *unpriced,
            "go",
        ],
        tmp_path,
    )
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        "error: agent.harness.require_budget is set, but the budget cannot be enforced: "
        "pricing is unknown for model 'replay-unpriced'\n"
        "  hint: give the model a price ([providers.NAME.pricing]), or set "
        "agent.harness.require_budget = false\n"
    )
    assert not list(tmp_path.glob(".vtcode/sessions/*/events.jsonl"))  # nothing was written


def test_require_budget_needs_a_cap_and_a_price() -> None:
    required = decode(VtcodeConfig, {"agent": {"harness": {"require_budget": True}}})
    with pytest.raises(UsageError) as exc:
        require_budget_cap(required, None)
    assert str(exc.value) == (
        "agent.harness.require_budget is set, but no budget is set\n"
        "  hint: pass --max-budget-usd USD or set agent.harness.max_budget_usd"
    )
    require_budget_cap(required, 1.0)  # a flag cap is a cap
    capped = decode(
        VtcodeConfig, {"agent": {"harness": {"require_budget": True, "max_budget_usd": 1.0}}}
    )
    require_budget_cap(capped, None)
    require_budget_price(capped, Pricing(input_per_mtok=1.0, output_per_mtok=1.0), "m")
    with pytest.raises(UsageError):
        require_budget_price(capped, None, "m")
    require_budget_cap(VtcodeConfig(), None)  # off by default: an unpriced budget only warns
    require_budget_price(VtcodeConfig(), None, "m")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_options_without_a_key_refuse_non_finite_numbers(value: str) -> None:
    """`loop run --max-cost nan` passed click's FloatRange and died storing the loop budget."""
    for name, option in _numeric_options().items():
        if isinstance(option.type, click.FloatRange):
            with pytest.raises(click.BadParameter):
                option.type.convert(value, None, None)
            assert name  # every float option, key or not


def test_a_library_caller_cap_is_held_to_the_keys_range(tmp_path: Path) -> None:
    from vtcode.api import run

    with pytest.raises(UsageError) as exc:
        run("go", workspace=tmp_path, script="default", max_budget_usd=-1.0)
    assert "max_budget_usd: -1.0 is below the minimum 0" in str(exc.value)
    assert not list(tmp_path.glob(".vtcode/sessions/*/events.jsonl"))
    check_run_caps(None)
    check_run_caps(0.0)


def test_a_bad_price_in_an_untrusted_workspace_is_still_an_error(tmp_path: Path) -> None:
    """The trust filter used to drop the bad value with a warning, and `config check` said valid."""
    toml = tmp_path / "vtcode.toml"
    toml.write_text("[providers.openai]\npricing = {input_per_mtok = -3, output_per_mtok = 1}\n")
    env = {k: v for k, v in os.environ.items() if k != "VTCODE_TRUST_WORKSPACE"}
    checked = vtcode(["config", "check"], tmp_path, env=env)
    assert checked.returncode == 2
    assert checked.stderr == (
        f"error: {toml}:2:12: providers.openai.pricing.input_per_mtok:"
        " -3.0 is below the minimum 0\n"
    )
