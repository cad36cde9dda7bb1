"""Every simple command a shell line can run, found with tree-sitter-bash, for the permission rules.

Why a real parser: a deny rule `exec_command(rm *)` matched against the raw text (or a naive split
at `;`/`&&`) is bypassed by `/bin/rm`, `r''m`, `bash -c 'rm x'`, `env rm`, `{ rm x; }`, a
function body and so on. tree-sitter-bash was chosen over bashlex (bench/shell_policy.py): it
parses all of `case`, `[[ ]]` and `$(( ))`, which bashlex rejects, and costs ~25 us per typical
command against ~600 us (long commands: ~1.2 ms against ~23 ms).

`analyse(text)` walks the whole tree: pipelines, lists, subshells, groups, function bodies,
command and process substitutions, then unwraps what runs another command — shells with `-c`
(recursively, bounded), a here-doc or here-string fed to a shell, prefixes such as `env`,
`command`, `exec`, `nice`, `nohup`, `timeout`, `xargs`, `sudo`, `time`, `stdbuf`, `busybox` —
and yields each command both as written and by the basename of its path (`/bin/rm` -> `rm`).

What cannot be known without running it is reported as `Unresolved` rather than guessed: a
command name that is not a literal (a variable, a substitution, a glob or brace expansion),
`eval`, `source`/`.`, a shell reading commands from an unknown stdin, `find -exec/-delete`,
`git -c` settings that run programs (`alias.x=!cmd`, `core.pager`, ...), unparsable input.
Redirections that write (`>`, `>>`, `&>`, `>|`, `<>`) are listed with their target.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import tree_sitter
import tree_sitter_bash

MAX_DEPTH = 6
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})
_EXEMPT = re.compile(r"\A/dev/(?:null|stdout|stderr|fd/\d+)\Z")
_GLOB = re.compile(r"[*?\[]|\{[^}]*(?:,|\.\.)[^}]*\}")
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete"})
# git settings whose value is a program git runs (keys compared lower-cased)
_GIT_RUNS = re.compile(
    r"\A(?:core\.(?:pager|editor|sshcommand|fsmonitor|hookspath|gitproxy|askpass)|"
    r"sequence\.editor|credential\..*|gpg\..*program|diff\.external|pager\..*|"
    r".*\.(?:textconv|command|clean|smudge|process|driver|program|helper|cmd)|"
    r"uploadpack\.packobjectshook|include\..*|includeif\..*)\Z"
)


def _opts(names: str) -> frozenset[str]:
    return frozenset(names.split())


# prefix command -> (options that take a value, positionals skipped before the command)
_PREFIXES: dict[str, tuple[frozenset[str], int]] = {
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "xargs": (
        _opts(
            "-I -i -d -n -P -L -l -s -E -e -a --arg-file --delimiter --max-args --max-procs"
            " --max-lines --max-chars --eof --replace --process-slot-var"
        ),
        0,
    ),
    "sudo": (_opts("-u -g -h -p -C -D -r -t -U -T --user --group --host --prompt --chdir"), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "ionice": (frozenset({"-c", "-n", "--class", "--classdata"}), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset({"-c", "--cpu-list"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "busybox": (frozenset(), 0),
    "unbuffer": (frozenset(), 0),
    "caffeinate": (frozenset({"-t", "-w"}), 0),
    "strace": (frozenset({"-e", "-o", "-p", "-s", "-u", "-E"}), 0),
    "ltrace": (frozenset({"-e", "-o", "-p", "-s", "-u"}), 0),
    "flock": (frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), 1),
    "watch": (frozenset({"-n", "--interval", "-d"}), 0),
}
_SHELL_VALUE_OPTS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


@functools.cache
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """One simple command; `argv[0]` as written (a word whose value is unknown keeps its text)."""

    argv: tuple[str, ...]
    opaque: bool = False  # some argument's value depends on an expansion or substitution

    @property
    def name(self) -> str:
        return self.argv[0].rstrip("/").rsplit("/", 1)[-1] or self.argv[0]

    def forms(self) -> tuple[str, ...]:
        """What a rule pattern is matched against: by basename, and as written if different."""
        by_name = " ".join((self.name, *self.argv[1:]))
        written = " ".join(self.argv)
        return (by_name,) if written == by_name else (by_name, written)


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A part whose effect cannot be known without running it; `why` says what it is."""

    part: str
    why: str


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    commands: tuple[ShellCommand, ...]
    writes: tuple[str, ...]  # redirect targets (as written, `~` expanded), device sinks left out
    unresolved: tuple[Unresolved, ...]


