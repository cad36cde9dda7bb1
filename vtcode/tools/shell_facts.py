"""What a known program's arguments tell the shell policy (shared by `shell_git` and
`shell_programs`): parts that run another program, files the command writes, and folders it must
stay inside. Values are words after quote removal; None marks a word only known at run time.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

Values = list[str | None]


@dataclass
class Findings:
    unresolved: list[str] = field(default_factory=list)  # why: runs or may run another program
    writes: list[str] = field(default_factory=list)  # files or folders written, as given
    confined: list[tuple[str, str]] = field(default_factory=list)  # (folder, why) inside only
    moves: list[str] = field(default_factory=list)  # folders later commands run in (`cd`)

    def runs(self, why: str) -> None:
        self.unresolved.append(why)


def long_name(arg: str) -> str | None:
    """`--name[=value]` -> `name`; None for anything else."""
    if not arg.startswith("--") or len(arg) == 2:
        return None
    return arg[2:].split("=", 1)[0]


def abbreviates(arg: str, *names: str) -> str | None:
    """The option of `names` that `arg` (`--x[=v]`) spells or abbreviates; git's parse-options
    and getopt_long (tar, sort) accept any unambiguous prefix, so `--upl=x` is `--upload-pack`."""
    given = long_name(arg)
    if not given:
        return None
    return next((n for n in names if n.startswith(given)), None)


def option_value(args: Sequence[str | None], i: int) -> tuple[str | None, int]:
    """The value of the long option at `i` (`--o=v` or `--o v`) and the index after it."""
    arg = args[i] or ""
    if "=" in arg:
        return arg.split("=", 1)[1], i + 1
    return (args[i + 1] if i + 1 < len(args) else None), i + 2


def short_value(args: Sequence[str | None], i: int, letter: str) -> tuple[str | None, int] | None:
    """For a bundle of short options at `i` (`-xo file`, `-ofile`) holding `letter`, the value
    that letter takes (the rest of the bundle, else the next word); None if it is not there."""
    arg = args[i] or ""
    if not arg.startswith("-") or arg.startswith("--") or letter not in arg[1:]:
        return None
    rest = arg[arg.index(letter, 1) + 1 :]
    if rest:
        return rest, i + 1
    return (args[i + 1] if i + 1 < len(args) else None), i + 2


def with_moves(writes: list[str], moves: list[str], limit: int = 8) -> list[str]:
    """Relative write targets also taken from every folder a `cd` in the line may have moved to
    (order is not tracked: `cd secrets && echo k > key` writes secrets/key)."""
    folders = [""]
    for move in moves[:limit]:
        folders += [posixpath.join(f, move) for f in folders][: limit - len(folders) + 1]
    out = list(writes)
    for folder in folders[1:]:
        out += [posixpath.join(folder, w) for w in writes if not w.startswith(("/", "~"))]
    return list(dict.fromkeys(out))
