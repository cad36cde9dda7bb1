"""Programs an allow rule commonly names, and the options that make them run another program or
write a file (`find -exec`, `rg --pre`, `tar --to-command`, `sed` `e`/`w`, `awk` `system()`...),
for the shell policy. `git` has its own module (`shell_git`).
"""

from __future__ import annotations

from vtcode.tools.shell_facts import Findings, Values
from vtcode.tools.shell_git import screen_git


def screen_program(name: str, args: Values) -> Findings:
    """What `name ARGS` does beyond what an allow rule on its name suggests."""
    if name == "git":
        return screen_git(args)
    screen = _SCREENS.get(name)
    return screen(args) if screen is not None else Findings()


def _find(args: Values) -> Findings:
    out = Findings()
    for i, a in enumerate(args):
        if a in ("-exec", "-execdir", "-ok", "-okdir", "-delete"):
            out.runs("`find -exec/-execdir/-ok/-delete` runs or deletes per file")
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            out.writes.append(args[i + 1] or "")
    return out


_SCREENS = {"find": _find}