@dataclass(frozen=True, slots=True)
class _Word:
    value: str | None  # None: depends on an expansion or substitution
    literal: bool  # a known value with no unquoted glob/brace expansion
    text: str

    @property
    def shown(self) -> str:
        return self.value if self.value is not None else self.text


@functools.lru_cache(maxsize=1024)
def analyse(script: str) -> ShellAnalysis:
    """All commands, writes and unresolvable parts of `script` (cached: called per rule)."""
    walker = _Walker()
    try:
        walker.script(script, 0)
    except RecursionError:  # thousands of nested groups: refuse rather than crash the call
        walker.unresolved.append(Unresolved(_short(script), "nesting too deep to analyse"))
    return ShellAnalysis(tuple(walker.commands), tuple(walker.writes), tuple(walker.unresolved))


@dataclass
class _Walker:
    commands: list[ShellCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)

    def _flag(self, part: str, why: str) -> None:
        self.unresolved.append(Unresolved(_short(part), why))

    def script(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self._flag(text, f"shell code nested deeper than {MAX_DEPTH} levels")
            return
        root = _parser().parse(text.encode("utf-8", "surrogateescape")).root_node
        if root.has_error:
            self._flag(text, "the shell parser cannot parse it")
        self._walk(root, depth)

    def _walk(self, node: tree_sitter.Node, depth: int) -> None:
        if not node.child_count:  # a token: nothing below it runs
            return
        kind = node.type
        if kind == "command":
            self._command(node, [], None, depth)
        elif kind == "redirected_statement":
            self._redirected(node, depth)
        elif kind in ("declaration_command", "unset_command"):
            words = [_word(c) for c in node.named_children if c.type != "variable_assignment"]
            self.commands.append(ShellCommand((_text(node.children[0]), *(w.shown for w in words))))
            for child in node.children:
                self._walk(child, depth)
        else:
            for child in node.children:
                self._walk(child, depth)

    def _redirected(self, node: tree_sitter.Node, depth: int) -> None:
        body = node.child_by_field_name("body")
        extra: list[tree_sitter.Node] = []
        stdin: str | None = None
        for red in node.children_by_field_name("redirect"):
            extra.extend(self._redirect(red, depth))
            if red.type == "heredoc_redirect":
                stdin = _heredoc_text(red)
            elif red.type == "herestring_redirect":
                stdin = _herestring_text(red)
        if body is None:
            return
        if body.type == "command":
            self._command(body, extra, stdin, depth)
        else:
            self._walk(body, depth)

    def _redirect(self, red: tree_sitter.Node, depth: int) -> list[tree_sitter.Node]:
        """Record a write; return the words tree-sitter hung on it that are really arguments."""
        for child in red.children:  # substitutions inside a target or here-doc still run
            self._walk(child, depth)
        if red.type != "file_redirect":
            return []
        dests = red.children_by_field_name("destination")
        ops = [c.type for c in red.children if not c.is_named]
        if not dests or not ops or ops[0] not in _WRITE_OPS:
            return dests[1:]
        target = _word(dests[0])
        if ops[0] == ">&" and (target.value == "-" or (target.value or "x").isdigit()):
            return dests[1:]
        if target.value is None:
            self._flag(_text(red), "a redirect target that is not a literal")
        elif not _EXEMPT.match(target.value):
            self.writes.append(str(Path(target.value).expanduser()))
        return dests[1:]

    def _command(
        self,
        node: tree_sitter.Node,
        extra: list[tree_sitter.Node],
        stdin: str | None,
        depth: int,
    ) -> None:
        name: tree_sitter.Node | None = None
        args: list[tree_sitter.Node] = []
        for i, child in enumerate(node.children):
            kind = child.type
            if kind == "file_redirect":
                extra.extend(self._redirect(child, depth))
                continue
            if kind == "herestring_redirect":
                stdin = _herestring_text(child)
            elif kind == "command_name":
                name = child
            elif node.field_name_for_child(i) == "argument":
                args.append(child)
            if child.child_count:
                self._walk(child, depth)
        if name is None:
            return
        words = [_word(n) for n in (name, *args, *extra)]
        self._simple(words, stdin, depth, node)

    def _simple(
        self, words: list[_Word], stdin: str | None, depth: int, src: tree_sitter.Node
    ) -> None:
        if depth > MAX_DEPTH:
            self._flag(_text(src), f"commands nested deeper than {MAX_DEPTH} levels")
            return
        head = words[0]
        if not head.literal or head.value is None:
            self._flag(
                _text(src), "a command name that is not a literal (variable, substitution, glob)"
            )
            return
        opaque = any(w.value is None for w in words[1:])
        cmd = ShellCommand(tuple(w.shown for w in words), opaque)
        self.commands.append(cmd)
        name, args = cmd.name, words[1:]
        if name in ("eval", "source", ".", "coproc"):  # the parser does not know coproc
            self._flag(_text(src), f"`{name}` runs code that is only known when it runs")
        elif name in SHELLS or (name == "su" and _has_opt(args, "-c")):
            self._shell(args, stdin, depth, src)
        elif name in ("trap", "alias"):
            for w in args:
                code = w.value.split("=", 1)[1] if name == "alias" and w.value else w.value
                if code is not None and not code.startswith("-"):
                    self.script(code, depth + 1)
                    if name == "trap":
                        break
        elif name == "find" and any(w.value in _FIND_RUNS for w in args):
            self._flag(_text(src), "`find -exec/-execdir/-ok/-delete` runs or deletes per file")
        elif name == "git":
            self._git(args, src)
        elif name in _PREFIXES:
            self._prefix(name, args, stdin, depth, src)

    def _prefix(
        self, name: str, args: list[_Word], stdin: str | None, depth: int, src: tree_sitter.Node
    ) -> None:
        takes_value, positionals = _PREFIXES[name]
        i = 0
        while i < len(args):
            v = args[i].value
            if v is None:
                self._flag(_text(src), f"an argument of `{name}` that is not a literal")
                return
            if name == "env" and v in ("-S", "--split-string") and i + 1 < len(args):
                code = args[i + 1].value
                if code is None:
                    self._flag(_text(src), "`env -S` with a string that is not a literal")
                else:
                    self.script(code, depth + 1)
                return
            if name == "env" and re.match(r"\A[A-Za-z_][A-Za-z0-9_]*=", v):
                i += 1
            elif v == "--":
                i += 1
                break
            elif v.startswith("-") and len(v) > 1:
                opt = v.split("=", 1)[0]
                i += 2 if opt in takes_value and "=" not in v and len(opt) == len(v) else 1
            else:
                break
        if name == "taskset" and _has_opt(args[:i], "-c", "--cpu-list", "-p", "--pid"):
            positionals = 0  # the CPU list was the option's value: no mask positional
        i += positionals
        if name == "flock" and i < len(args) and args[i].value in ("-c", "--command"):
            args = [_Word("sh", True, "sh"), *args[i:]]
            i = 0
        if name == "watch" and i < len(args):
            code = " ".join(w.shown for w in args[i:])
            self.script(code, depth + 1)
            return
        if i < len(args):
            self._simple(args[i:], stdin, depth + 1, src)
        elif name == "sudo" and _has_opt(args, "-s", "-i"):
            self._flag(_text(src), "`sudo -s/-i` starts a shell reading commands from stdin")

    def _shell(
        self, args: list[_Word], stdin: str | None, depth: int, src: tree_sitter.Node
    ) -> None:
        i, has_c = 0, False
        while i < len(args):
            v = args[i].value
            if v is None:
                break
            if v in _SHELL_VALUE_OPTS:
                i += 2
            elif v == "--":
                i += 1
                break
            elif v.startswith("--"):
                i += 1
            elif v[:1] in ("-", "+") and len(v) > 1:
                has_c = has_c or "c" in v[1:]
                i += 1
            else:
                break
        if has_c:
            code = args[i].value if i < len(args) else None
            if code is None:
                self._flag(_text(src), "a shell -c string that is not a literal")
            else:
                self.script(code, depth + 1)
        elif i >= len(args):  # no script file: commands come from stdin
            if stdin is None:
                self._flag(_text(src), "a shell reading commands from stdin")
            else:
                self.script(stdin, depth + 1)
        elif args[i].value is None:
            self._flag(_text(src), "a shell script path that is not a literal")

    def _git(self, args: list[_Word], src: tree_sitter.Node) -> None:
        for i, w in enumerate(args):
            v = w.value
            if v is None:
                continue
            if v.startswith("--config-env"):
                self._flag(_text(src), "`git --config-env` takes a setting from the environment")
            setting = None
            if v == "-c" and i + 1 < len(args):
                setting = args[i + 1].value
                if setting is None:
                    self._flag(_text(src), "a `git -c` setting that is not a literal")
            elif v.startswith("-c") and len(v) > 2:
                setting = v[2:]
            elif v.lower().startswith("alias.") and i + 1 < len(args):
                nxt = args[i + 1].value  # `git config alias.x '!cmd'`
                if nxt is None or nxt.lstrip().startswith("!"):
                    self._flag(_text(src), "a git alias that runs a shell command (`!`)")
            if setting is not None:
                key, _, value = setting.partition("=")
                key = key.lower()
                if key.startswith("alias.") and value.lstrip().startswith("!"):
                    self._flag(_text(src), "a git alias that runs a shell command (`!`)")
                elif _GIT_RUNS.match(key):
                    self._flag(_text(src), f"`git -c {key}` names a program git runs")


def _has_opt(args: list[_Word], *opts: str) -> bool:
    return any(w.value in opts for w in args)


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _short(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _word(node: tree_sitter.Node) -> _Word:
    """The value bash gives a word after quote removal; None where an expansion decides it."""
    text = _text(node)
    kind = node.type
    if kind == "command_name":
        inner = node.named_children
        return _word(inner[0]) if len(inner) == 1 else _Word(None, False, text)
    if kind in ("word", "number"):
        if "\\" not in text:
            return _Word(text, not _GLOB.search(text), text)
        value = re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL).replace("\\\n", "")
        return _Word(value, not _GLOB.search(text.replace("\\\\", "")), text)
    if kind == "raw_string":
        return _Word(text[1:-1], True, text)
    if kind == "ansi_c_string":
        return _Word(_ansi_c(text[2:-1]), True, text)
    if kind in ("string", "translated_string"):
        parts = list(node.named_children)
        if any(c.type != "string_content" for c in parts):
            return _Word(None, False, text)
        body = "".join(_text(c) for c in parts)
        return _Word(re.sub(r'\\([$`"\\])', r"\1", body).replace("\\\n", ""), True, text)
    if kind == "concatenation":
        pieces = [_word(c) for c in node.named_children]
        if any(p.value is None for p in pieces) or not pieces:
            return _Word(None, False, text)
        bare = "".join(_text(c) for c in node.named_children if c.type == "word")
        glob = bool(_GLOB.search(bare))
        value = "".join(p.value or "" for p in pieces)
        return _Word(value, all(p.literal for p in pieces) and not glob, text)
    return _Word(None, False, text)


_ANSI = dict(zip("ntrabfveE\\'\"?", "\n\t\r\a\b\f\v\x1b\x1b\\'\"?", strict=True))


def _ansi_c(body: str) -> str:
    """Decode the inside of `$'...'` (\\xHH, \\NNN octal, \\uHHHH, \\UHHHHHHHH, \\cX, \\n...)."""

    def one(m: re.Match[str]) -> str:
        s = m.group(1)
        if s[0] in "xuU":
            return chr(int(s[1:], 16))
        if s[0] in "01234567":
            return chr(int(s, 8) & 0xFF)
        if s[0] == "c":
            return chr(ord(s[1]) & 0x1F)
        return _ANSI.get(s, "\\" + s)

    pattern = r"\\(x[0-9A-Fa-f]{1,2}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}|[0-7]{1,3}|c.|.)"
    return re.sub(pattern, one, body, flags=re.DOTALL)


def _heredoc_text(red: tree_sitter.Node) -> str | None:
    for child in red.children:
        if child.type == "heredoc_body":
            return _text(child)
    return ""


def _herestring_text(red: tree_sitter.Node) -> str | None:
    for child in red.named_children:
        return _word(child).value
    return None
