"""The OS sandbox around exec_command (Landlock + namespaces on Linux) and leftover reaping.

Layered beside `vtcode.tools`: tools import it, it imports only `vtcode.config` and the standard
library. `launch` starts commands; `reap` records what was started so the next run can end
what a killed vtcode left behind.
"""

from vtcode.sandbox.launch import FORCE_UNAVAILABLE_ENV, Launch, Sandbox, SandboxState

__all__ = ["FORCE_UNAVAILABLE_ENV", "Launch", "Sandbox", "SandboxState"]
