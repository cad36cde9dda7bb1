"""Help and shell: a mistyped subcommand gets the nearest one, at every level, and colour follows
--color auto|always|never, NO_COLOR and FORCE_COLOR (the flag beats both; NO_COLOR beats
FORCE_COLOR). Real CLI, stdout/stderr piped (so `auto` means no colour)."""

from __future__ import annotations

from pathlib import Path

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


def _command_paths() -> list[str]:
    import rich_click as click

    from vtcode.cli.main import cli

    out: list[str] = []

    def walk(cmd: click.Command, path: list[str], ctx: click.Context) -> None:
        out.append(" ".join(path))
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name], click.Context(sub, parent=ctx, info_name=name))

    # With cli's own context settings, as a real run makes it: click caches each command's help
    # option the first time it is asked for, so a bare Context here would leave `-h` off the
    # help (and the man page) of every later caller in this process.
    walk(cli, [], click.Context(cli, info_name="vtcode", **cli.context_settings))
    return out


def test_every_command_has_examples_in_help_and_man_page(run_vtcode: RunVtcode) -> None:
    from vtcode.cli.examples import EXAMPLES

    paths = _command_paths()
    assert len(paths) > 40
    assert sorted(p for p in paths if not EXAMPLES.get(p)) == []
    assert sorted(set(EXAMPLES) - set(paths)) == []  # no examples for a command that is gone
    man = Path(__file__).resolve().parents[2] / "man" / "man1"
    for path in paths:
        page = man / ("-".join(["vtcode", *path.split()]) + ".1")
        assert ".SH EXAMPLES" in page.read_text(encoding="utf-8"), page.name
    for path in ("", "exec", "sessions list", "loop run"):  # what --help prints, for real
        rc, out, err = run_vtcode([*path.split(), "--help"])
        assert rc == 0, err
        assert "Examples:" in out and f"$ {EXAMPLES[path][0][0]}" in out
