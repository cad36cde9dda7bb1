"""Permission rules: `[permissions] allow / ask / deny` plus the full-auto allow-list.

A rule is `tool` or `tool(pattern)`; `tool` may be a glob (`*`, `mcp__*`). The pattern is matched
against the call's *primary argument*:

- command tools (`exec_command.command`, `write_stdin.chars`): a glob where `*` matches anything
  (spaces and `/` included), and `git *` also matches a bare `git`. The line is parsed with
  tree-sitter-bash (`vtcode.tools.shell_parse`) into every simple command it can run —
  pipelines, lists, subshells, groups, function bodies, substitutions, `bash -c` strings,
  `env`/`sudo`/`xargs`/... prefixes — each compared by its basename (`/bin/rm` -> `rm`) and as
  written, words after quote removal (`r''m` -> `rm`). A deny/ask rule matches when *any*
  command matches, an allow rule only when *every* command does with literal arguments.
- exec_command only: a part the parser cannot resolve (a variable or substitution as command
  name, `eval`, `source`, `find -exec/-delete`, a git option or setting that runs a program,
  an evaluated array subscript, a code-running variable such as `GIT_SSH_COMMAND` or
  `BASH_ENV`, `cd`/`git -C` out of the workspace, unparsable input, an unknown argument of a
  command a deny rule constrains; see `shell_parse`, `shell_git`, `shell_programs`,
  `shell_env`) is denied when a deny rule names the tool, and never allowed; setting any other
  variable outside a small safe list keeps allow rules off without denying. A write redirect
  (`>`, `>>`, `&>`, `>|`, `<>`; `/dev/null`, `/dev/std*`, `/dev/fd/N` exempt) or option
  (`git log --output`, `sed -i`, `tee`, ...) is a write to its target, resolved against
  `workdir`: inside the workspace the write_file deny rules apply; outside it the target gets
  write_file's whole verdict, and an `exec_command(pattern)` allow rule covers the line only if
  a write_file rule allows that target.
- path tools (`read_file`, `write_file`, `list_files`, `grep`: `path`; `apply_patch`: every path
  the patch names): a gitignore-style glob on the workspace-relative path: `*` stays within one
  folder, `**` crosses folders, `src/**` matches `src` and everything below it, and a pattern
  without `/` (like `*.lock`) matches the file name at any depth. deny/ask match when any path
  matches, allow when all do.

- web_fetch: `web_fetch(domain:HOST)`, a glob on the URL's lower-case host (`vtcode.tools.
  net_policy`). The network policy sits on top of the rules: with `sandbox.network = false` a
  fetch is denied unless an allow rule with a domain pattern covers its host (a bare `web_fetch`
  or `*` rule, or `permissions.enabled = false`, does not open the network).

Evaluation (`PermissionPolicy.check`):
1. full-auto gate: a tool not in `automation.full_auto.allowed_tools` is denied, always;
2. `permissions.enabled = false`: everything the gate let through is allowed;
3. deny > ask > allow: the first matching deny rule denies, else the first ask rule asks, else
   an allow rule allows;
4. no rule matched: if some allow rule *with a pattern* names the tool, the allow rules narrow
   it and the call gets `ask`; otherwise it is allowed (the full-auto allow-list granted it).

Headless exec has nobody to ask: `headless(verdict)` turns `ask` into `deny` with outcome
`permission_rejected` unless the caller opts in to treating `ask` as allow.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from vtcode.config.rule_syntax import RULE_HINT, RuleSyntaxError, parse_rule
from vtcode.errors import ConfigError
from vtcode.tools.net_policy import TOOL_NAME as FETCH_TOOL
from vtcode.tools.net_policy import domain_matches, fetch_host
from vtcode.tools.path_rules import normalise_path as _normalise_path
from vtcode.tools.path_rules import path_glob_match
from vtcode.tools.shell_parse import ShellAnalysis, Unresolved, analyse

if TYPE_CHECKING:
    from vtcode.config.model import VtcodeConfig

FULL_AUTO_RULE = "automation.full_auto.allowed_tools"
PERMISSION_REJECTED = "permission_rejected"

COMMAND_ARGS: dict[str, str] = {"exec_command": "command", "write_stdin": "chars"}
PATH_ARGS: dict[str, str] = {
    "read_file": "path",
    "write_file": "path",
    "list_files": "path",
    "grep": "path",
}
_DEFAULT_PATH = {"list_files": ".", "grep": "."}


class Decision(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


@dataclass(frozen=True, slots=True)
class PermissionVerdict:
    """The answer for one tool call; `rule` is the rule text (or config key) that decided."""

    decision: Decision
    rule: str | None
    reason: str
    outcome: str | None = None  # `permission_rejected` when headless() turned ask into deny

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW

    def __iter__(self) -> Iterator[str]:
        """Unpacks as `(decision, reason)` for callers that need only those two."""
        return iter((self.decision.value, self.reason))


ArgKind = Literal["command", "path", "domain"]


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One parsed rule; `pattern` None means every call of the tool."""

    text: str
    tool: str
    pattern: str | None

    @classmethod
    def parse(cls, text: str, location: str = "permissions") -> PermissionRule:
        """The rule `text` (grammar: `vtcode.config.rule_syntax`, which config check runs too)."""
        try:
            tool, pattern = parse_rule(text)
        except RuleSyntaxError as e:
            hint = None if not isinstance(text, str) else RULE_HINT
            raise ConfigError(str(e), location=location, hint=hint) from None
        return cls(text=text.strip(), tool=tool, pattern=pattern)

    def names_tool(self, tool: str) -> bool:
        return fnmatch.fnmatchcase(tool, self.tool)

    def matches(self, tool: str, values: list[str], kind: ArgKind | None, *, every: bool) -> bool:
        """Whether the rule covers the call; `every` (allow rules) needs all values to match."""
        if not self.names_tool(tool):
            return False
        if self.pattern is None:
            return True
        if kind is None or not values:
            return False
        if kind == "domain":
            return all(domain_matches(self.pattern, v) for v in values)
        if kind == "command":
            return (
                all(_command_matches(self.pattern, v, every=every) for v in values)
                if every
                else any(_command_matches(self.pattern, v, every=False) for v in values)
            )
        test = functools.partial(path_glob_match, self.pattern)
        return all(map(test, values)) if every else any(map(test, values))


