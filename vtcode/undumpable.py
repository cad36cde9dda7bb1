"""PR_SET_DUMPABLE 0 for vtcode, with nothing but ctypes imported.

The CLI calls it before anything else runs (vtcode/cli/entry.py); importing it from
`vtcode.sandbox` pulled the whole sandbox package (about 0.1-0.4 s) into every command's
start-up, `vtcode validate` included.
"""

from __future__ import annotations

import ctypes
import os

__all__ = ["make_undumpable"]

_PR_SET_DUMPABLE = 4


def make_undumpable() -> None:
    """PR_SET_DUMPABLE 0 for vtcode: its /proc/PID files become root's, no ptrace by the user.

    Inherited by every fork (the keeper included) and reset by exec, so commands are unaffected.
    Also called by `Sandbox`, for vtcode used as a library.
    """
    if os.uname().sysname == "Linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
