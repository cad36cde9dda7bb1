"""The table of repository-controlled git settings that name a program (issue 23 item 3).

Each row plants one setting in a real repository so that, if git ever runs it, a program
(`evil.sh`, outside the workspace) appends the row's name to a marker file outside the
workspace and another inside it. A row's `control` is a shell snippet that fires it with a
plain `git` (no vtcode): run on a copy of the planted repository, it proves the plant was live
while vtcode's own git ran. A new setting is one more row.

Rows of one `group` share a repository, so no two of them may set the same config key
(`test_the_table_is_consistent` checks it): group "a" has hooks in `.git/hooks/`, group "b"
moves them with `core.hooksPath` (which turns `.git/hooks/` off) and plants through the
other config sources (`config.worktree`, `includeIf`).
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

# Every hook git 2.39 knows (githooks(5)).
HOOKS = (
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

# `.gitattributes` of the base commit: drivers by name, defined (planted) later in config.
ATTRIBUTES = """\
* filter=evil merge=evil
greeting.txt diff=evil
*.toml filter=evilproc
inc.txt filter=incl
incif.txt filter=inclif
odd.txt filter=we=ird.name
"""

_EVIL = """\
#!/bin/sh
# A planted program: records that it ran (outside and inside the workspace), then behaves
# enough like the real thing that git goes on (a filter passes its input through).
echo "$1" >> {outside}
echo "$1" >> {inside}
case "$1" in
  filter*) exec cat ;;
  hook*) exit 0 ;;
