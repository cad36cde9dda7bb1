"""vtcode's own git: the one place that builds the command line and environment of every git
process vtcode itself starts, so that nothing a repository names in its config, hooks or
attributes ever runs.

Why: a sandboxed command may write `.git/` (workspace-write). Whatever it plants there
(`core.fsmonitor`, `core.hooksPath`, `.git/hooks/*`, a filter or merge driver, an `ext::`
remote, ...) would otherwise run the next time vtcode runs git for orientation, handoff or a
subagent worktree: outside the sandbox, in the host network namespace. See docs/security.md,
"vtcode's own git", for the list and its limits.

How, in three parts:

1. `HARDENED_CONFIG`: settings passed with `-c` (command scope beats every config file) that
   switch off each program-running key whose name is fixed: the fsmonitor hook, the hooks
   folder (`/dev/null`: `/dev/null/<hook>` can never exist, for anybody), pager, editors,
   ssh, askpass, credential helpers, external diff, signing and signature checks, every
   transport (`protocol.allow=never` and each named protocol, since `protocol.<name>.allow`
   beats `protocol.allow`), automatic gc/maintenance, implicit bare repositories.
2. Driver names are chosen by the repository (`filter=<name>` in `.gitattributes`, defined as
   `filter.<name>.clean` in its config), so they cannot be listed in advance. `git config
   --list --show-scope` runs nothing; vtcode reads it first and, for every filter, merge and
   diff driver program key that repository-scope config (local, worktree, and whatever they
   include) sets, sets that key back to what the user's own (global) config says, or to
   empty, which git treats as "no driver" (a filter) or a failed merge (a merge driver, so
   the merge stops instead of guessing). Only the keys the repository sets: an empty
   `process` would also switch off the user's own `clean`/`smudge` of that name. The user's
   global config stays in force: it is the user's, holds the identity commits need and their
   own drivers (git-lfs); the system config is skipped (`GIT_CONFIG_NOSYSTEM`): vtcode needs
   nothing from it.
3. The environment: every inherited `GIT_*` variable is dropped (they can name programs,
   config, another repository), then vtcode sets its own.

`core.worktree` cannot be switched off from the command line; a repository-scope value is
accepted only when it names the folder whose `.git` is this repository (a submodule's absorbed
git dir does this), otherwise the call is refused (`UnsafeRepositoryError`): git would
otherwise read and index a folder outside the workspace.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path

from vtcode.errors import ExitCode, VtcodeError
from vtcode.ownfile import read_own

__all__ = [
    "CLONE_TRANSPORTS",
    "DIFF_SUBCOMMANDS",
    "HARDENED_CONFIG",
    "UnsafeRepositoryError",
    "git_argv",
    "git_env",
    "repo_overrides",
    "run_git",
]

_PROTOCOLS = ("file", "git", "ssh", "http", "https", "ext")
# Fixed-name settings that switch off every program git would run from config (git 2.39).
HARDENED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),  # ":" is git's own "no editor"
    ("sequence.editor", ":"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("credential.helper", ""),  # an empty value clears the list of helpers
    ("diff.external", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("merge.verifySignatures", "false"),
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in _PROTOCOLS),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
)

# Subcommands that can print a diff: never an external diff program or a textconv filter.
DIFF_SUBCOMMANDS = frozenset({"diff", "log", "show", "whatchanged", "diff-tree", "diff-files"})

# Driver families: section -> program keys (each reset for every repository-named driver).
_DRIVER_KEYS: dict[str, tuple[str, ...]] = {
    "filter": ("clean", "smudge", "process", "required"),
    "merge": ("driver",),
    "diff": ("command", "textconv"),
}
_EMPTY_VALUE = {"required": "false"}
_REPO_SCOPES = frozenset({"local", "worktree"})
# Inherited variables kept: the user's identity for commits (CI sets these), the discovery
# ceiling, and where the user keeps their global config (trusted like HOME, which also names
# it). Every other GIT_* is dropped.
_KEEP_GIT_VARS = frozenset(
    {"GIT_CEILING_DIRECTORIES", "GIT_CONFIG_GLOBAL"}
    | {f"GIT_{who}_{what}" for who in ("AUTHOR", "COMMITTER") for what in ("NAME", "EMAIL", "DATE")}
)
_CONFIG_TIMEOUT_SECS = 5.0


class UnsafeRepositoryError(VtcodeError):
    """The repository's own config would move git outside it (`core.worktree` elsewhere) or
    names a program no command-line setting switches off; nothing was run."""

    exit_code = ExitCode.USAGE


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) without any inherited `GIT_*` variable,
    plus vtcode's own: no system config, no prompts, no optional locks, no lazy fetch."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_") or k in _KEEP_GIT_VARS}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_ATTR_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PROTOCOL_FROM_USER="0",
        GIT_NO_LAZY_FETCH="1",
    )
    env.setdefault("LC_ALL", "C")
    return env


def _subcommand_index(args: Sequence[str]) -> int | None:
    i = 0
    while i < len(args):
        if args[i] == "-c":
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return i
    return None


CLONE_TRANSPORTS = ("file", "http", "https", "git", "ssh")


def git_argv(args: Sequence[str], *, transports: Collection[str] = ()) -> list[str]:
    """`git --no-pager -c <hardened>... ARGS`, with `--no-ext-diff --no-textconv` after a diff
    subcommand and `--ignore-submodules=dirty` after `status` (a dirty-submodule check runs
    git inside each submodule, under config this call never read).

    `transports` opens those protocols for a call that must fetch (a clone of a task's
    repository; see `CLONE_TRANSPORTS`); with `ssh`, the user's own ssh setup is used. `ext`
    (any command as a remote) is never allowed."""
    unknown = set(transports) - set(CLONE_TRANSPORTS)
    if unknown:
        raise ValueError(f"not a transport vtcode's git may use: {sorted(unknown)}")
    argv = ["git", "--no-pager"]
    for key, value in HARDENED_CONFIG:
        if key == "core.sshCommand" and "ssh" in transports:
            continue
        argv += ["-c", f"{key}={value}"]
    for name in sorted(transports):
        argv += ["-c", f"protocol.{name}.allow=always"]
    rest = list(args)
    sub = _subcommand_index(rest)
    if sub is not None:
        extra: list[str] = []
        if rest[sub] in DIFF_SUBCOMMANDS:
            extra = ["--no-ext-diff", "--no-textconv"]
        elif rest[sub] == "status":
            extra = ["--ignore-submodules=dirty"]
        rest[sub + 1 : sub + 1] = extra
    return argv + rest


def _config_entries(listing: str) -> list[tuple[str, str, str | None]]:
    """(scope, key, value) from `git config --list --show-scope -z` (value None: bare key)."""
    fields = listing.split("\0")
    out: list[tuple[str, str, str | None]] = []
    for i in range(0, len(fields) - 1, 2):
        scope, entry = fields[i], fields[i + 1]
        key, sep, value = entry.partition("\n")
        out.append((scope, key, value if sep else None))
    return out


def _split_driver_key(key: str) -> tuple[str, str, str] | None:
    section, dot, rest = key.partition(".")
    name, dot2, leaf = rest.rpartition(".")
    if not dot or not dot2 or section.lower() not in _DRIVER_KEYS:
        return None
    return section.lower(), name, leaf.lower()


def repo_overrides(listing: str, gitdir_of: Callable[[], Path | None]) -> list[tuple[str, str]]:
    """Command-scope settings that undo what repository-scope config adds (see module doc).

    Raises `UnsafeRepositoryError` for a repository-scope `core.worktree` that is not the
    folder holding this repository's `.git`, and for config-defined hooks (`hook.<name>.*`,
    newer git), which no command-line setting switches off."""
    entries = _config_entries(listing)
    trusted: dict[tuple[str, str, str], str] = {}
    planted: set[tuple[str, str, str]] = set()
    worktree_values: list[str] = []
    for scope, key, value in entries:
        if key.lower() == "core.worktree" and scope in _REPO_SCOPES and value is not None:
            worktree_values.append(value)
        if key.lower().startswith("hook.") and scope in _REPO_SCOPES:
            raise UnsafeRepositoryError(
                f"the repository's config defines a hook ({key}); vtcode does not run git "
                "where its config names programs it cannot switch off",
                hint=f"remove it: git config --unset-all {key}",
            )
        parts = _split_driver_key(key)
        if parts is None or parts[2] not in _DRIVER_KEYS[parts[0]]:
            continue
        if scope in _REPO_SCOPES:
            planted.add(parts)
        elif scope == "global" and value is not None:
            trusted[parts] = value  # the last global value wins, as in git
    if worktree_values:
        _check_worktree(worktree_values[-1], gitdir_of())
    return [
        (f"{sec}.{name}.{leaf}", trusted.get((sec, name, leaf), _EMPTY_VALUE.get(leaf, "")))
        for sec, name, leaf in sorted(planted)
    ]


class _GitDirLookup:
    """The absolute git dir of `cwd`, asked of git only when a check needs it."""

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.env = env

    def __call__(self) -> Path | None:
        proc = _plain_run(["rev-parse", "--absolute-git-dir"], self.cwd, self.env, [])
        if proc is None or proc.returncode != 0 or not proc.stdout.strip():
            return None
        return Path(proc.stdout.strip())


def _check_worktree(value: str, gitdir: Path | None) -> None:
    if gitdir is not None:
        top = Path(os.path.realpath(gitdir / value))
        dotgit = top / ".git"
        target: Path | None = None
        if dotgit.is_dir() and not dotgit.is_symlink():
            target = dotgit
        elif dotgit.is_file() and not dotgit.is_symlink():
            try:
                text = read_own(dotgit, 4096).decode("utf-8", errors="replace").strip()
            except OSError:
                text = ""
            if text.startswith("gitdir:"):
                target = top / text.removeprefix("gitdir:").strip()
        if target is not None and os.path.realpath(target) == os.path.realpath(gitdir):
            return
    raise UnsafeRepositoryError(
        f"the repository's config sets core.worktree = {value!r}, a folder that is not this "
        "repository's work tree; vtcode does not run git there",
        hint="remove it: git config --unset core.worktree",
    )


def _plain_run(
    args: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    overrides: Sequence[tuple[str, str]],
    timeout: float = _CONFIG_TIMEOUT_SECS,
) -> subprocess.CompletedProcess[str] | None:
    run_env = dict(env)
    if overrides:
        run_env["GIT_CONFIG_COUNT"] = str(len(overrides))
        for i, (key, value) in enumerate(overrides):
            run_env[f"GIT_CONFIG_KEY_{i}"] = key
            run_env[f"GIT_CONFIG_VALUE_{i}"] = value
    try:
        return subprocess.run(
            git_argv(args),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            env=run_env,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


def run_git(
    args: Sequence[str], cwd: Path, *, timeout: float
) -> subprocess.CompletedProcess[str] | None:
    """Run vtcode's own `git ARGS` in `cwd`, immune to repository config (see module doc).

    None when git is missing or times out. A config listing git refuses (a malformed file)
    is returned as the result: the command itself would fail the same way. Raises
    `UnsafeRepositoryError` (nothing run) for a `core.worktree` outside the repository."""
    env = git_env()
    listing = _plain_run(["config", "--list", "--show-scope", "-z"], cwd, env, [])
    if listing is None or listing.returncode != 0:
        return listing
    overrides = repo_overrides(listing.stdout, _GitDirLookup(cwd, env))
    return _plain_run(args, cwd, env, overrides, timeout)
