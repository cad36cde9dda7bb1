"""Issue 23.4/23.5: an allow rule `exec_command(git *)` covers git, not the programs git can be
told to run, nor writes its options make outside the workspace; assignments are screened for every
command; and the eight parser tricks that beat deny rules follow bash.

Each escape row is a line git or bash would really turn into another program (the parser tricks
are run by real bash below, deleting a victim file); each benign row must stay covered, so the
rule remains usable.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from vtcode.tools.permissions import Decision, PermissionPolicy

ALLOW_GIT = "exec_command(git *)"
DENY_RM = "exec_command(rm *)"

# runs another program (or may): never covered by `git *`, denied next to any exec deny rule
GIT_ESCAPES = [
    "git fetch --upload-pack='touch pwned' origin",
    "git fetch --upload-pack 'touch pwned' origin",
    "git fetch --upl='touch pwned' origin",
    "git pull --upload-pack=x origin main",
    "git clone -u 'touch pwned' origin dest",
    "git clone --upload-pack=x origin dest",
    "git ls-remote --upload-pack=x origin",
    "git ls-remote -u x origin",
    "git push --receive-pack='touch pwned' origin",
    "git push --exec='touch pwned' origin",
    "git archive --remote=origin --exec='touch pwned' HEAD",
    "git -c protocol.ext.allow=always fetch 'ext::sh -c touch% pwned'",
    "git fetch 'ext::sh -c touch% pwned'",
    "git remote add x 'ext::sh -c id'",
    "git fetch fd::3",
    "git fetch 'EXT::sh -c id'",
    "git -c core.fsmonitor='touch pwned' status",
    "git -c core.pager=less log",
    "git -c x.y=z status",
    "git -cinclude.path=/tmp/x status",
    "git --config-env=core.pager=P log",
    "git difftool -x 'touch pwned' HEAD",
    "git difftool --extcmd='touch pwned'",
    "git difftool --tool=vimdiff",
    "git mergetool",
    "git bisect run sh -c 'touch pwned'",
    "git submodule foreach 'touch pwned'",
    "git submodule --quiet foreach --recursive 'touch pwned'",
    "git rebase --exec 'touch pwned' HEAD~2",
    "git rebase -x 'touch pwned' HEAD~2",
    "git rebase --exe='touch pwned' HEAD~2",
    "git rebase -i HEAD~2",
    "git rebase -ri HEAD~2",
    "git rebase --interactive HEAD~2",
    "git filter-branch --tree-filter 'touch pwned' HEAD",
    "git filter-branch --msg-filter cat",
    "git config core.fsmonitor 'touch pwned'",
    "git config core.pager 'touch pwned'",
    "git config core.hooksPath /tmp/hooks",
    "git config core.sshCommand 'touch pwned'",
    "git config alias.st '!touch pwned'",
    "git config alias.st status",
    "git config filter.x.clean 'touch pwned'",
    "git config diff.external 'touch pwned'",
    "git config include.path /tmp/evil.cfg",
    "git config --add core.editor vi",
    "git config --replace-all core.pager x",
    "git config set core.pager x",
    "git config --global user.name x",
    "git config -e",
    "git config --rename-section a b",
    "git --exec-path=/tmp/bin status",
    "git daemon --base-path=.",
    "git instaweb",
    "git credential fill",
    "git credential-store get",
    "git send-email x.patch",
    "git imap-send",
    "git maintenance start",
    "git hook run pre-commit",
    "git remote-ext origin 'sh -c id'",
    "git upload-pack .",
    "git grep -O foo",
    "git grep --open-files-in-pager=vim foo",
    "git init --template=/tmp/tpl",
    "git clone --template=/tmp/tpl origin dest",
    "git clone -c core.fsmonitor=x origin dest",
    "git clone --config=core.hooksPath=/tmp/h origin dest",
    "git log $X",
    "git fetch * .",
    "git fetch {--upload-pack=x,origin}",
    "shopt -s extglob\ngit fetch @(--upload-pack=*) .",
    "git apply --unsafe-paths p.diff",
    "export {PATH,X}=/tmp; git status",
    'git log "$(cat args)"',
    # environment prefixes and assignments, for git and for every other command
    "GIT_SSH_COMMAND='touch pwned' git fetch origin",
    "GIT_SSH=/tmp/x git fetch origin",
    "GIT_EXTERNAL_DIFF='touch pwned' git diff",
    "GIT_EDITOR='touch pwned' git commit",
    "GIT_SEQUENCE_EDITOR=x git rebase HEAD~1",
    "GIT_PAGER='touch pwned' git log",
    "PAGER='touch pwned' git log",
    "EDITOR=x git commit",
    "VISUAL=x git commit",
    "GIT_ASKPASS=x git fetch",
    "SSH_ASKPASS=x git fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log",
    "GIT_CONFIG_PARAMETERS=\"'core.pager'='x'\" git log",
    "GIT_CONFIG=/tmp/c git log",
    "GIT_CONFIG_GLOBAL=/tmp/c git log",
    "GIT_EXEC_PATH=/tmp/x git status",
    "GIT_TEMPLATE_DIR=/tmp/t git init",
    "GIT_PROXY_COMMAND=x git fetch",
    "GIT_DIR=/tmp/evil/.git git status",
    "LD_PRELOAD=/tmp/x.so git status",
    "LD_LIBRARY_PATH=/tmp git status",
    "LD_AUDIT=/tmp/x.so git status",
    "PATH=/tmp/bin:$PATH git status",
    "HOME=/tmp/evil git status",
    "BASH_ENV=/tmp/x git status",
    "PYTHONPATH=/tmp git status",
    "env GIT_PAGER='touch pwned' git log",
    "env -i PATH=/tmp git log",
    "env 'BASH_FUNC_git%%=() { touch pwned; }' git log",
    "export GIT_PAGER='touch pwned'; git log",
    "declare -x GIT_EDITOR=x; git commit",
    "GIT_PAGER=x; git log",
    ": ${GIT_PAGER:='touch pwned'}; export GIT_PAGER; git -p log",
    "readonly PAGER=x; git log",
    "read -r PATH <<< /tmp; git status",
    "printf -v GIT_PAGER x; git log",
    "for PATH in /tmp; do git status; done",
    "(( PATH=1 )); git status",
    # a repository elsewhere brings its own config
    "git -C /tmp/evil status",
    "git -C .. status",
    "git --git-dir=/tmp/evil/.git status",
    "git --work-tree=/tmp/evil status",
    "cd /tmp/evil && git status",
    "cd && git status",
    "env -C /tmp/evil git status",
]

# allow rules never cover them, but nothing runs another program: deny rules do not deny them
ENV_UNCOVERED = [
    "FOO=1 git log",
    "X=1; git log",
    "export FOO=bar; git status",
    "env FOO=1 git log",
    "CC=gcc git status",
]

GIT_BENIGN = [
    "git status",
    "git status --short",
    "git diff --stat",
    "git diff HEAD~1 -- src/",
    "git log -n 3 --oneline",
    "git log --format='%H %s' -5",
    "git log --output-indicator-new=+ -p",
    'git commit -m "x"',
    "git commit -am 'fix: a thing'",
    "git add -A",
    "git add -u",
    "git checkout -b x",
    "git switch -c feature",
    "git branch -D old",
    "git push -u origin main",
    "git fetch origin",
    "git fetch -u origin",
    "git pull --rebase origin main",
    "git rebase main",
    "git rebase --continue",
    "git stash push -m wip",
    "git -C . status",
    "git -C sub log",
    "git -c color.ui=always log",
    "git -c user.name=bot -c user.email=b@x commit -m x",
    "git config user.name",
    "git config --get core.pager",
    "git config --list",
    "git config -l",
    "git config --get-regexp alias",
    "git config user.email bot@example.com",
    "git config get core.editor",
    "git show HEAD:README.md",
    "git log --output=log.txt",
    "git format-patch -o patches HEAD~2",
    "git worktree add wt/feature",
    "git init sub/repo",
    "git clone https://example.com/r.git vendor/r",
    "git archive -o out.tar HEAD",
    "git bundle create repo.bundle HEAD",
    "LANG=C git log",
    "LC_ALL=C.UTF-8 TZ=UTC git log",
    "NO_COLOR=1 CI=1 git status",
    "GIT_AUTHOR_NAME=bot GIT_COMMITTER_NAME=bot git commit -m x",
    "git grep -n foo",
    "git bisect start",
    "git submodule update --init",
    "git add ./*.py",
    "git commit --template=msg.txt",
    "git add -- *.py",
]

# option-form writes: like redirections, outside the workspace they need write_file permission
OPTION_WRITES = [
    "git log --output={outside}",
    "git log --output {outside}",
    "git diff --out={outside}",
    "git format-patch -o {outside} HEAD~1",
    "git format-patch --output-directory={outside} HEAD~1",
    "git archive --output={outside} HEAD",
    "git archive -o {outside} HEAD",
    "git bundle create {outside} HEAD",
    "git worktree add {outside}",
    "git worktree add -b x {outside} main",
    "git init {outside}",
    "git init --separate-git-dir={outside} sub",
    "git clone https://example.com/r.git {outside}",
    "git -C sub log --output=../../outside.txt",
    "git config --file {outside} user.name x",
    "git submodule add -b main https://example.com/r.git {outside}",
    "find . -fprint {outside}",
]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "sub").mkdir(parents=True)
    return workspace


def check(ws: Path, line: str, **rules: list[str]) -> tuple[Decision, str]:
    verdict = PermissionPolicy(workspace=ws, **rules).check("exec_command", {"command": line})
    return verdict.decision, verdict.reason


@pytest.mark.parametrize("line", GIT_ESCAPES)
def test_escapes_fall_outside_the_allow_rule(ws: Path, line: str) -> None:
    decision, reason = check(ws, line, allow=[ALLOW_GIT])
    assert decision is Decision.ASK, reason
    assert f"not covered by the allow rules '{ALLOW_GIT}'; " in reason


@pytest.mark.parametrize("line", GIT_ESCAPES)
def test_escapes_are_denied_next_to_a_deny_rule(ws: Path, line: str) -> None:
    decision, reason = check(ws, line, allow=[ALLOW_GIT], deny=[DENY_RM])
    assert decision is Decision.DENY, reason
    assert f"cannot be checked against deny rule '{DENY_RM}'" in reason


@pytest.mark.parametrize("line", ENV_UNCOVERED)
def test_other_assignments_keep_allow_rules_off_but_are_not_denied(ws: Path, line: str) -> None:
    decision, reason = check(ws, line, allow=[ALLOW_GIT])
    assert decision is Decision.ASK, reason
    assert "allow rules cover only locale, colour and git identity" in reason
    assert check(ws, line, deny=[DENY_RM])[0] is Decision.ALLOW


@pytest.mark.parametrize("line", GIT_BENIGN)
def test_everyday_git_stays_covered(ws: Path, line: str) -> None:
    decision, reason = check(ws, line, allow=[ALLOW_GIT], deny=[DENY_RM])
    assert decision is Decision.ALLOW, reason


@pytest.mark.parametrize("line", OPTION_WRITES)
def test_option_writes_outside_are_judged_like_redirects(ws: Path, line: str) -> None:
    outside = ws.parent / "outside.txt"
    command = line.format(outside=outside)
    allow = [ALLOW_GIT, "exec_command(find *)"]
    decision, reason = check(ws, command, allow=allow)
    assert decision is Decision.ASK, reason
    assert f"writes {outside} outside the workspace" in reason
    decision, reason = check(ws, command, allow=allow, deny=["write_file(**/outside.txt)"])
    assert (decision, reason) == (
        Decision.DENY,
        f"redirect writes {outside}: denied by rule 'write_file(**/outside.txt)'",
    )
    decision, reason = check(ws, command, allow=[*allow, "write_file(**/outside.txt)"])
    assert decision is Decision.ALLOW, reason
    inside = line.format(outside="inside.txt").replace("../../outside.txt", "../inside.txt")
    assert check(ws, inside, allow=allow)[0] is Decision.ALLOW


def test_a_glob_can_expand_to_an_option(tmp_path: Path) -> None:
    """A file named `--upload-pack=...` makes `git fetch *` run it (checked with real git)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "--upload-pack=touch pwned;false").write_text("")
    subprocess.run(["bash", "-c", "git fetch * ."], cwd=tmp_path, capture_output=True, timeout=30)
    assert (tmp_path / "pwned").exists()
    decision, reason = check(tmp_path, "git fetch * .", allow=[ALLOW_GIT])
    assert decision is Decision.ASK
    assert "could expand to an option" in reason