def parse_rules(texts: list[str], key: str) -> tuple[PermissionRule, ...]:
    return tuple(PermissionRule.parse(t, f"{key}[{i}]") for i, t in enumerate(texts))


def split_command(command: str) -> list[str] | None:
    """The simple commands of a shell line (by basename, words after quote removal); None when
    some part cannot be resolved without running it (see `vtcode.tools.shell_parse`)."""
    analysis = analyse(command)
    if analysis.unresolved or analysis.uncovered or any(c.opaque for c in analysis.commands):
        return None
    return [c.forms()[0] for c in analysis.commands]


def _command_glob(pattern: str, command: str) -> bool:
    if fnmatch.fnmatchcase(command, pattern):
        return True
    return pattern.endswith(" *") and command == pattern[:-2]


def _command_matches(pattern: str, command: str, *, every: bool) -> bool:
    """deny/ask: the raw line or any form of any command matches; allow: every command matches
    (by basename or as written) with only literal arguments (`git $X` could be `git -c
    alias.x=!cmd x`) and nothing in the line is unresolvable."""
    analysis = analyse(command)
    if every:
        return (
            not analysis.unresolved
            and bool(analysis.commands)
            and all(
                not c.opaque and any(_command_glob(pattern, f) for f in c.forms())
                for c in analysis.commands
            )
        )
    if _command_glob(pattern, command.strip()):
        return True
    return any(_command_glob(pattern, f) for c in analysis.commands for f in c.forms())


