"""The environment an exec_command child starts with: `[shell_environment_policy]`.

A model that runs `env` (or `printenv OPENAI_API_KEY`, or `curl -d @- … <<<"$GITHUB_TOKEN"`) gets
whatever vtcode's children inherit, and its output lands in the session log, every export and the
provider's context. So children do not inherit vtcode's environment as is; it goes through the
policy, in Codex's shape and with its names:

1. start from `inherit`: `all` (vtcode's environment), `core` (the few variables a shell and the
   usual tools need, `CORE_VARS` and `LC_*`) or `none` (empty);
2. drop names matching `DEFAULT_ENV_EXCLUDES` (`vtcode.redact.SECRET_NAME_PATTERNS`: `*KEY*`,
   `*SECRET*`, `*TOKEN*`, `*PASS*`, `*_PWD`, `*_PAT`, `*AUTH*`, `*COOKIE*`, `*PRIVATE*`,
   `*CREDENTIAL*`, `*DSN`, `OTEL_EXPORTER_OTLP*HEADERS`, ...; `NOT_SECRET_NAMES` such as
   `GIT_AUTHOR_NAME` are kept), and any variable whose value is a credential vtcode was told of
   whatever its name (`withheld`: an MCP server's bearer token, `vtcode.redact.remember_secrets`),
   unless `ignore_default_excludes`;
3. drop names matching `exclude`;
4. when `include_only` is non-empty, keep only names matching one of its patterns;
5. add the harness's own settings (`overrides`: no pager, no colour, a dumb terminal), which are
   not secrets and make commands behave headless;
6. apply `set`, last, so an explicit value always wins.

Patterns are shell globs matched case-insensitively against the whole name (`*key*` drops
`OPENAI_API_KEY` and `ssh_keyfile` alike). Codex applies `set` before `include_only`; vtcode applies
it after, so a variable a user sets is never silently filtered away by their own allow-list.

Other children keep their own, narrower rules: hooks get an allow-list (PATH, HOME, LANG, TERM,
TMPDIR, LC_* and the VT_*/CLAUDE_* hook variables; `vtcode.hooks.runner.hook_env`), MCP servers get
the MCP SDK's default (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus their configured `env`.
"""

from __future__ import annotations

from collections.abc import Mapping

from vtcode.config.model import EnvInherit, ShellEnvironmentPolicy
from vtcode.redact import is_secret_name, name_matcher

__all__ = ["CORE_VARS", "child_environment"]

CORE_VARS = frozenset(
    {
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "USER",
        "USERNAME",
        "TMPDIR",
        "TEMP",
        "TMP",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
    }
)
_CORE_PREFIXES = ("LC_",)


def _is_core(name: str) -> bool:
    return name in CORE_VARS or name.startswith(_CORE_PREFIXES)


def child_environment(
    policy: ShellEnvironmentPolicy,
    environ: Mapping[str, str],
    *,
    overrides: Mapping[str, str] | None = None,
    withheld: frozenset[str] = frozenset(),
) -> dict[str, str]:
    """The environment of a child under `policy`, from `environ` (normally `os.environ`).

    Pure: reads nothing but its arguments. `overrides` are the harness's settings (step 5).
    """
    if policy.inherit is EnvInherit.ALL:
        env = dict(environ)
    elif policy.inherit is EnvInherit.CORE:
        env = {k: v for k, v in environ.items() if _is_core(k)}
    else:
        env = {}
    if not policy.ignore_default_excludes:
        env = {k: v for k, v in env.items() if not is_secret_name(k)}
        if withheld:
            env = {k: v for k, v in env.items() if v.strip() not in withheld}
    drop = name_matcher(policy.exclude)
    if drop is not None:
        env = {k: v for k, v in env.items() if drop.match(k) is None}
    keep = name_matcher(policy.include_only)
    if keep is not None:
        env = {k: v for k, v in env.items() if keep.match(k) is not None}
    if overrides:
        env.update(overrides)
    env.update(policy.set)
    return env
