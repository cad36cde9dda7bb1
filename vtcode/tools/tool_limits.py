"""`--tools`, `--allowed-tools` and `--disallowed-tools`: one run's tool limits, which only tighten.

- `--tools a,b`: the catalog offered to the model is at most these names (globs allowed);
- `--allowed-tools RULE` (repeatable, the permission rule grammar: `read_file`,
  `exec_command(git *)`): only tools some rule names are offered, and a call must match a rule
  naming its tool (with a pattern, the way an allow rule matches: every command of a shell line,
  every path); a call no rule covers is denied, never asked;
- `--disallowed-tools RULE` (repeatable): a bare tool name is taken out of the catalog; a rule
  with a pattern denies the calls it matches, like a `permissions.deny` rule.

They apply on top of everything the config decides (full-auto allow-list, `[permissions]`,
hooks): a tool or call the config refuses stays refused, so the flags can only remove.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vtcode.tools.permissions import (
    Decision,
    PermissionPolicy,
    PermissionRule,
    PermissionVerdict,
    parse_rules,
)

__all__ = ["ToolLimits"]


@dataclasses.dataclass(frozen=True, slots=True)
class ToolLimits:
    names: tuple[str, ...] | None = None  # --tools
    allowed: tuple[PermissionRule, ...] = ()  # --allowed-tools
    disallowed: tuple[PermissionRule, ...] = ()  # --disallowed-tools

    @classmethod
    def parse(
        cls,
        names: list[str] | None,
        allowed: list[str],
        disallowed: list[str],
    ) -> ToolLimits:
        """From the flags' texts; a malformed rule is a ConfigError naming the flag (exit 2)."""
        return cls(
            names=None if names is None else tuple(n for n in names if n),
            allowed=parse_rules(allowed, "--allowed-tools"),
            disallowed=parse_rules(disallowed, "--disallowed-tools"),
        )

    @property
    def active(self) -> bool:
        return self.names is not None or bool(self.allowed or self.disallowed)

    def offers(self, tool: str) -> bool:
        """Whether `tool` may be in the catalog sent to the model."""
        if self.names is not None and not any(fnmatch.fnmatchcase(tool, n) for n in self.names):
            return False
        if self.allowed and not any(r.names_tool(tool) for r in self.allowed):
            return False
        return not any(r.pattern is None and r.names_tool(tool) for r in self.disallowed)

    def check(self, tool: str, arguments: Any, workspace: Path | None) -> PermissionVerdict | None:
        """A deny verdict when the flags refuse this call, else None (the config decides)."""
        if not self.offers(tool):
            return PermissionVerdict(Decision.DENY, None, f"{tool} is not offered in this run")
        if self.disallowed:
            # network=True here: the flags' rules are judged alone; the config's policy
            # applies the network (a web_fetch no flag names is not the flags' to refuse)
            deny = PermissionPolicy(
                deny=[r.text for r in self.disallowed], workspace=workspace, network=True
            )
            verdict = deny.check(tool, arguments)
            if verdict.decision is Decision.DENY:
                return PermissionVerdict(
                    Decision.DENY, verdict.rule, f"--disallowed-tools: {verdict.reason}"
                )
        naming = [r for r in self.allowed if r.names_tool(tool)]
        if naming and all(r.pattern is not None for r in naming):
            allow = PermissionPolicy(
                allow=[r.text for r in naming], workspace=workspace, network=True
            )
            verdict = allow.check(tool, arguments)
            if verdict.decision is not Decision.ALLOW:
                listed = ", ".join(repr(r.text) for r in naming)
                return PermissionVerdict(
                    Decision.DENY, None, f"not covered by --allowed-tools {listed}"
                )
        return None

    @staticmethod
    def wrap(
        limits: ToolLimits | None,
        workspace: Path,
        check: Callable[[str, Any], PermissionVerdict],
    ) -> Callable[[str, Any], PermissionVerdict]:
        """`check` after `limits` (which can only refuse, never ask or allow)."""
        if limits is None:
            return check

        def limited(tool: str, args: Any) -> PermissionVerdict:
            refused = limits.check(tool, args, workspace)
            return refused if refused is not None else check(tool, args)

        return limited