def primary_values(
    tool: str, arguments: dict[str, Any], workspace: Path | None = None
) -> tuple[ArgKind | None, list[str]]:
    """What a rule pattern is matched against for this call, and how."""
    if tool in COMMAND_ARGS:
        value = arguments.get(COMMAND_ARGS[tool])
        if isinstance(value, list):
            return "command", [shlex.join(str(v) for v in value)]
        return "command", [value] if isinstance(value, str) else []
    if tool == FETCH_TOOL:
        host = fetch_host(str(arguments.get("url", "")))
        return "domain", [host] if host is not None else []
    if tool == "apply_patch":
        from vtcode.tools.patch import touched_paths

        text = arguments.get("input")
        paths = touched_paths(text) if isinstance(text, str) else []
        return "path", [_normalise_path(p, workspace) for p in paths]
    if tool in PATH_ARGS:
        value = arguments.get(PATH_ARGS[tool], _DEFAULT_PATH.get(tool))
        return "path", [_normalise_path(value, workspace)] if isinstance(value, str) else []
    if isinstance(arguments.get("command"), str):
        return "command", [arguments["command"]]
    if isinstance(arguments.get("path"), str):
        return "path", [_normalise_path(arguments["path"], workspace)]
    return None, []


class PermissionPolicy:
    """Rules from `[permissions]` and (for exec) the full-auto allow-list, evaluated per call."""

    def __init__(
        self,
        *,
        allow: list[str] | tuple[str, ...] = (),
        ask: list[str] | tuple[str, ...] = (),
        deny: list[str] | tuple[str, ...] = (),
        enabled: bool = True,
        allowed_tools: list[str] | None = None,
        workspace: Path | None = None,
        headless: bool = False,
        allow_ask: bool = False,
        network: bool = False,
    ) -> None:
        self.network = network  # sandbox.network: web_fetch may reach any host rules allow
        self.allow = parse_rules(list(allow), "permissions.allow")
        self.ask = parse_rules(list(ask), "permissions.ask")
        self.deny = parse_rules(list(deny), "permissions.deny")
        self.enabled = enabled
        self.allowed_tools = None if allowed_tools is None else tuple(allowed_tools)
        self.workspace = workspace
        self.headless = headless
        self.allow_ask = allow_ask

    @classmethod
    def from_config(
        cls,
        config: VtcodeConfig,
        *,
        full_auto: bool = True,
        headless: bool = False,
        allow_ask: bool = False,
        workspace: Path | None = None,
    ) -> PermissionPolicy:
        """`full_auto=True` (exec) applies `automation.full_auto.allowed_tools` as a hard gate;
        `headless=True` makes `check` resolve `ask` via `headless()` (deny unless `allow_ask`).
        """
        perms = config.permissions
        return cls(
            allow=perms.allow,
            ask=perms.ask,
            deny=perms.deny,
            enabled=perms.enabled,
            allowed_tools=list(config.automation.full_auto.allowed_tools) if full_auto else None,
            workspace=workspace,
            headless=headless,
            allow_ask=allow_ask,
            network=config.sandbox.network,
        )

    def in_allow_list(self, tool: str) -> bool:
        if self.allowed_tools is None:
            return True
        return any(fnmatch.fnmatchcase(tool, name) for name in self.allowed_tools)

    def check(self, tool: str, arguments: Any = None) -> PermissionVerdict:
        """The verdict for one call; `arguments` may be a dict or the model's raw JSON text."""
        verdict = self._check(tool, _as_dict(arguments))
        return headless(verdict, allow_ask=self.allow_ask) if self.headless else verdict

    def _check(self, tool: str, args: dict[str, Any]) -> PermissionVerdict:
        if not self.in_allow_list(tool):
            return PermissionVerdict(
                Decision.DENY,
                FULL_AUTO_RULE,
                f"{tool} is not in {FULL_AUTO_RULE}",
            )
        kind, values = primary_values(tool, args, self.workspace)
        offline = tool == FETCH_TOOL and not self.network
        if not self.enabled:
            if offline:
                return _network_off(values)
            return PermissionVerdict(
                Decision.ALLOW, None, "permissions.enabled = false: allowed by the allow-list"
            )
        for rule in self.deny:
            if rule.matches(tool, values, kind, every=False):
                return PermissionVerdict(Decision.DENY, rule.text, f"denied by rule {rule.text!r}")
        shell = _ShellFacts()
        if tool == "exec_command" and kind == "command":
            shell, verdict = self._shell_check(tool, values, args.get("workdir"))
            if verdict is not None:
                return verdict
        for rule in self.ask:
            if rule.matches(tool, values, kind, every=False):
                return PermissionVerdict(
                    Decision.ASK, rule.text, f"rule {rule.text!r} requires approval"
                )
        for rule in self.allow:
            if offline and rule.pattern is None:
                continue  # only a domain rule opens the network for a host
            if rule.matches(tool, values, kind, every=True) and not (
                rule.pattern is not None and shell.uncovered
            ):
                return PermissionVerdict(
                    Decision.ALLOW, rule.text, f"allowed by rule {rule.text!r}"
                )
        if offline:
            return _network_off(values)
        narrowing = [r for r in self.allow if r.pattern is not None and r.names_tool(tool)]
        if narrowing:
            listed = ", ".join(repr(r.text) for r in narrowing)
            return PermissionVerdict(
                Decision.ASK,
                None,
                f"{tool} call is not covered by the allow rules {listed}{shell.note}",
            )
        reason = (
            "no rule matched; allowed by the full-auto allow-list"
            if self.allowed_tools is not None
            else "no rule matched"
        )
        return PermissionVerdict(Decision.ALLOW, None, reason)

    def _shell_check(
        self, tool: str, values: list[str], workdir: Any
    ) -> tuple[_ShellFacts, PermissionVerdict | None]:
        """What a shell line adds to its rules: a part that cannot be resolved is denied when a
        deny rule names the tool (it could be the denied command); a redirect is a write, judged
        like write_file of its target (deny rules anywhere, the full verdict outside the
        workspace), and an outside write not allowed by a write_file rule keeps an
        `exec_command(pattern)` allow rule from covering the line."""
        analyses = [analyse(v) for v in values]
        root = os.path.realpath(self.workspace) if self.workspace is not None else None
        unresolved = [u for a in analyses for u in a.unresolved]
        unresolved += [
            u
            for folder, u in _confined(analyses, self.workspace, workdir)
            if root is not None and not _inside(folder, root)
        ]
        unresolved += [
            Unresolved(" ".join(c.argv), f"an argument of `{c.name}` that is not a literal")
            for a in analyses
            for c in a.commands
            if c.opaque and any(_constrains_args(r, tool, c.name) for r in self.deny)
        ]
        if unresolved:
            guard = next((r for r in self.deny if r.names_tool(tool)), None)
            if guard is not None:
                u = unresolved[0]
                return _ShellFacts(), PermissionVerdict(
                    Decision.DENY,
                    guard.text,
                    f"denied: {u.why} in {u.part!r} cannot be checked against deny rule "
                    f"{guard.text!r}",
                )
        uncovered: list[str] = []
        lexical = os.path.normpath(Path(self.workspace or Path.cwd()).absolute())
        write_denies = [r for r in self.deny if r.names_tool("write_file")]
        for target in _write_targets(analyses, self.workspace, workdir):
            if root is None or _inside(target, root):
                rel = [target[len(lexical) + 1 :] if target.startswith(lexical + "/") else target]
                rule = next(
                    (r for r in write_denies if r.matches("write_file", rel, "path", every=False)),
                    None,
                )
                if rule is not None:
                    denied = PermissionVerdict(
                        Decision.DENY, rule.text, f"denied by rule {rule.text!r}"
                    )
                    return _ShellFacts(), _redirect_verdict(target, denied)
                continue
            verdict = self._check("write_file", {"path": target})
            if verdict.decision is not Decision.ALLOW:
                return _ShellFacts(), _redirect_verdict(target, verdict)
            elif verdict.rule is None:
                uncovered.append(target)
        unresolved += [u for a in analyses for u in a.uncovered]
        notes = [f"; {u.why} in {u.part!r}" for u in unresolved[:1]]
        notes += [
            f"; writes {t} outside the workspace (no write_file rule allows it)"
            for t in uncovered[:1]
        ]
        return _ShellFacts(bool(unresolved) or bool(uncovered), "".join(notes)), None


