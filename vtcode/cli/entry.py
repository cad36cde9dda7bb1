"""The console-script entry point, kept tiny: `vtcode --version` answers without importing click.

Everything else goes to `vtcode.cli.main`, whose subcommands are themselves imported lazily.

A closed standard output (`vtcode ... >&-`) is refused up front (exit 2): every command reports
on stdout, and a closed fd 1 would be handed to the next file vtcode opens (a session log, say),
so a stray write could land in it.

vtcode makes itself non-dumpable before anything else runs: its /proc files (environ, cmdline,
fd/, mem) then belong to root, so no process of the same user (a command that escaped its own
/proc, a sibling shell) can read the provider keys in its environment or attach to it.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def _stdout_closed() -> bool:
    try:
        os.fstat(1)
    except OSError:
        return True
    return False


def main(argv: list[str] | None = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    if _stdout_closed():
        if sys.stderr is not None:
            sys.stderr.write(
                "error: standard output: cannot write: it is closed (fd 1)\n"
                "  hint: redirect it to a file or a pipe (`>out.txt`, `>/dev/null`)\n"
            )
            sys.stderr.flush()
        sys.exit(2)
    if args in (["--version"], ["-V"]):
        from vtcode import __version__

        sys.stdout.write(f"vtcode, version {__version__}\n")
        sys.exit(0)
    from vtcode.undumpable import make_undumpable

    make_undumpable()
    from vtcode.cli.main import main as full_main

    full_main(argv)