# --- the eight parser tricks (issue 23.5), each run by real bash first ---------------------------

PARSER_TRICKS = [
    "r\\\nm -f victim",
    "declare -a 'a=([0]=$(rm -f victim))'",
    "typeset 'a[$(rm -f victim)]'=1",
    "printf -v 'a[$(rm -f victim)]' x",
    "read -r 'a[$(rm -f victim)]' <<< x",
    "test -v 'a[$(rm -f victim)]'",
    "[ -v 'a[$(rm -f victim)]' ]",
    "[[ -v 'a[$(rm -f victim)]' ]]",
    "let 'a[$(rm -f victim)]=1'",
    "(( 'a[$(rm -f victim)]' ))",
    "echo $(( 'a[$(rm -f victim)]' ))",
    "x='a[$(rm -f victim)]'; (( x ))",
    "x='a[$(rm -f victim)]'; echo ${!x}",
    "printf -v x 'a[$(rm -f victim)]'; (( x ))",
    "[[ 1 -eq 'a[$(rm -f victim)]' ]]",
    "declare -i n; n='a[$(rm -f victim)]'",
    "declare -n r='a[$(rm -f victim)]'; echo $r",
    "printf -v'a[$(rm -f victim)]' x",
    "x='a[$(rm -f victim)]'; echo $[x]",
    "x='a[$(rm -f victim)]'; a=(1 2); echo ${a[x]}",
    "x='a[$(rm -f victim)]'; [[ $x -eq 1 ]]",
    "x='a[$(rm -f victim)]'; y=$(( 1 + x ))",
    "x='a[$(rm -f victim)]'; for ((i=x;i<0;i++)); do :; done",
    "x='a[$(rm -f victim)]'; declare -i y=x",
    "echo 'a[$(rm -f victim)]' > f; read x < f; (( x ))",
    "f(){ (( $1 )); }; f 'a[$(rm -f victim)]'",
    "bash -c '(( $1 ))' _ 'a[$(rm -f victim)]'",
    "hash -p /bin/rm ls; ls -f victim",
    "BASH_CMDS[ls]=/bin/rm; ls -f victim",
    "BASH_ENV=<(echo rm -f victim) bash -c true",
    "env 'BASH_FUNC_ls%%=() { rm -f victim; }' bash -c ls",
    "set -x; PS4='$(rm -f victim)'; true",
    "echo 'a\\\nb'; # c\\\nrm -f victim",
    "echo x\\\n; r\\\nm -f victim",
    'echo "a\\\n$(r\\\nm -f victim)"',
    "bash <<E\nr\\\\\nm -f victim\nE",
]


