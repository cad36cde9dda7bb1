"""The split sweeps of the validator's tests, run in a lean interpreter (tests/lean.py).

`validate_split` forks once per split; from a small process each fork is cheap. Each sweep
returns what disagreed with the single pass (empty when all agree) and how many splits were
really joined, so the test can show the comparison ran on joins, not only on declines.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from vtcode.validate import ValidateOptions, validate_path
from vtcode.validate.engine import finish_report, start_state
from vtcode.validate.split import validate_split


def single_pass(path: Path, opts: ValidateOptions) -> dict[str, Any]:
    return dataclasses.asdict(validate_path(path, opts, jobs=1, display="log"))


def split_pass(path: Path, opts: ValidateOptions, at: int) -> tuple[str | None, dict[str, Any]]:
    """How the split went ("joined", "redone", None: declined) and the report then."""
    with path.open("rb") as f:
        state = start_state(opts)
        outcome = validate_split(f, state, at=at)
        if outcome is None:
            return None, {}
    return outcome, dataclasses.asdict(finish_report("log", state))


def line_starts(data: bytes) -> list[int]:
    starts = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    return [s for s in starts if 0 < s < len(data)]


@dataclasses.dataclass
class Sweep:
    joined: int = 0
    declined: int = 0
    wrong: list[str] = dataclasses.field(default_factory=list)  # split report != single pass
    redone_at_a_turn: list[str] = dataclasses.field(default_factory=list)


def every_line(
    cases: list[tuple[Path, ValidateOptions]],
    no_redo_at: dict[Path, list[int]],
    only_at: dict[Path, list[int]] | None = None,
) -> Sweep:
    """Split each (log, options) at every line start (or at `only_at[log]`); compare with its
    single pass. `no_redo_at`: offsets where a split must be joined, never redone (turns of
    valid logs)."""
    sweep = Sweep()
    for path, opts in cases:
        expected = single_pass(path, opts)
        points = only_at[path] if only_at else line_starts(path.read_bytes())
        for at in points:
            outcome, got = split_pass(path, opts, at)
            if outcome is None:
                sweep.declined += 1
                continue
            if got != expected:
                sweep.wrong.append(f"{path.name} split at byte {at} ({outcome}) with {opts}")
            if outcome == "joined":
                sweep.joined += 1
            elif at in no_redo_at.get(path, ()):
                sweep.redone_at_a_turn.append(f"{path.name} at {at}")
    return sweep
