"""`fleet add` registers what a fleet step passes to `loop run --steps 1`, so the two commands
document the same budget and run options, word for word (vtcode/cli/loop_opts.py declares them
once). Read from the man pages users read; tests/cli/test_man_pages.py keeps those current."""

from __future__ import annotations

import re
from pathlib import Path

MAN = Path(__file__).resolve().parents[2] / "man" / "man1"
SHARED = ["max-steps", "max-tokens", "max-cost", "provider", "script", "model", "max-turns"]


def _options(page: str) -> dict[str, str]:
    """Each option's block (its synopsis line and help) of a man page, by long name."""
    text = (MAN / page).read_text()
    blocks = text.split(".SH OPTIONS", 1)[1].split(".TP\n")[1:]
    out = {}
    for block in blocks:
        m = re.match(r"\\fB\\-\\-([a-z\\-]+)\\fR", block)
        if m:
            out[m.group(1).replace("\\-", "-")] = block.strip()
    return out


def test_fleet_add_and_loop_run_share_the_loop_options() -> None:
    run = _options("vtcode-loop-run.1")
    add = _options("vtcode-fleet-add.1")
    assert [o for o in run if o in SHARED] == SHARED  # in the same order, all of them
    assert [o for o in add if o in SHARED] == SHARED
    assert {o: add[o] for o in SHARED} == {o: run[o] for o in SHARED}
