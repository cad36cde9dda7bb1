"""What a `git` command line can do beyond its subcommand, for the shell policy (issue 23.4).

An allow rule `exec_command(git *)` means "let the model use git", not "let it run any program
git can be told to run". Each case below makes the command unresolved (never covered by an allow
rule, denied when a deny rule names exec_command), and the tool failure says which:

- options that name a program: `--upload-pack`, `--receive-pack`, `--exec` (any subcommand, any
  unambiguous abbreviation, as git's parse-options accepts), `clone`/`ls-remote -u`, `rebase
  -x/--exec` and `-i` (the editor), `grep -O`, the `ext::`/`fd::` transports anywhere;
- subcommands that run programs by design: `difftool`, `mergetool`, `filter-branch`, `bisect
  run`, `submodule foreach`, `daemon`, `instaweb`, `send-email`, `imap-send`, `credential*`,
  `maintenance`, `hook`, `remote-*`, the pack/archive servers, `p4`, `svn`, `cvs*`;
- settings: `-c`/`clone -c` and `git config` writes of any key outside a short harmless list (a
  repository setting can name a program a later allowed `git status` runs: `core.fsmonitor`),
  `--config-env`, `--exec-path=`, `init`/`clone --template` (hooks are copied from it);
- an argument only known at run time (it could be any of these options).

`-C`, `--git-dir` and `--work-tree` must stay inside the workspace (a repository elsewhere brings
its own config). Option-form writes are reported as writes, judged like redirections:
`--output`, `format-patch -o`, `archive -o`, `bundle create`, `worktree add/move`, `init DIR`,
`clone URL DIR`, `submodule add URL DIR`, `--separate-git-dir`, `checkout-index --prefix`,
`--export-marks`, `bugreport`/`diagnose -o`, `merge-file`, `config --file`; `config
--global/--system` is unresolved.
"""

from __future__ import annotations

import posixpath
import re

from vtcode.tools.shell_facts import Findings, Values, abbreviates, option_value, short_value

_RUNS = re.compile(
    r"\A(?:difftool|mergetool|filter-branch|filter-repo|daemon|instaweb|send-email|imap-send|"
    r"credential.*|maintenance|hook|remote-.*|upload-pack|receive-pack|upload-archive|shell|"
    r"p4|svn|cvs.*|archimport|quiltimport|web--browse|fsmonitor--daemon)\Z"
)
# settings a model may set (-c, git config, clone -c): none of them names a program or a path
HARMLESS_KEY = re.compile(
    r"\A(?:color\..*|advice\..*|column\..*|i18n\..*|user\.(?:name|email|useconfigonly)|"
    r"core\.(?:quotepath|abbrev|autocrlf|safecrlf|filemode|ignorecase|eol)|init\.defaultbranch|"
    r"log\.(?:date|decorate|abbrevcommit|follow)|format\.pretty|pull\.(?:rebase|ff)|"
    r"diff\.(?:renames|noprefix|mnemonicprefix|algorithm|colormoved)|merge\.conflictstyle|"
    r"push\.(?:default|autosetupremote)|fetch\.prune|rebase\.(?:autosquash|autostash)|"
    r"commit\.verbose|status\.(?:short|branch|showuntrackedfiles)|gc\.auto|"
    r"branch\.[^.]+\.(?:remote|merge|rebase|description))\Z"
)
_GLOBAL_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_CONFIG_READ = (
    "get",
    "get-all",
    "get-regexp",
    "get-urlmatch",
    "get-color",
    "get-colorbool",
    "list",
)
_CONFIG_WRITE = (
    "add", "unset", "unset-all", "replace-all", "rename-section", "remove-section", "edit",
)  # fmt: skip
_CONFIG_VALUE = ("file", "blob", "type", "default", "comment", "value")
_CLONE_VALUE = frozenset(
    [
        "-o",
        "-b",
        "-u",
        "-j",
        "origin",
        "branch",
        "depth",
        "reference",
        "reference-if-able",
        "shallow-since",
        "shallow-exclude",
        "jobs",
        "filter",
        "server-option",
        "bundle-uri",
        "ref-format",
        "upload-pack",
        "separate-git-dir",
    ]
)
_TRANSPORT = re.compile(r"(?:\A|[^A-Za-z0-9])(?:ext|fd)::", re.IGNORECASE)