@dataclass(frozen=True, slots=True)
class _ShellFacts:
    """Why a command line's allow rules may not cover it (`note` is appended to the reason)."""

    uncovered: bool = False
    note: str = ""


def _network_off(hosts: list[str]) -> PermissionVerdict:
    host = hosts[0] if hosts else "HOST"  # no http(s) URL with a host: nothing to allow
    return PermissionVerdict(
        Decision.DENY,
        "sandbox.network",
        f"the network is off (sandbox.network = false) and no allow rule "
        f"web_fetch(domain:{host}) covers {host}",
    )


def _constrains_args(rule: PermissionRule, tool: str, name: str) -> bool:
    """Whether a deny rule names this command and says something about its arguments, so an
    argument only known at run time (`git $X` with X=push) could be what it denies."""
    if rule.pattern is None or not rule.names_tool(tool):
        return False
    head, _, rest = rule.pattern.partition(" ")
    return fnmatch.fnmatchcase(name, head) and rest.strip() not in ("", "*")


def _redirect_verdict(target: str, verdict: PermissionVerdict) -> PermissionVerdict:
    return PermissionVerdict(
        verdict.decision,
        verdict.rule,
        f"redirect writes {target}: {verdict.reason}",
        verdict.outcome,
    )


def _base(workspace: Path | None, workdir: Any) -> Path:
    """The command's working directory: `workdir` against the workspace."""
    base = Path(workspace or Path.cwd()).absolute()
    if isinstance(workdir, str) and workdir:
        base = base / Path(workdir).expanduser()
    return base


