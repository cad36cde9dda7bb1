"""The console-script entry point, kept tiny: `vtcode --version` answers without importing click.

Everything else goes to `vtcode.cli.main`, whose subcommands are themselves imported lazily.
"""

from __future__ import annotations

import sys
from typing import NoReturn


def main(argv: list[str] | None = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    if args in (["--version"], ["-V"]):
        from vtcode import __version__

        sys.stdout.write(f"vtcode, version {__version__}\n")
        sys.exit(0)
    from vtcode.cli.main import main as full_main

    full_main(argv)