def screen_git(args: Values) -> Findings:
    """Findings for `git ARGS` (see the module docstring)."""
    out = Findings()
    if any(a is None for a in args):
        out.runs(
            "an argument of `git` only known at run time (it could be an option running a program)"
        )
        return out
    words = [a for a in args if a is not None]
    if any(_TRANSPORT.search(w) for w in words):
        out.runs("the `ext::`/`fd::` transport runs a command")
    base, i = _global_options(words, out)
    if i >= len(words):
        return out
    sub, rest = words[i], words[i + 1 :]
    out.writes[:] = [_under(base, w) for w in out.writes]
    found = Findings()
    _subcommand(sub, rest, found)
    out.unresolved += found.unresolved
    out.writes += [_under(base, w) for w in found.writes]
    return out


def _under(base: str | None, path: str) -> str:
    return path if base is None or path.startswith(("/", "~")) else posixpath.join(base, path)


def _global_options(words: list[str], out: Findings) -> tuple[str | None, int]:
    """Skip git's own options; returns the `-C` folder (relative writes land there) and the
    subcommand's index."""
    base: str | None = None
    i = 0
    while i < len(words) and words[i].startswith("-"):
        w = words[i]
        opt = w.split("=", 1)[0]
        value = w.split("=", 1)[1] if "=" in w and opt.startswith("--") else None
        if value is None and w in _GLOBAL_VALUE:
            value = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        elif w.startswith("-c") and len(w) > 2:
            opt, value = "-c", w[2:]
        i += 1
        if opt == "-C" and value is not None:
            base = _under(base, value)
            out.confined.append((base, "`git -C` works on a repository elsewhere (its own config)"))
        elif opt in ("--git-dir", "--work-tree") and value is not None:
            out.confined.append((_under(base, value), f"`git {opt}` names a repository elsewhere"))
        elif opt == "-c":
            _setting(value or "", "git -c", out)
        elif opt == "--config-env":
            out.runs("`git --config-env` takes a setting from the environment")
        elif opt == "--exec-path" and value is not None:
            out.runs("`git --exec-path=` runs git's commands from another folder")
    return base, i


def _setting(setting: str, where: str, out: Findings) -> None:
    key = setting.partition("=")[0].lower()
    if not HARMLESS_KEY.match(key):
        out.runs(f"`{where} {key}` may name a program git runs (only harmless keys are covered)")


def _subcommand(sub: str, args: list[str], out: Findings) -> None:
    if _RUNS.match(sub):
        out.runs(f"`git {sub}` runs other programs")
    for j, a in enumerate(args):
        names = ("upload-pack", "receive-pack", "exec", "config-env")
        name = abbreviates(a, *names, *(("template",) if sub in ("init", "clone") else ()))
        if name is not None and (name != "exec" or sub != "rebase"):
            out.runs(f"`git {sub} --{name}` names a program or hooks git runs")
        elif abbreviates(a, "output", "export-marks", "separate-git-dir"):
            target, _ = option_value(args, j)
            out.writes.append(target or "")
    positionals = [a for a in args if not a.startswith("-")]
    bundles = [a for a in args if a.startswith("-") and not a.startswith("--")]
    if sub in ("clone", "ls-remote") and any("u" in b for b in bundles):
        out.runs(f"`git {sub} -u` names the program run on the remote side")
    if sub == "clone":
        _clone(args, out)
    elif sub == "rebase":
        if any(abbreviates(a, "exec", "interactive", "edit-todo") for a in args) or any(
            set(b[1:]) & {"x", "i"} for b in bundles
        ):
            out.runs("`git rebase --exec/-x/-i` runs a command or the editor")
    elif sub == "bisect" and positionals[:1] == ["run"]:
        out.runs("`git bisect run` runs a command")
    elif sub == "submodule":
        if "foreach" in positionals:
            out.runs("`git submodule foreach` runs a command")
        elif positionals[:1] == ["add"]:
            _after_values(args, {"-b", "--branch", "--name", "--reference", "--depth"}, 2, out)
    elif sub == "grep" and (
        any(abbreviates(a, "open-files-in-pager") for a in args) or any("O" in b for b in bundles)
    ):
        out.runs("`git grep -O` runs a pager program")
    elif sub == "config":
        _config(args, out)
    elif sub in ("format-patch", "archive", "bugreport", "diagnose"):
        _short_write(args, "o", out)
        for j, a in enumerate(args):
            if abbreviates(a, "output-directory"):
                out.writes.append(option_value(args, j)[0] or "")
    elif sub == "bundle" and positionals[:1] == ["create"] and len(positionals) > 1:
        out.writes.append(positionals[1])
    elif sub == "worktree" and positionals[:1] in (["add"], ["move"]):
        _worktree(positionals[0], args, out)
    elif sub == "init" and positionals:
        out.writes.append(positionals[-1])
    elif sub == "checkout-index":
        out.writes += [a.split("=", 1)[1] for a in args if a.startswith("--prefix=")]
    elif sub == "apply" and any(abbreviates(a, "unsafe-paths") for a in args):
        out.runs("`git apply --unsafe-paths` writes outside the repository")
    elif sub == "merge-file" and positionals and not {"-p", "--stdout"} & set(args):
        out.writes.append(positionals[0])


