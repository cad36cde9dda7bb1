"""Help and shell: a mistyped subcommand gets the nearest one, at every level, and colour follows
--color auto|always|never, NO_COLOR and FORCE_COLOR (the flag beats both; NO_COLOR beats
FORCE_COLOR). Real CLI, stdout/stderr piped (so `auto` means no colour)."""

from __future__ import annotations

import pytest

from tests.conftest import RunVtcode

ESC = "\x1b["


@pytest.mark.parametrize(
    ("args", "wrong", "right"),
    [
        (["sesions", "list"], "sesions", "sessions"),
        (["sessions", "lst"], "lst", "list"),
        (["confg", "show"], "confg", "config"),
        (["loop", "stauts"], "stauts", "status"),
    ],
)
def test_a_mistyped_subcommand_gets_the_nearest_one(
    run_vtcode: RunVtcode, args: list[str], wrong: str, right: str
) -> None:
    rc, out, err = run_vtcode(args)
    assert rc == 2 and out == ""
    assert f"No such command '{wrong}'. Did you mean '{right}'?" in err
    assert "Traceback" not in err


def test_no_suggestion_when_nothing_is_close(run_vtcode: RunVtcode) -> None:
    rc, _, err = run_vtcode(["zzzzqqq"])
    assert rc == 2 and "No such command 'zzzzqqq'." in err and "Did you mean" not in err


def _colour(run_vtcode: RunVtcode, args: list[str], env: dict[str, str]) -> bool:
    base = {"NO_COLOR": "", "FORCE_COLOR": ""}
    rc, out, err = run_vtcode([*args, "--help"], env={**base, **env})
    assert rc == 0, err
    return ESC in out


@pytest.mark.parametrize(
    ("flags", "env", "coloured"),
    [
        ([], {}, False),  # auto, piped: no colour
        (["--color", "always"], {}, True),
        (["--color=always"], {"NO_COLOR": "1"}, True),  # the flag beats NO_COLOR
        ([], {"FORCE_COLOR": "1"}, True),
        ([], {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # NO_COLOR beats FORCE_COLOR
        (["--color", "never"], {"FORCE_COLOR": "1"}, False),  # the flag beats FORCE_COLOR
        (["--no-color"], {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_follows_the_flag_then_the_environment(
    run_vtcode: RunVtcode, flags: list[str], env: dict[str, str], coloured: bool
) -> None:
    assert _colour(run_vtcode, flags, env) is coloured


def test_a_bad_color_value_is_a_usage_error(run_vtcode: RunVtcode) -> None:
    rc, _, err = run_vtcode(["--color", "sometimes", "sessions", "list"])
    assert rc == 2 and "sometimes" in err and "Traceback" not in err