def _write_targets(
    analyses: list[ShellAnalysis], workspace: Path | None, workdir: Any
) -> list[str]:
    """Redirect and option-form write targets made absolute against the working directory."""
    base = _base(workspace, workdir)
    return [
        os.path.normpath(t if t[:1] == "/" else f"{base}/{t}") for a in analyses for t in a.writes
    ]


def _confined(
    analyses: list[ShellAnalysis], workspace: Path | None, workdir: Any
) -> list[tuple[str, Unresolved]]:
    """Folders a command works in (`git -C`, `cd`), absolute, with what to say if outside."""
    base = _base(workspace, workdir)
    return [
        (os.path.normpath(f if f[:1] == "/" else f"{base}/{f}"), u)
        for a in analyses
        for f, u in a.confined
    ]


def _inside(target: str, root: str) -> bool:
    """Physical containment (`root` already real): a symlink inside that points out is outside."""
    real = os.path.realpath(target)
    return real == root or real.startswith(root.rstrip("/") + "/")


def _as_dict(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str | bytes) and arguments.strip():
        import orjson

        try:
            parsed = orjson.loads(arguments)
        except orjson.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def headless(verdict: PermissionVerdict, *, allow_ask: bool = False) -> PermissionVerdict:
    """Resolve `ask` with nobody to ask: deny (`permission_rejected`) unless `allow_ask`."""
    if verdict.decision is not Decision.ASK:
        return verdict
    if allow_ask:
        return PermissionVerdict(
            Decision.ALLOW, verdict.rule, f"{verdict.reason}; approved by flag"
        )
    return PermissionVerdict(
        Decision.DENY,
        verdict.rule,
        f"{verdict.reason}; nobody can approve in headless mode",
        outcome=PERMISSION_REJECTED,
    )