def _after_values(args: list[str], takes_value: set[str], index: int, out: Findings) -> None:
    """Write the positional at `index` (options and their values skipped)."""
    positionals: list[str] = []
    j = 0
    while j < len(args):
        if args[j] in takes_value:
            j += 2
            continue
        if not args[j].startswith("-"):
            positionals.append(args[j])
        j += 1
    if len(positionals) > index:
        out.writes.append(positionals[index])


def _short_write(args: list[str], letter: str, out: Findings) -> None:
    for j in range(len(args)):
        found = short_value(args, j, letter)
        if found is not None:
            out.writes.append(found[0] or "")


def _clone(args: list[str], out: Findings) -> None:
    positionals: list[str] = []
    j = 0
    while j < len(args):
        a = args[j]
        if a == "-c" or a == "--config":
            _setting(args[j + 1] if j + 1 < len(args) else "", "git clone -c", out)
            j += 2
            continue
        if a.startswith("-c") or abbreviates(a, "config") == "config":
            _setting(a[2:] if a[1] == "c" else a.partition("=")[2], "git clone -c", out)
        elif a in _CLONE_VALUE or (a.startswith("--") and "=" not in a and a[2:] in _CLONE_VALUE):
            j += 1
        elif not a.startswith("-"):
            positionals.append(a)
        j += 1
    if len(positionals) >= 2:
        out.writes.append(positionals[1])


def _worktree(action: str, args: list[str], out: Findings) -> None:
    rest = args[args.index(action) + 1 :]
    positionals: list[str] = []
    j = 0
    while j < len(rest):
        a = rest[j]
        if a in ("-b", "-B", "--reason", "--orphan") and j + 1 < len(rest):
            j += 2
            continue
        if not a.startswith("-"):
            positionals.append(a)
        j += 1
    index = 0 if action == "add" else 1
    if len(positionals) > index:
        out.writes.append(positionals[index])


def _config(args: list[str], out: Findings) -> None:
    """`git config` reads are fine; a write is covered only for a harmless key in the repository's
    own config (`--file PATH` is a write of PATH; `--global`/`--system` are unresolved)."""
    first = args[0] if args else ""
    opts = [a for a in args if a.startswith("-")]
    if first in ("get", "list") or (
        any(abbreviates(o, *_CONFIG_READ) or o in ("-l", "--list") for o in opts)
        and not any(abbreviates(o, *_CONFIG_WRITE) for o in opts)
    ):
        return
    positionals: list[str] = []
    j = 0
    while j < len(args):
        a = args[j]
        name = abbreviates(a, *_CONFIG_VALUE)
        if a == "-f" or name == "file":
            target: str | None = (args[j + 1 : j + 2] or [""])[0]
            j += 2
            if a != "-f":
                target, j = option_value(args, j - 2)
            out.writes.append(target or "")
            continue
        if name is not None:
            j = option_value(args, j)[1]
            continue
        if abbreviates(a, "global", "system"):
            out.runs("`git config --global/--system` writes the user's or machine's git config")
        if abbreviates(a, "rename-section", "remove-section", "edit") or a == "-e":
            out.runs("`git config` edits whole sections or runs the editor")
        if not a.startswith("-"):
            positionals.append(a)
        j += 1
    if first in ("set", "unset"):
        if len(positionals) > 1:
            _setting(positionals[1], "git config", out)
    elif first in ("rename-section", "remove-section", "edit"):
        out.runs(f"`git config {first}` changes whole sections or runs the editor")
    elif len(positionals) >= 2 or (
        positionals and any(abbreviates(o, *_CONFIG_WRITE) for o in opts)
    ):
        _setting(positionals[0], "git config", out)