esac
exit 1
"""

_CLEAN = "env -u GIT_EDITOR -u EDITOR -u VISUAL -u GIT_PAGER -u PAGER"


@dataclasses.dataclass(frozen=True)
class Plant:
    name: str
    group: str = "a"
    # git config KEY VALUE in the repository's own config; "{evil}" is this row's program.
    config: tuple[tuple[str, str], ...] = ()
    # files relative to the workspace ("{evil}" as above); hooks are made executable.
    files: tuple[tuple[str, str], ...] = ()
    # variables in vtcode's own environment (the user's process, not the repository).
    env: tuple[tuple[str, str], ...] = ()
    control: str | None = None  # sh snippet, run with plain git in a fresh planted repository
    setup: Callable[[Path], None] | None = None  # run on the repository before the config


def sign_head(ws: Path) -> None:
    """Give HEAD an (unverifiable) SSH signature header, so that `log.showSignature` has
    something to verify: git then runs `gpg.ssh.program`."""
    text = git(ws, "cat-file", "commit", "HEAD")
    head, _, body = text.partition("\n\n")
    sig = "gpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQ==\n -----END SSH SIGNATURE-----"
    proc = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=ws, input=f"{head}\n{sig}\n\n{body}", capture_output=True, text=True, check=True,
    )  # fmt: skip
    git(ws, "update-ref", "refs/heads/main", proc.stdout.strip())
    (ws / "allowed_signers").write_text("")


def _hook(name: str) -> tuple[str, str]:
    return (f".git/hooks/{name}", '#!/bin/sh\nexec {evil} "$@"\n')


def _moved_hook(name: str) -> tuple[str, str]:
    return (f".githooks/{name}", '#!/bin/sh\nexec {evil} "$@"\n')


_COMMIT = "git commit -q --allow-empty -m ctl"
_SIDE = "git checkout -q -b side && echo side >> greeting.txt && git commit -qam side && "
_BRANCH_MERGE = (  # a merge commit without conflicts
    _SIDE + "git checkout -q main && echo main >> info.txt && git commit -qam main && "
    "git merge -q --no-edit side"
)
_BOTH_SIDES_MERGE = (  # both sides change greeting.txt: its merge driver runs
    _SIDE + "git checkout -q main && echo main >> greeting.txt && git commit -qam main && "
    "git merge -q --no-edit side"
)

PLANTS: tuple[Plant, ...] = (
    Plant("fsmonitor", config=(("core.fsmonitor", "{evil}"),), control="git status"),
    *(
        Plant(f"hook-{h}", files=(_hook(h),), control=_COMMIT)
        for h in ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit")
    ),
    Plant("hook-reference-transaction", files=(_hook("reference-transaction"),), control=_COMMIT),
    Plant("hook-post-index-change", files=(_hook("post-index-change"),), control="git add -A"),
    Plant("hook-post-checkout", files=(_hook("post-checkout"),), control="git checkout -q -b c"),
    Plant("hook-pre-merge-commit", files=(_hook("pre-merge-commit"),), control=_BRANCH_MERGE),
    Plant("hook-post-merge", files=(_hook("post-merge"),), control=_BRANCH_MERGE),
    Plant("hook-pre-auto-gc", files=(_hook("pre-auto-gc"),)),
    Plant(
        "hook-others",
        files=tuple(
            _hook(h)
            for h in HOOKS
            if h
            not in {
                "pre-commit",
                "prepare-commit-msg",
                "commit-msg",
                "post-commit",
                "reference-transaction",
                "post-index-change",
                "post-checkout",
                "pre-merge-commit",
                "post-merge",
                "pre-auto-gc",
            }
        ),
    ),
    Plant("pager", config=(("core.pager", "{evil}"), ("pager.status", "{evil}"))),
    Plant("editor", config=(("core.editor", "{evil}"),), control="git commit -q --allow-empty"),
    Plant("sequence-editor", config=(("sequence.editor", "{evil}"),)),
    Plant(
        "filter-clean",
        config=(("filter.evil.clean", "{evil}"), ("filter.evil.required", "true")),
        control="echo more >> notes.txt && git add notes.txt",
    ),
    Plant(
        "filter-smudge",
        config=(("filter.evil.smudge", "{evil}"),),
        control="rm greeting.txt && git checkout -- greeting.txt",
    ),
    Plant(
        "filter-process",
        config=(("filter.evilproc.process", "{evil}"),),
        control="echo >> vtcode.toml && git add vtcode.toml",
    ),
    Plant(
        "filter-info-attributes",
        config=(("filter.infoattr.clean", "{evil}"), ("filter.infoattr.smudge", "{evil}")),
        files=((".git/info/attributes", "info.txt filter=infoattr\n"),),
        control="echo more >> info.txt && git add info.txt",
    ),
    Plant(
        "filter-include-path",
        config=(("include.path", "../inc.gitconfig"),),
        files=(("inc.gitconfig", '[filter "incl"]\n\tclean = {evil}\n\tsmudge = {evil}\n'),),
        control="echo more >> inc.txt && git add inc.txt",
    ),
    Plant(
        "diff-external",
        config=(("diff.external", "{evil}"),),
        control="echo more >> notes.txt && git diff",
    ),
    Plant(
        "diff-textconv",
        config=(("diff.evil.textconv", "{evil}"),),
        control="echo more >> greeting.txt && git diff --no-ext-diff",
    ),
    Plant("merge-driver", config=(("merge.evil.driver", "{evil}"),), control=_BOTH_SIDES_MERGE),
    Plant(
        "gpg-sign",
        config=(("commit.gpgSign", "true"), ("gpg.program", "{evil}")),
        control=_COMMIT,
    ),
    Plant(
        "log-show-signature",
        config=(
            ("log.showSignature", "true"),
            ("gpg.ssh.program", "{evil}"),
            ("gpg.ssh.allowedSignersFile", "allowed_signers"),
        ),
        setup=sign_head,
        control="git log -1 --oneline",
    ),
    Plant(
        "filter-odd-name",  # a driver name holding '=' and '.' (no `-c name=value` can say it)
        config=(("filter.we=ird.name.clean", "{evil}"),),
        control="echo more >> odd.txt && git add odd.txt",
    ),
    Plant(
        "ssh-command",
        config=(("core.sshCommand", "{evil}"),),
        control="git ls-remote ssh://example.invalid/x",
    ),
    Plant(
        "git-proxy",
        config=(("core.gitProxy", "{evil}"),),
        control="git ls-remote git://example.invalid/x",
    ),
    Plant(
        "ext-remote",
        config=(("protocol.ext.allow", "always"), ("remote.ext.url", "ext::{evil}")),
        control="git ls-remote ext",
    ),
    Plant(
        "upload-pack",
        config=(
            ("remote.up.url", "."),
            ("remote.up.uploadpack", "{evil}"),
            ("protocol.file.allow", "always"),
        ),
        control="git ls-remote up",
    ),
    Plant(
        "askpass-credential", config=(("core.askPass", "{evil}"), ("credential.helper", "{evil}"))
    ),
    Plant("pack-objects-hook", config=(("uploadpack.packObjectsHook", "{evil}"),)),
    Plant(
        "aliases",
        config=tuple(
            (f"alias.{c}", "!{evil}")
            for c in ("status", "log", "rev-parse", "worktree", "commit", "merge")
        ),
    ),
    # vtcode's own environment: inherited GIT_* variables that would name a program.
    Plant(
        "env-config-parameters",
        env=(("GIT_CONFIG_PARAMETERS", "'core.fsmonitor={evil}'"),),
        control="git status",
    ),
    Plant(
        "env-config-count",
        env=(
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
            ("GIT_CONFIG_VALUE_0", "{evil}"),
        ),
        control="git status",
    ),
    Plant(
        "env-programs",
        env=(
            ("GIT_EXTERNAL_DIFF", "{evil}"),
            ("GIT_SSH_COMMAND", "{evil}"),
            ("GIT_EDITOR", "{evil}"),
            ("GIT_PAGER", "{evil}"),
            ("GIT_ASKPASS", "{evil}"),
            ("GIT_SEQUENCE_EDITOR", "{evil}"),
        ),
    ),
    # group b: hooks moved by core.hooksPath, settings from the other config sources.
    Plant(
        "hooks-path",
        group="b",
        config=(("core.hooksPath", ".githooks"),),
        files=tuple(_moved_hook(h) for h in HOOKS),
        control=_COMMIT,
    ),
    Plant(
        "worktree-config",
        group="b",
        config=(("core.repositoryFormatVersion", "1"), ("extensions.worktreeConfig", "true")),
        files=((".git/config.worktree", "[core]\n\tfsmonitor = {evil}\n"),),
        control="git status",
    ),
    Plant(
        "include-if",
        group="b",
        config=(("includeIf.gitdir:/.path", "../incif.gitconfig"),),
        files=(("incif.gitconfig", '[filter "inclif"]\n\tclean = {evil}\n'),),
        control="echo more >> incif.txt && git add incif.txt",
    ),
)


def git(ws: Path, *args: str) -> str:
    """Plain git for setting up (identity from the environment, nothing planted yet)."""
    env = {**os.environ, **IDENTITY}
    proc = subprocess.run(
        ["git", *args], cwd=ws, env=env, check=True, capture_output=True, text=True
    )
    return proc.stdout


def evil_program(root: Path, ws: Path) -> Path:
    """`root/evil.sh`, and beside it one `evil-<row>` per row that runs it with the row's name
    (git runs some programs through the shell, others, such as `gpg.program`, as a bare path)."""
    path = root / "evil.sh"
    path.write_text(_EVIL.format(outside=root / "outside-markers", inside=ws / ".inside-markers"))
    path.chmod(0o755)
    for row in PLANTS:
        wrapper = root / f"evil-{row.name}"
        wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(str(path))} {row.name} "$@"\n')
        wrapper.chmod(0o755)
    return path


def command(evil: Path, plant: Plant) -> str:
    return str(evil.parent / f"evil-{plant.name}")


def plant(ws: Path, evil: Path, rows: tuple[Plant, ...]) -> dict[str, str]:
    """Plant `rows` in the repository at `ws`; returns the environment of the env rows."""
    env: dict[str, str] = {}
    for row in rows:
        if row.setup is not None:
            row.setup(ws)
    for row in rows:
        run = command(evil, row)
        for key, value in row.config:
            git(ws, "config", key, value.replace("{evil}", run))
        for rel, text in row.files:
            path = ws / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.replace("{evil}", run))
            if "hooks/" in rel:
                path.chmod(path.stat().st_mode | stat.S_IXUSR)
        for key, value in row.env:
            env[key] = value.replace("{evil}", run)
    return env


def run_control(copy: Path, evil: Path, row: Plant) -> None:
    """Fire `row` with plain git in `copy` (output ignored: only the marker matters)."""
    assert row.control is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(IDENTITY)
    env.update({k: v.replace("{evil}", command(evil, row)) for k, v in row.env})
    subprocess.run(
        ["sh", "-c", f"{_CLEAN} sh -c {shlex.quote(row.control)}"],
        cwd=copy,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