# each trick's visible commands, one rule each: none may cover a line that runs rm
OTHER_COMMANDS = [
    f"exec_command({name} *)"
    for name in "r echo bash ls true declare typeset printf read test [ let hash env set".split()  # noqa: SIM905
]


@pytest.mark.parametrize("line", PARSER_TRICKS)
def test_parser_tricks_run_rm_in_bash_and_are_denied(tmp_path: Path, line: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("x")
    subprocess.run(["bash", "-c", line], cwd=tmp_path, capture_output=True, timeout=30, check=False)
    assert not victim.exists(), "bash did not run rm: the row does not test what it claims"
    decision, reason = check(tmp_path, line, deny=[DENY_RM])
    assert decision is Decision.DENY, reason
    decision, reason = check(tmp_path, line, allow=OTHER_COMMANDS)
    assert decision is Decision.ASK, reason


def test_writes_after_cd_are_judged_from_where_cd_went(ws: Path) -> None:
    """`cd secrets && echo k > key` writes secrets/key: the write_file deny rule applies."""
    rules = {"deny": ["write_file(secrets/**)"]}
    for line in (
        "cd secrets && echo k > key",
        "env -C secrets tee key",
        "cd sub; cd ../secrets; tee k",
    ):
        decision, reason = check(ws, line, **rules)
        assert decision is Decision.DENY, (line, reason)
        assert "denied by rule 'write_file(secrets/**)'" in reason
    assert check(ws, "cd sub && echo k > key", **rules)[0] is Decision.ALLOW


def test_cd_stays_inside_the_workspace(ws: Path) -> None:
    """`cd elsewhere && git status` runs git on a repository (and its config) elsewhere."""
    assert check(ws, "cd sub && git status", allow=["exec_command(*)"])[0] is Decision.ALLOW
    for line in ("cd /tmp && git status", "cd && git status", "cd - && git status", "cd $D"):
        decision, reason = check(ws, line, allow=["exec_command(*)"])
        assert decision is Decision.ASK, reason
        assert check(ws, line, deny=[DENY_RM])[0] is Decision.DENY


# bash 5.2 does not evaluate these subscripts, other versions did or may: still unresolved
@pytest.mark.parametrize(
    "line",
    [
        "local 'a[$(rm -f victim)]'=1",
        "readonly 'a[$(rm -f victim)]'=1",
        "export 'a[$(rm -f victim)]'=1",
        "unset 'a[$(rm -f victim)]'",
        "mapfile -t 'a[$(rm -f victim)]' <<< x",
        "readarray 'a[$(rm -f victim)]' <<< x",
        "getopts a 'a[$(rm -f victim)]'",
        "wait -p 'a[$(rm -f victim)]'",
        "mapfile -C 'rm -f victim' -c 1 a <<< x",
        "enable -f ./x.so x",
        "alias ls='rm -f'",
        "declare -n r=PATH; r=/tmp",
    ],
)
def test_other_evaluated_names_are_unresolved(tmp_path: Path, line: str) -> None:
    decision, reason = check(tmp_path, line, deny=[DENY_RM])
    assert decision is Decision.DENY, reason


@pytest.mark.parametrize(
    "line",
    [
        "echo 'a\\\nb'",
        "git log \\\n  --oneline \\\n  -n 3",
        "i=0; (( i++ )); echo $i",
        "for i in 1 2; do echo $(( i * 2 )); done",
        "x=5; echo $(( x + 1 ))",
        'read -r line < notes.txt; echo "$line"',
        "declare -a arr=(1 2 3); echo ${arr[1]}",
    ],
)
def test_ordinary_shell_is_still_allowed_next_to_a_deny_rule(tmp_path: Path, line: str) -> None:
    assert check(tmp_path, line, deny=[DENY_RM])[0] is Decision.ALLOW
