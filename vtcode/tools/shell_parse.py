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

from vtcode.tools.shell_env import VarFlow, screen_builtin
from vtcode.tools.shell_facts import Findings, with_moves
from vtcode.tools.shell_programs import KNOWN_PROGRAMS, screen_program
from vtcode.tools.shell_words import Word as _Word
from vtcode.tools.shell_words import before_dashes, join_continuations, may_be_option
from vtcode.tools.shell_words import heredoc_text as _heredoc_text
from vtcode.tools.shell_words import herestring_text as _herestring_text
from vtcode.tools.shell_words import short as _short
from vtcode.tools.shell_words import text_of as _text
from vtcode.tools.shell_words import word_of as _word

MAX_DEPTH = 6
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "rbash"})
_WRITE_OPS = frozenset({">", ">>", "&>", "&>>", ">|", "<>", ">&"})
_EXEMPT = re.compile(r"\A/dev/(?:null|stdout|stderr|fd/\d+)\Z")


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
_VARIABLE_NODES = frozenset(
    [
        "variable_assignment",
        "subscript",
        "arithmetic_expansion",
        "c_style_for_statement",
        "compound_statement",
        "expansion",
        "binary_expression",
        "unary_expression",
        "for_statement",
    ]
)
_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
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
    writes: tuple[str, ...]  # redirect and option targets (as written, `~` expanded), no devices
    unresolved: tuple[Unresolved, ...]
    # parts no allow rule covers that a deny rule need not fear (`X=1 git log`: X could be
    # anything git reads); see vtcode.tools.shell_env
    uncovered: tuple[Unresolved, ...] = ()
    # folders a command works in that must lie inside the workspace (`git -C`, `cd`)
    confined: tuple[tuple[str, Unresolved], ...] = ()


@functools.lru_cache(maxsize=1024)
def analyse(script: str) -> ShellAnalysis:
    """All commands, writes and unresolvable parts of `script` (cached: called per rule)."""
    walker = _Walker()
    try:
        walker.script(script, 0)
    except RecursionError:  # thousands of nested groups: refuse rather than crash the call
        walker.unresolved.append(Unresolved(_short(script), "nesting too deep to analyse"))
    walker.vars.finish()
    return ShellAnalysis(
        tuple(walker.commands),
        tuple(with_moves(walker.writes, walker.moves)),
        (*walker.unresolved, *(Unresolved(_short(p), w) for p, w in walker.vars.unresolved)),
        tuple(dict.fromkeys(Unresolved(_short(p), w) for p, w in walker.vars.uncovered)),
        tuple(walker.confined),
    )


@dataclass
class _Walker:
    commands: list[ShellCommand] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    confined: list[tuple[str, Unresolved]] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)  # `cd`/`pushd`/`env -C` folders, relative
    vars: VarFlow = field(default_factory=VarFlow)

    def _flag(self, part: str, why: str) -> None:
        self.unresolved.append(Unresolved(_short(part), why))

    def script(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self._flag(text, f"shell code nested deeper than {MAX_DEPTH} levels")
            return
        source = text.encode("utf-8", "surrogateescape")
        root = _parser().parse(source).root_node
        joined = join_continuations(source, root) if b"\\\n" in source else source
        if joined != source:  # bash joins `r\<newline>m`: walk what bash runs, and the text too
            self._walk_root(_parser().parse(joined).root_node, text, depth)
        self._walk_root(root, text, depth)

    def _walk_root(self, root: tree_sitter.Node, text: str, depth: int) -> None:
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
            self._declaration(node, depth)
        else:
            self._variables(node)
            for child in node.children:
                self._walk(child, depth)

    def _variables(self, node: tree_sitter.Node) -> None:
        """Assignments and arithmetic evaluations (see `VarFlow`) the parser shows as nodes."""
        kind = node.type
        if kind not in _VARIABLE_NODES:
            return
        part = _text(node)
        if kind == "variable_assignment":
            target = node.child_by_field_name("name")
            value = node.child_by_field_name("value")
            self.vars.assign(
                _text(target) if target is not None else part.split("=", 1)[0],
                None if value is None else _word(value).value,
                part,
                text=None if value is None else _text(value),
            )
        elif kind == "subscript":
            index = node.child_by_field_name("index")
            self.vars.arithmetic(_text(index) if index is not None else part, part)
        elif kind in ("arithmetic_expansion", "c_style_for_statement") or (
            kind == "compound_statement" and node.children[0].type == "(("
        ):
            body = [c for c in node.named_children if c.type != "do_group"]
            self.vars.arithmetic(" ".join(_text(c) for c in body), part)
        elif kind == "expansion":
            inner = part[2:-1]
            if inner.startswith("!") or re.match(r"\A\w+:(?![-=+?])", inner):
                self.vars.arithmetic(inner.lstrip("!"), part)
            elif m := re.match(r"\A([A-Za-z_]\w*(?:\[[^\]]*\])?):?=", inner):  # ${X:=v}
                self.vars.assign(m.group(1), None, part, text=inner[m.end() :])
        elif kind == "binary_expression" and any(
            c.type == "test_operator" and _text(c) in _ARITH_TESTS for c in node.children
        ):
            self.vars.arithmetic(part, part)
        elif kind == "unary_expression" and _text(node.children[0]) in ("-v", "-R"):
            for operand in node.named_children[1:]:
                self.vars.operand(_word(operand).value, part)
        elif kind == "for_statement":
            names = [c for c in node.children if c.type == "variable_name"]
            values = [_word(c).value for c in node.named_children[1:] if c.type != "do_group"]
            known = all(v is not None and "$" not in v and "`" not in v for v in values)
            for name in names[:1]:
                self.vars.assign(_text(name), "0" if known else None, part)

    def _declaration(self, node: tree_sitter.Node, depth: int) -> None:
        """`declare`/`typeset`/`local`/`export`/`readonly`/`unset`: a quoted operand is re-read
        as an assignment (`declare -a 'a=([0]=$(cmd))'` runs cmd), `-n` makes a name stand for
        another, `-i` makes later assignments arithmetic."""
        part = _text(node)
        words = [_word(c) for c in node.named_children if c.type != "variable_assignment"]
        self.commands.append(ShellCommand((_text(node.children[0]), *(w.shown for w in words))))
        flags = "".join(w.value[1:] for w in words if w.value and w.value[:1] in "-+")
        if "n" in flags:
            self._flag(part, "a name reference (`declare -n`) makes one name stand for another")
        for child in node.named_children:
            kind = child.type
            if kind in ("variable_name", "variable_assignment"):
                if "i" in flags:
                    target = child.child_by_field_name("name") or child
                    self.vars.integer.add(_text(target).split("[", 1)[0])
                continue  # an assignment node is screened when it is walked
            if kind == "word" and _text(child).startswith(("-", "+")):
                continue
            operand = _word(child)
            value = operand.value if operand.literal else None
            if value is None:  # `export {PATH,X}=/tmp` and `P[A]TH=x` expand to names
                self._flag(part, "a declaration operand only known at run time (or expanded)")
            elif "=" in value:
                key, _, rhs = value.partition("=")
                self.vars.assign(key, rhs, part, code_value=kind != "word")
            else:
                self.vars.name(value, part)
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
        elif name in _PREFIXES:
            self._prefix(name, args, stdin, depth, src)
        else:
            names = [w.value if w.literal else None for w in args]  # `read P[A]TH` globs
            self._apply(screen_builtin(name, names, self.vars, _text(src)), src)
        self._apply(screen_program(name, [w.value for w in args]), src)
        if name in KNOWN_PROGRAMS and any(may_be_option(w) for w in before_dashes(args)):
            self._flag(
                _text(src),
                f"a glob or brace expansion of `{name}` could expand to an option (a file named "
                "`--upload-pack=...`); write `./*` or put it after `--`",
            )

    def _apply(self, found: Findings, src: tree_sitter.Node) -> None:
        if not (found.unresolved or found.writes or found.confined or found.moves):
            return
        part = _text(src)
        for why in found.unresolved:
            self._flag(part, why)
        for target in found.writes:
            if target and not _EXEMPT.match(target):
                self.writes.append(str(Path(target).expanduser()))
        self.moves += [str(Path(m).expanduser()) for m in found.moves]
        for folder, why in found.confined:
            self.confined.append((str(Path(folder).expanduser()), Unresolved(_short(part), why)))

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
            if name == "env" and "=" in v and not v.startswith("-"):
                key, _, value = v.partition("=")
                self.vars.assign(key, value, _text(src))
                i += 1
            elif name == "env" and v.split("=", 1)[0] in ("-C", "--chdir") and i + 1 < len(args):
                folder = v.split("=", 1)[1] if "=" in v else args[i + 1].value
                moved = folder or "~"
                self._apply(
                    Findings(confined=[(moved, "`env -C` runs elsewhere")], moves=[moved]), src
                )
                i += 1 if "=" in v else 2
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
            stdin_words = [_Word(None, False, "<words from stdin>")] if name == "xargs" else []
            self._simple([*args[i:], *stdin_words], stdin, depth + 1, src)
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
                if v in ("--rcfile", "--init-file"):
                    self._flag(_text(src), f"`{v}` makes the shell run a file's code first")
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


def _has_opt(args: list[_Word], *opts: str) -> bool:
    return any(w.value in opts for w in args)
